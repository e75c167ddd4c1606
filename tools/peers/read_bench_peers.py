#!/usr/bin/env python3
"""Helpers of tools/read_bench.sh (HealthLedger vs the sqlite3 shell vs DuckDB).

  read_bench_peers.py gen N SEED OUT.jsonl OUT.csv
      N step-count samples as `healthledger ingest` JSON Lines, made by
      sqlite_query_peer.py's generator (shuffled start minutes over ~4 years, one
      sample in ten with metadata {"HKWasUserEntered": true}), and the same samples
      as CSV for the sqlite3 shell's `.import` and DuckDB's read_csv, one row per
      line in input order: seq,uuid,type,value,unit,start,end,user_entered
      (seq = the line number = ingest order, the last tie-break of "newest first").
  read_bench_peers.py digest FILE
      A JSON Lines answer of samples (any key order, any number format): prints
      `COUNT SUM ORDER` — lines, the sum of "value", and the first 16 hex digits of
      the SHA-256 of the UUIDs in the order printed (so the order is compared too).
  read_bench_peers.py days FILE
      Daily sums: ours (`statistics … --json`: {"values":{"sum":S}} per bucket,
      {"empty":true} for an empty one; with --separate-by-source the sources'
      unmerged sums are added instead) or a peer's ({"day":D,"sum":S} per day):
      prints `DAYS TOTAL` — the days with a value and the sum over all of them.
  read_bench_peers.py input-days IN.jsonl
      From the input itself: `STARTS COVERED` — the UTC days some sample starts in
      (what GROUP BY date(start) counts) and the days some sample's [start, end)
      covers (the buckets a statistics collection gives a value).
  read_bench_peers.py duckdb [-readonly] DB -c SQL
      The DuckDB Python package's stand-in for the DuckDB shell (same arguments):
      runs SQL (statements separated by `;`) on DB, printing the rows of the last
      one as CSV without a header.
"""
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sqlite_query_peer import gen as gen_jsonl  # noqa: E402  the read benchmark's samples

STEP = "HKQuantityTypeIdentifierStepCount"


def gen(n, seed, jsonl, csv):
    gen_jsonl(n, seed, jsonl)
    with open(jsonl) as src, open(csv, "w") as out:
        out.write("seq,uuid,type,value,unit,start,end,user_entered\n")
        for seq, line in enumerate(src, 1):
            o = json.loads(line)
            assert o["type"] == "stepCount"
            entered = 1 if (o.get("metadata") or {}).get("HKWasUserEntered") is True else 0
            out.write("%d,%s,%s,%s,%s,%s,%s,%d\n" % (seq, o["uuid"], STEP, o["value"], o["unit"],
                                                      o["start"], o["end"], entered))


def digest(path):
    count, total, order = 0, 0.0, hashlib.sha256()
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            o = json.loads(line)
            count += 1
            total += o["value"]
            order.update(o["uuid"].upper().encode() + b"\n")
    print(count, "%.0f" % total if float(total).is_integer() else repr(total), order.hexdigest()[:16])


def days(path):
    count, total = 0, 0.0
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            o = json.loads(line)
            if o.get("empty"):
                continue
            if "sources" in o:
                s = sum(v["sum"] for v in o["sources"].values())
            elif "values" in o:
                s = o["values"]["sum"]
            else:
                s = o["sum"]
            if s != 0:
                count += 1
            total += s
    print(count, "%.3f" % total)


def input_days(path):
    import datetime
    starts, covered = set(), set()
    parse = datetime.datetime.fromisoformat
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            start = parse(o["start"].replace("Z", "+00:00"))
            end = parse(o.get("end", o["start"]).replace("Z", "+00:00"))
            starts.add(start.date())
            day = start.date()
            last = (end - datetime.timedelta(microseconds=1)).date() if end > start else start.date()
            while day <= last:
                covered.add(day)
                day += datetime.timedelta(days=1)
    print(len(starts), len(covered))


def duck(args):
    import duckdb
    read_only = args[0] == "-readonly"
    if read_only:
        args = args[1:]
    db, flag, sql = args
    assert flag == "-c"
    con = duckdb.connect(db, read_only=read_only)
    rows = None
    for statement in [s for s in sql.split(";") if s.strip()]:
        rel = con.execute(statement)
        # only a SELECT's rows are printed (COPY answers with its row count)
        rows = rel.fetchall() if statement.lstrip().upper().startswith("SELECT") else None
    if rows:
        for row in rows:
            print(",".join(str(x) for x in row))
    con.close()


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "gen":
        gen(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif cmd == "digest":
        digest(sys.argv[2])
    elif cmd == "days":
        days(sys.argv[2])
    elif cmd == "input-days":
        input_days(sys.argv[2])
    elif cmd == "duckdb":
        duck(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
