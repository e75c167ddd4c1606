#!/usr/bin/env python3
"""SQLite peer for the log benchmark (healthledger-bench log).

The same workload as our log, in SQLite through Python's sqlite3 module, WAL mode,
synchronous=FULL: a table (seq INTEGER PRIMARY KEY, kind, recorded_at, payload BLOB).

  batched:  COUNT rows of SIZE-byte payloads in one transaction (executemany)
  durable:  DURABLE rows, one transaction (commit) per row
  read:     SELECT every payload in seq order

Prints one JSON object per measurement on stdout.

Usage: sqlite_log_peer.py DIR COUNT SIZE DURABLE
"""
import json
import os
import sqlite3
import sys
import time


def payloads(size, distinct=1000):
    return [bytes(((i * 131 + j * 7) & 0xFF) for j in range(size)) for i in range(distinct)]


def connect(path):
    if os.path.exists(path):
        os.remove(path)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE log (seq INTEGER PRIMARY KEY, kind INTEGER, recorded_at INTEGER, payload BLOB)")
    return db


def main():
    directory, count, size, durable = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    os.makedirs(directory, exist_ok=True)
    data = payloads(size)

    db = connect(os.path.join(directory, f"peer-{size}.sqlite"))
    rows = ((i + 1, 1, i, data[i % len(data)]) for i in range(count))
    start = time.perf_counter()
    db.execute("BEGIN")
    db.executemany("INSERT INTO log VALUES (?, ?, ?, ?)", rows)
    db.execute("COMMIT")
    seconds = time.perf_counter() - start
    print(json.dumps({"peer": "sqlite", "test": "batched", "size": size, "records": count, "seconds": seconds,
                      "records_per_s": count / seconds, "mb_per_s": count * size / seconds / 1e6}))

    start = time.perf_counter()
    total = 0
    for (payload,) in db.execute("SELECT payload FROM log ORDER BY seq"):
        total += len(payload)
    seconds = time.perf_counter() - start
    print(json.dumps({"peer": "sqlite", "test": "read", "size": size, "records": count, "seconds": seconds,
                      "mb_per_s": total / seconds / 1e6}))
    db.close()

    if durable > 0:
        db = connect(os.path.join(directory, f"peer-durable-{size}.sqlite"))
        start = time.perf_counter()
        for i in range(durable):
            db.execute("BEGIN")
            db.execute("INSERT INTO log VALUES (?, ?, ?, ?)", (i + 1, 1, i, data[i % len(data)]))
            db.execute("COMMIT")
        seconds = time.perf_counter() - start
        print(json.dumps({"peer": "sqlite", "test": "durable", "size": size, "records": durable, "seconds": seconds,
                          "records_per_s": durable / seconds}))
        db.close()


if __name__ == "__main__":
    main()
