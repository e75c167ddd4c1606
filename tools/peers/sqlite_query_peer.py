#!/usr/bin/env python3
"""SQLite peer of the read benchmark (tools/query_bench.sh).

  sqlite_query_peer.py gen N SEED OUT.jsonl
      N step-count samples as `healthledger ingest` JSON Lines, start dates shuffled
      (random minutes over ~4 years, so some starts tie), deterministic for SEED; one
      sample in ten carries metadata {"HKWasUserEntered": true} (for the predicate run).
  sqlite_query_peer.py load IN.jsonl DB
      The same samples into SQLite (table `samples`, rows in input order, so rowid is
      the log order), with an index on (type, start, end): not timed.
  sqlite_query_peer.py query DB TYPE
      `SELECT … ORDER BY start DESC, end DESC, rowid DESC` written as the same JSON
      Lines `healthledger query --owner TYPE --json` prints (same keys, same order:
      the outputs are byte for byte equal).
  sqlite_query_peer.py where-user-entered DB TYPE
      The same query restricted to metadata HKWasUserEntered = true (json_extract over
      the stored metadata, as `query --where 'metadata.HKWasUserEntered = true'`).
  sqlite_query_peer.py latest DB TYPE NOW
      The most recent sample before NOW (end < NOW, newest start first), one line.

Time the `query`/`latest` processes from outside (the benchmark uses GNU time).
"""
import json
import os
import random
import sqlite3
import sys

BASE = 1735689600  # 2025-01-01T00:00:00Z


def iso(t):
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def gen(n, seed, out):
    rng = random.Random(seed)
    with open(out, "w") as f:
        for i in range(n):
            start = BASE + rng.randrange(0, 4 * 365 * 24 * 60) * 60
            end = start + 60 * rng.randrange(1, 30)
            u = "%08X-%04X-4%03X-8%03X-%012X" % (seed, (i >> 48) & 0xFFFF, (i >> 36) & 0xFFF, (i >> 24) & 0xFFF, i & 0xFFFFFFFFFFFF)
            o = {"type": "stepCount", "value": rng.randrange(1, 5000), "unit": "count",
                 "start": iso(start), "end": iso(end), "uuid": u}
            if i % 10 == 3:
                o["metadata"] = {"HKWasUserEntered": True}
            f.write(json.dumps(o, separators=(",", ":")) + "\n")


def load(src, path):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE samples (uuid TEXT PRIMARY KEY, type TEXT, kind TEXT, value REAL, unit TEXT,"
               " start TEXT, end TEXT, source TEXT, metadata TEXT)")
    with open(src) as f:
        rows = []
        for line in f:
            o = json.loads(line)
            meta = o.get("metadata")
            rows.append((o["uuid"], "HKQuantityTypeIdentifierStepCount", "quantity", o["value"], o["unit"],
                         o["start"], o["end"], APP, json.dumps(meta, separators=(",", ":")) if meta else None))
        db.executemany("INSERT INTO samples VALUES (?,?,?,?,?,?,?,?,?)", rows)
    db.execute("CREATE INDEX by_type_start ON samples (type, start, end)")
    db.commit()
    db.close()


APP = "com.example.bench"
TYPES = {"stepCount": "HKQuantityTypeIdentifierStepCount"}
COLUMNS = ("uuid", "type", "kind", "value", "unit", "start", "end", "source")


def number(v):
    return int(v) if float(v).is_integer() and abs(v) < 1e15 else v


def query(path, type_name, where=""):
    db = sqlite3.connect(path)
    out = sys.stdout
    write = out.write
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    cur = db.execute("SELECT uuid, type, kind, value, unit, start, end, source, metadata FROM samples WHERE type = ?"
                     + where + " ORDER BY start DESC, end DESC, rowid DESC", (TYPES.get(type_name, type_name),))
    for row in cur:
        o = dict(zip(COLUMNS, row))
        o["value"] = number(o["value"])
        if row[8] is not None:
            o["metadata"] = json.loads(row[8])
        write(dumps(o) + "\n")
    out.flush()


def latest(path, type_name, now):
    db = sqlite3.connect(path)
    row = db.execute("SELECT uuid, type, kind, value, unit, start, end, source FROM samples WHERE type = ? AND end < ?"
                     " ORDER BY start DESC, end DESC, rowid DESC LIMIT 1", (TYPES.get(type_name, type_name), now)).fetchone()
    if row:
        o = dict(zip(COLUMNS, row))
        o["value"] = number(o["value"])
        sys.stdout.write(json.dumps(o, separators=(",", ":")) + "\n")


def main():
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif cmd == "load":
        load(sys.argv[2], sys.argv[3])
    elif cmd == "query":
        query(sys.argv[2], sys.argv[3])
    elif cmd == "where-user-entered":
        query(sys.argv[2], sys.argv[3], " AND json_extract(metadata, '$.HKWasUserEntered') = 1")
    elif cmd == "latest":
        latest(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("usage: see the docstring")


if __name__ == "__main__":
    main()
