#!/usr/bin/env python3
"""kill -9 `healthledger serve` under write load, again and again (issue 30).

Each round starts the server on a free loopback port, lets 64 clients save samples
one per request (each answer `201 {"uuids":[…]}` acknowledges a durable sample) —
one client in eight reads the latest sample instead (each answered read was
recorded durably in the access log first) — kills the server with SIGKILL at a
random moment, and restarts it for the next round. At the end every UUID
acknowledged with 201 must be in the ledger (`query --owner`), the access log must
hold at least as many reads as were answered, and `verify` must pass — the log, the
projections and the access log.

Usage: tools/serve_fault_trial.py [--bin .build/release/healthledger] [--rounds 20]
                                  [--clients 64] [--seed 1]
"""
import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time


def run(bin_path, ledger, *args, check=True):
    r = subprocess.run([bin_path, "--ledger", ledger, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit(f"fault trial: {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r


def start(bin_path, ledger):
    p = subprocess.Popen([bin_path, "--ledger", ledger, "serve", "--listen", "127.0.0.1:0", "--rate", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    if not line.startswith("listening on "):
        sys.exit(f"fault trial: serve did not start: {line!r}")
    host, port = line.strip()[len("listening on "):].rsplit(":", 1)
    return p, host, int(port)


def reader(host, port, token, answered, stop):
    try:
        conn = http.client.HTTPConnection(host, port, timeout=10)
        while not stop.is_set():
            conn.request("GET", "/v1/latest/bodyMass", headers={"Authorization": "Bearer " + token})
            r = conn.getresponse()
            r.read()
            if r.status in (200, 404):
                answered.append(1)
    except (OSError, http.client.HTTPException):
        pass  # the server was killed


def writer(host, port, token, acked, stop, n0):
    n = n0
    try:
        conn = http.client.HTTPConnection(host, port, timeout=10)
        while not stop.is_set():
            n += 1
            body = json.dumps({"type": "bodyMass", "value": 60 + n % 400 / 10, "unit": "kg",
                               "start": f"2026-01-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z"})
            conn.request("POST", "/v1/samples", body=body,
                         headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
            r = conn.getresponse()
            payload = r.read()
            if r.status == 201:
                acked.extend(json.loads(payload)["uuids"])
    except (OSError, http.client.HTTPException):
        pass  # the server was killed: what it acknowledged before is what counts


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", ".build", "release", "healthledger"))
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="serve-fault-")
    ledger = os.path.join(work, "trial.ledger")
    run(a.bin, ledger, "init")
    run(a.bin, ledger, "app", "register", "--app", "com.example.trial", "--name", "Trial", "--share-purpose", "saves",
        "--read-purpose", "reads")
    run(a.bin, ledger, "--app", "com.example.trial", "request", "--share", "bodyMass", "--read", "bodyMass")
    run(a.bin, ledger, "authorize", "--app", "com.example.trial", "--share", "bodyMass", "--read", "bodyMass")
    token = run(a.bin, ledger, "token", "create", "--app", "com.example.trial").stdout.strip()
    acked = []
    answered = []
    started = time.time()
    for round_ in range(a.rounds):
        server, host, port = start(a.bin, ledger)
        stop = threading.Event()
        threads = [threading.Thread(target=reader, args=(host, port, token, answered, stop)) if i % 8 == 7 else
                   threading.Thread(target=writer, args=(host, port, token, acked, stop, (round_ * a.clients + i) * 1_000_000))
                   for i in range(a.clients)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.3, 2.0))
        server.send_signal(signal.SIGKILL)
        server.wait()
        stop.set()
        for t in threads:
            t.join(timeout=30)
        print(f"round {round_ + 1}: killed after {len(acked)} saves acknowledged and {len(answered)} reads answered in all",
              flush=True)
    # Every acknowledged UUID is there, after the last kill (the next open recovers).
    r = run(a.bin, ledger, "--json", "query", "--owner", "bodyMass")
    stored = {json.loads(l)["uuid"] for l in r.stdout.splitlines() if l.strip()}
    missing = [u for u in acked if u not in stored]
    v = run(a.bin, ledger, "verify", check=False)
    recorded = json.loads(run(a.bin, ledger, "--json", "verify", check=False).stdout or "{}").get("accessLogEntries", -1)
    print(f"{a.rounds} kill -9 under {a.clients}-client load in {time.time() - started:.0f} s: "
          f"{len(acked)} samples acknowledged (201), {len(stored)} stored, {len(missing)} missing; "
          f"{len(answered)} reads answered, {recorded} recorded in the access log; verify exit {v.returncode}")
    if missing or v.returncode != 0 or len(set(acked)) != len(acked) or recorded < len(answered):
        print(v.stdout, v.stderr, file=sys.stderr)
        sys.exit(1)
    print("OK: nothing acknowledged was lost; the ledger and its access log verify")


if __name__ == "__main__":
    main()
