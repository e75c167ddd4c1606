#!/usr/bin/env python3
"""Peers for tools/changes_bench.sh.

  changes_peer.py catchup DB N     rows with rowid > N, in rowid order, as JSON Lines
                                   shaped like `healthledger changes --json` lines
  changes_peer.py latency BIN LEDGER COMMITS
                                   runs `BIN --ledger LEDGER --json changes stepCount
                                   --owner --follow`, then COMMITS saves (one process
                                   each); prints the median and 99th percentile of the
                                   time from each save process's exit (its commit is
                                   durable before it exits: a lower bound) and from its
                                   start (an upper bound) to the follower's line.
"""
import json
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

COLUMNS = ("uuid", "type", "kind", "value", "unit", "start", "end", "source")


def number(v):
    return int(v) if float(v).is_integer() and abs(v) < 1e15 else v


def catchup(path, after):
    db = sqlite3.connect(path)
    write = sys.stdout.write
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    for row in db.execute("SELECT uuid, type, kind, value, unit, start, end, source FROM samples WHERE rowid > ?"
                          " ORDER BY rowid", (after,)):
        o = dict(zip(COLUMNS, row))
        o["value"] = number(o["value"])
        write('{"change":"added","sample":' + dumps(o) + "}\n")
    sys.stdout.flush()


def latency(binary, ledger, commits):
    follower = subprocess.Popen([binary, "--ledger", ledger, "--json", "changes", "stepCount", "--owner", "--follow"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
    seen = {}
    cond = threading.Condition()

    def read():
        for line in follower.stdout:
            t = time.monotonic()
            if line.startswith(b'{"change":"added"'):
                uuid = json.loads(line)["sample"]["uuid"]
                with cond:
                    seen[uuid] = t
                    cond.notify_all()
    threading.Thread(target=read, daemon=True).start()
    from_exit, from_start = [], []
    for i in range(commits):
        start = time.monotonic()
        out = subprocess.run([binary, "--ledger", ledger, "save", "--app", "com.example.bench", "--type", "stepCount",
                              "--value", str(i + 1), "--unit", "count"], capture_output=True, check=True).stdout
        end = time.monotonic()
        uuid = out.decode().strip()
        with cond:
            if not cond.wait_for(lambda: uuid in seen, timeout=60):
                sys.exit("follower did not print %s within 60 s" % uuid)
            t = seen[uuid]
        from_exit.append(max(0.0, t - end))
        from_start.append(t - start)
    follower.terminate()
    follower.wait()

    def p(xs, q):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))]
    print("commits %d  from save exit: median %.2f ms p99 %.2f ms  from save start: median %.2f ms p99 %.2f ms" % (
        commits, 1000 * statistics.median(from_exit), 1000 * p(from_exit, 0.99),
        1000 * statistics.median(from_start), 1000 * p(from_start, 0.99)))


if __name__ == "__main__":
    if sys.argv[1] == "catchup":
        catchup(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "latency":
        latency(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
