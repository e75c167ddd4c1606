#!/usr/bin/env python3
"""SQLite peer of the statistics benchmark (tools/stats_bench.sh).

  sqlite_stats_peer.py gen N SEED WATCH.jsonl PHONE.jsonl
      N step-count samples as `healthledger ingest` JSON Lines from two sources that
      count the same walks: per walk (a random minute over five years from
      2025-01-01), a Watch sample and an iPhone sample over overlapping intervals
      (the iPhone's shifted by up to 10 minutes), N/2 each, deterministic for SEED.
      Dates are written as `sqlite_query_peer.py` writes them (its `iso`, `BASE`).
  sqlite_stats_peer.py load WATCH.jsonl PHONE.jsonl DB
      Both into SQLite (table `samples`: type, value, start, end, source) with an index
      on (type, start, end): not timed.
  sqlite_stats_peer.py daily DB
      The naive daily sum: `SELECT substr(start, 1, 10), SUM(value) … GROUP BY 1`,
      one JSON line per day. It cannot merge sources: overlapping walks count twice.
  sqlite_stats_peer.py sections SNAPSHOT
      The byte length of each section of a healthledger snapshot, one `id length` a line.

Time the `daily` process from outside (the benchmark uses GNU time).
"""
import json
import os
import random
import sqlite3
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sqlite_query_peer import BASE, iso  # noqa: E402  the read benchmark's date format

FIVE_YEARS_MINUTES = 5 * 365 * 24 * 60


def gen(n, seed, watch_path, phone_path):
    rng = random.Random(seed)
    with open(watch_path, "w") as w, open(phone_path, "w") as p:
        for i in range(n // 2):
            start = BASE + rng.randrange(0, FIVE_YEARS_MINUTES) * 60
            length = 60 * rng.randrange(1, 20)
            steps = rng.randrange(10, 3000)
            shift = 60 * rng.randrange(-10, 11)
            for f, s, e, v, tag in ((w, start, start + length, steps, 1),
                                    (p, start + shift, start + shift + length + 60 * rng.randrange(0, 5),
                                     max(1, steps + rng.randrange(-200, 200)), 2)):
                u = "%08X-%04X-4%03X-8%03X-%012X" % (seed, tag, (i >> 24) & 0xFFF, (i >> 12) & 0xFFF, i)
                f.write(json.dumps({"type": "stepCount", "value": v, "unit": "count", "start": iso(s), "end": iso(e),
                                    "uuid": u}, separators=(",", ":")) + "\n")


def load(watch_path, phone_path, path):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE samples (type TEXT, value REAL, start TEXT, end TEXT, source TEXT)")
    for src, source in ((watch_path, "watch"), (phone_path, "phone")):
        with open(src) as f:
            rows = []
            for line in f:
                o = json.loads(line)
                rows.append(("HKQuantityTypeIdentifierStepCount", o["value"], o["start"], o["end"], source))
            db.executemany("INSERT INTO samples VALUES (?,?,?,?,?)", rows)
    db.execute("CREATE INDEX by_type_start ON samples (type, start, end)")
    db.commit()
    db.close()


def daily(path):
    db = sqlite3.connect(path)
    out = sys.stdout
    for day, total in db.execute("SELECT substr(start, 1, 10), SUM(value) FROM samples"
                                 " WHERE type = 'HKQuantityTypeIdentifierStepCount' GROUP BY 1 ORDER BY 1"):
        out.write('{"day":"%s","sum":%s}\n' % (day, int(total) if float(total).is_integer() else total))
    db.close()


def sections(path):
    with open(path, "rb") as f:
        data = f.read()
    offset = 128
    while offset + 24 <= len(data):
        sid, _, length, _, _ = struct.unpack_from("<IIQII", data, offset)
        print(sid, length)
        offset += 24 + length + (8 - length % 8) % 8


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "gen":
        gen(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif cmd == "load":
        load(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "daily":
        daily(sys.argv[2])
    elif cmd == "sections":
        sections(sys.argv[2])
    else:
        sys.exit(__doc__)
