#!/usr/bin/env python3
"""Checks a `healthledger export csv` file against `query --json` of the same type.

    tools/check_csv_export.py FILE.csv QUERY.jsonl

Reads FILE.csv with Python's csv module (RFC 4180: the dialect's defaults, CRLF
rows) and the JSON Lines `query --owner TYPE --json` printed, and checks that both
hold the same samples with every common field equal: uuid, start, end, value (as a
number for quantities), unit, source, device and metadata (as JSON objects), and
the type's own columns where the JSON has them. Prints "ok ROWS" and exits 0, or
names the first difference and exits 1.
"""
import csv
import io
import json
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    if len(sys.argv) != 3:
        fail("usage: check_csv_export.py FILE.csv QUERY.jsonl")
    with open(sys.argv[1], newline="", encoding="utf-8") as f:
        raw = f.read()
    if raw and not raw.endswith("\r\n"):
        fail("the file does not end its last row with CRLF")
    rows = list(csv.DictReader(io.StringIO(raw, newline="")))
    with open(sys.argv[2], encoding="utf-8") as f:
        samples = [json.loads(line) for line in f if line.strip()]
    by_uuid = {s["uuid"]: s for s in samples}
    if len(rows) != len(samples) or len(by_uuid) != len(samples):
        fail(f"{len(rows)} rows, {len(samples)} samples from the query")
    for row in rows:
        s = by_uuid.get(row["uuid"])
        if s is None:
            fail(f"row {row['uuid']} is not in the query's output")
        for field in ("start", "end", "source"):
            if row[field] != (s.get(field) or ""):
                fail(f"{row['uuid']} {field}: csv {row[field]!r}, json {s.get(field)!r}")
        kind = s["kind"]
        if kind == "quantity":
            if float(row["value"]) != s["value"] or row["unit"] != s["unit"]:
                fail(f"{row['uuid']} value: csv {row['value']} {row['unit']}, json {s['value']} {s['unit']}")
        elif kind == "category":
            if int(row["value"]) != s["value"] or row["unit"] != "" or row["valueName"] != (s.get("valueName") or ""):
                fail(f"{row['uuid']} category value: csv {row['value']!r} {row['valueName']!r}, json {s['value']!r} {s.get('valueName')!r}")
        for field in ("device", "metadata"):
            got = json.loads(row[field]) if row[field] else None
            if got != s.get(field):
                fail(f"{row['uuid']} {field}: csv {got!r}, json {s.get(field)!r}")
    print(f"ok {len(rows)}")


main()
