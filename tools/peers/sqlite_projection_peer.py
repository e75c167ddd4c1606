#!/usr/bin/env python3
"""SQLite peer for the replay benchmark (healthledger-bench replay).

Loads the samples healthledger-bench wrote (TSV: uuid, type, start, end, value, unit,
app, deleted) into SQLite through Python's sqlite3 module, with an index on
(type, start), then times the questions our projections answer:

  latest:  the most recent live sample of every type (by start, end, rowid)
  profile: characteristics plus the latest height and weight, and BMI from them

Prints one JSON object per measurement on stdout.

Usage: sqlite_projection_peer.py SAMPLES.tsv DB
"""
import json
import os
import sqlite3
import sys
import time


def main():
    tsv, path = sys.argv[1], sys.argv[2]
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE samples (uuid TEXT PRIMARY KEY, type TEXT, start REAL, end REAL, value REAL, unit TEXT,"
               " app TEXT, deleted INTEGER)")
    db.execute("CREATE TABLE characteristics (type TEXT PRIMARY KEY, value TEXT)")
    db.executemany("INSERT INTO characteristics VALUES (?, ?)",
                   [("dateOfBirth", "1990-04-12"), ("biologicalSex", "female"), ("bloodType", "A+")])

    start = time.perf_counter()
    rows = 0
    db.execute("BEGIN")
    batch = []
    with open(tsv, encoding="utf-8") as fp:
        for line in fp:
            f = line.rstrip("\n").split("\t")
            batch.append((f[0], f[1], float(f[2]), float(f[3]), float(f[4]), f[5], f[6], int(f[7])))
            if len(batch) == 100_000:
                db.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?)", batch)
                rows += len(batch)
                batch = []
    if batch:
        db.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?)", batch)
        rows += len(batch)
    db.execute("CREATE INDEX samples_type_start ON samples (type, start)")
    db.execute("COMMIT")
    seconds = time.perf_counter() - start
    print(json.dumps({"peer": "sqlite", "test": "load", "rows": rows, "seconds": seconds, "rows_per_s": rows / seconds}))

    latest_sql = ("SELECT uuid, value, unit FROM samples WHERE type = ? AND deleted = 0 "
                  "ORDER BY start DESC, end DESC, rowid DESC LIMIT 1")
    types = [t for (t,) in db.execute("SELECT DISTINCT type FROM samples")]
    reps = 20
    start = time.perf_counter()
    for _ in range(reps):
        latest = {t: db.execute(latest_sql, (t,)).fetchone() for t in types}
    seconds = (time.perf_counter() - start) / reps
    print(json.dumps({"peer": "sqlite", "test": "latest_per_type", "types": len(latest), "ms": seconds * 1000}))

    start = time.perf_counter()
    for _ in range(reps):
        profile = dict(db.execute("SELECT type, value FROM characteristics"))
        h = db.execute(latest_sql, ("HKQuantityTypeIdentifierHeight",)).fetchone()
        w = db.execute(latest_sql, ("HKQuantityTypeIdentifierBodyMass",)).fetchone()
        if h and w:
            height_m = h[1] / 100 if h[2] == "cm" else h[1]
            profile["bmi"] = w[1] / (height_m * height_m)
    seconds = (time.perf_counter() - start) / reps
    print(json.dumps({"peer": "sqlite", "test": "profile", "ms": seconds * 1000}))
    db.close()


if __name__ == "__main__":
    main()
