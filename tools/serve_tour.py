#!/usr/bin/env python3
"""A client's tour of `healthledger serve`, with Python's http.client only.

Every route, and every refusal a client can meet: no token, a revoked token on a
kept-alive connection, another app's sample, an Apple-only type, a body too large,
smuggled framing, a slow client; the long poll answering within 100 ms of a commit
made by another client; a Health Auto Export push twice. Exits 0 when every check
holds, 1 naming the first that does not.

Usage: serve_tour.py --url http://127.0.0.1:PORT --app-token T --other-token T
                     --owner-token T [--max-body N] [--head-timeout S]
The app (com.example.scale in the test) may share and read bodyMass, heartRate,
stepCount; the other app may share bodyMass; the ledger is otherwise empty.
"""
import argparse
import http.client
import json
import socket
import sys
import threading
import time
import urllib.parse

checks = 0


def check(condition, what):
    global checks
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    checks += 1


class Client:
    def __init__(self, host, port, token):
        self.host, self.port, self.token = host, port, token
        self.conn = http.client.HTTPConnection(host, port, timeout=30)

    def call(self, method, path, body=None, token=None, content_type="application/json"):
        headers = {}
        token = self.token if token is None else token
        if token:
            headers["Authorization"] = "Bearer " + token
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            headers["Content-Type"] = content_type
        self.conn.request(method, path, body=data, headers=headers)
        r = self.conn.getresponse()
        payload = r.read()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), payload

    def json(self, *args, **kwargs):
        status, headers, payload = self.call(*args, **kwargs)
        return status, (json.loads(payload) if payload.strip() else None), headers

    def lines(self, *args, **kwargs):
        status, headers, payload = self.call(*args, **kwargs)
        return status, [json.loads(l) for l in payload.decode().splitlines() if l.strip()]


def weight(kg, day, uuid=None):
    s = {"type": "bodyMass", "value": kg, "unit": "kg", "start": f"2026-03-{day:02d}T08:00:00Z"}
    if uuid:
        s["uuid"] = uuid
    return s


def raw_exchange(host, port, data, wait=5):
    """Sends bytes on a fresh socket; returns (status line, whether the server closed)."""
    s = socket.create_connection((host, port), timeout=wait)
    s.sendall(data)
    received = b""
    closed = False
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            received += chunk
    except socket.timeout:
        pass
    s.close()
    return received.split(b"\r\n", 1)[0].decode(), closed, received


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--app-token", required=True)
    p.add_argument("--other-token", required=True)
    p.add_argument("--owner-token", required=True)
    p.add_argument("--max-body", type=int, default=16 << 20)
    p.add_argument("--head-timeout", type=float, default=10)
    a = p.parse_args()
    u = urllib.parse.urlparse(a.url)
    host, port = u.hostname, u.port
    app, other, owner = Client(host, port, a.app_token), Client(host, port, a.other_token), Client(host, port, a.owner_token)

    # The document, and nothing else without a token.
    status, doc, _ = app.json("GET", "/openapi.json", token="")
    check(status == 200 and doc["openapi"] == "3.1.0" and "/v1/samples/{type}" in doc["paths"], "openapi.json")
    status, problem, headers = app.json("GET", "/v1/latest/bodyMass", token="")
    check(status == 401 and problem["code"] == "unauthenticated" and headers["content-type"] == "application/problem+json",
          f"no token: {status} {problem}")
    status, problem, _ = app.json("GET", "/v1/latest/bodyMass", token="hl_" + "0" * 16 + "_" + "A" * 43)
    check(status == 401 and problem["detail"] == "unknown token", f"unknown token: {problem}")

    # Saves: one, a batch, a repeat refused by rule E3, an Apple-only type.
    status, body, _ = app.json("POST", "/v1/samples", weight(70.5, 1))
    check(status == 201 and len(body["uuids"]) == 1, f"save one: {status} {body}")
    status, body, _ = app.json("POST", "/v1/samples", [weight(71, 2), weight(72, 3, "00000000-0000-4000-8000-0000000000c1")])
    check(status == 201 and body["uuids"][1] == "00000000-0000-4000-8000-0000000000C1", f"save two: {status} {body}")
    status, problem, _ = app.json("POST", "/v1/samples", weight(73, 4, "00000000-0000-4000-8000-0000000000c1"))
    check(status == 409 and problem["rule"] == "E3" and problem["code"] == "duplicateUUID", f"repeat: {status} {problem}")
    status, problem, _ = app.json("POST", "/v1/samples",
                                  {"type": "appleExerciseTime", "value": 30, "unit": "min", "start": "2026-03-01T08:00:00Z"})
    check(status == 403 and problem["rule"] == "E6", f"Apple-only type: {status} {problem}")

    # Queries: the where grammar, the paging cursor.
    status, rows = app.lines("GET", "/v1/samples/bodyMass?ascending=true")
    check(status == 200 and [r["value"] for r in rows] == [70.5, 71, 72], f"query: {rows}")
    status, rows = app.lines("GET", "/v1/samples/bodyMass?" + urllib.parse.urlencode({"where": "value >= 71 kg", "limit": 1}))
    check(status == 200 and rows[0]["value"] == 72 and "next" in rows[-1], f"where + limit: {rows}")
    status, rest = app.lines("GET", "/v1/samples/bodyMass?" + urllib.parse.urlencode({"where": "value >= 71 kg", "after": rows[-1]["next"]}))
    check([r["value"] for r in rest] == [71], f"next page: {rest}")
    status, sample, _ = app.json("GET", "/v1/latest/bodyMass")
    check(status == 200 and sample["value"] == 72 and sample["source"] == "com.example.scale", f"latest: {sample}")
    status, days = app.lines("GET", "/v1/statistics/bodyMass?options=average&by=day&from=2026-03-01&to=2026-03-04&tz=UTC")
    check(status == 200 and [d["values"]["average"] for d in days] == [70.5, 71, 72], f"statistics: {days}")

    # Another app: sees its own only, may not delete the scale's.
    status, rows = other.lines("GET", "/v1/samples/bodyMass")
    check(status == 200 and rows == [], "another app sees nothing it may not read")
    status, problem, _ = other.json("DELETE", "/v1/samples/00000000-0000-4000-8000-0000000000C1")
    check(status == 403, f"another app's sample: {status} {problem}")

    # The change feed as a long poll, answered within 100 ms of another client's commit.
    status, feed = app.lines("GET", "/v1/changes/bodyMass")
    anchor = feed[-1]["anchor"]
    result = {}

    def poll():
        poller = Client(host, port, a.app_token)
        result["answer"] = poller.lines("GET", "/v1/changes/bodyMass?" + urllib.parse.urlencode({"anchor": anchor, "wait": 20}))
        result["at"] = time.monotonic()

    t = threading.Thread(target=poll)
    t.start()
    time.sleep(0.3)
    status, body, _ = app.json("POST", "/v1/samples", weight(69, 5))
    committed = time.monotonic()
    t.join(timeout=30)
    check(status == 201 and "answer" in result, "long poll answered")
    latency = result["at"] - committed
    check(result["answer"][1][0]["change"] == "added" and latency < 0.1, f"long poll {latency * 1000:.1f} ms after the commit")

    # Authorization and characteristics.
    status, body, _ = app.json("POST", "/v1/authorization/request", {"share": ["height"], "read": ["dateOfBirth"]})
    check(status == 200 and body == {"requested": True}, f"request authorization: {body}")
    status, body, _ = app.json("GET", "/v1/authorization/status?share=height&read=dateOfBirth")
    check(status == 200 and body["requestStatus"] == "unnecessary" and body["sharing"]["HKQuantityTypeIdentifierHeight"] == "notDetermined",
          f"authorization status: {body}")
    status, body, _ = app.json("GET", "/v1/characteristics")
    check(status == 200 and body == {}, f"characteristics: {body}")

    # Health Auto Export: twice, new then unchanged.
    push = {"data": {"metrics": [
        {"name": "heart_rate", "units": "count/min", "data": [{"date": "2024-02-06 07:00:00 -0800", "Min": 58, "Avg": 64, "Max": 71}]},
        {"name": "step_count", "units": "count", "data": [{"date": "2024-02-06 07:00:00 -0800", "qty": 120}]}]}}
    status, first, _ = app.json("POST", "/v1/health-auto-export", push)
    check(status == 200 and first["new"] == 2, f"Health Auto Export first: {first}")
    status, second, _ = app.json("POST", "/v1/health-auto-export", push)
    check(status == 200 and second["new"] == 0 and second["unchanged"] == 2, f"Health Auto Export again: {second}")

    # A token revoked while its connection is kept alive is refused on that connection.
    status, made, _ = owner.json("POST", "/v1/tokens", {"app": "com.example.scale", "name": "tour", "expires": "1d"})
    check(status == 201 and made["token"].startswith("hl_"), f"token create: {made}")
    kept = Client(host, port, made["token"])
    check(kept.call("GET", "/v1/latest/bodyMass")[0] == 200, "the new token reads")
    status, _, _ = owner.call("DELETE", f"/v1/tokens/{made['id']}?reason=tour")
    check(status == 204, "revoke")
    status, problem, _ = kept.json("GET", "/v1/latest/bodyMass")
    check(status == 401 and problem["detail"] == f"credential {made['id']} was revoked", f"revoked on a kept-alive connection: {problem}")
    status, tokens = owner.lines("GET", "/v1/tokens")
    check(status == 200 and any(t["id"] == made["id"] and t["status"] == "revoked" for t in tokens)
          and all("token" not in t for t in tokens), "token list shows no secret")
    status, headers, page = owner.call("GET", "/v1/report")
    check(status == 200 and headers["content-type"].startswith("text/html") and b"<html" in page, "report")
    status, problem, _ = app.json("GET", "/v1/report")
    check(status == 403, "the report is the owner's")

    # Limits and framing.
    status, problem, headers = app.json("POST", "/v1/samples", "x" * (a.max_body + 1))
    check(status == 413, f"too large: {status}")
    line, closed, _ = raw_exchange(host, port, b"POST /v1/samples HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
                                                b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
    check(line.startswith("HTTP/1.1 400") and closed, f"smuggling: {line} closed={closed}")
    started = time.monotonic()
    line, closed, _ = raw_exchange(host, port, b"GET /v1/latest/bodyMass HTTP/1.1\r\nHost: x\r\n", wait=a.head_timeout + 10)
    waited = time.monotonic() - started
    check(line.startswith("HTTP/1.1 408") and closed and waited < a.head_timeout + 5, f"slow client: {line} after {waited:.1f} s")

    print(f"serve tour: {checks} checks passed")


if __name__ == "__main__":
    main()
