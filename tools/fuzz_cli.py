#!/usr/bin/env python3
"""Seeded fuzzer of the healthledger command line, through the built binary.

Each case is one process: `ingest` of a mutated JSON line, `unit parse` of a
mutated unit, `query --from` with a mutated date, or `import-apple-health` of a
mutated small export. Asserts, for every case:

  - no signal and no exit >= 128 (a trap, a crash);
  - the exit status is one the command documents for that input (0 or 3; 5 for an
    ingest the rules refuse; 2 for a usage error of a mutated argument);
  - a refused input leaves the ledger folder byte for byte as it was (every file
    but LOCK), and a refused import creates no ledger.

The in-process fuzzer (Tests/CLITests/CLIInputFuzz.swift) covers the same inputs
100x faster; this one checks what only a real process shows: exit statuses,
signals and the bytes on disk. A seed reproduces a run exactly.

    tools/fuzz_cli.py --cases 2000 --seed 1 [--binary .build/release/healthledger]
"""
import argparse
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

VALID_LINES = [
    [("type", '"bodyMass"'), ("value", "70.5"), ("unit", '"kg"'), ("start", '"2026-03-01T08:00:00Z"')],
    [("type", '"heartRate"'), ("value", "72"), ("unit", '"count/min"'), ("start", '"2026-03-01T08:00:00+01:00"'),
     ("end", '"2026-03-01T08:01:00+01:00"')],
    [("type", '"sleepAnalysis"'), ("value", '"asleepCore"'), ("start", '"2026-03-01T01:00:00Z"'), ("end", '"2026-03-01T05:00:00Z"')],
    [("type", '"bodyMass"'), ("value", "0"), ("unit", '"lb"'), ("start", '"2026-03-01T08:00:00.250Z"'),
     ("metadata", '{"HKMetadataKeySyncIdentifier":"s-1","HKMetadataKeySyncVersion":3}'),
     ("device", '{"name":"Scale","manufacturer":"Acme"}')],
]
VALUES = ["0", "-0", "072", "+72", "1e309", "1e-400", "9223372036854775808", "1.", ".5", "NaN", "true", "null", "[]", "{}",
          '"72"', '"\\ud800"', '"\\u0000"', '"a\\qb"', "1" + "0" * 400, "[" * 70 + "]" * 70, '{"a":' * 70 + "1" + "}" * 70]
BYTES = list(b'{}[]",:\\0123456789eE+-. tfnu\t') + [0x00, 0x01, 0x1F, 0x7F, 0x80, 0xC0, 0xC3, 0xE2, 0xED, 0xF4, 0xFF]
UNITS = ["kg", "lb", "count/min", "mL/(kg*min)", "mmHg", "degF", "kcal", "m/s^2", "%", "mg/dL", "mmol<180.15588>/L", "mL/min·kg"]
UNIT_PIECES = ["(", ")", "*", "/", "^", "^-1", "^99999999999999999999", "·", ".", "-", "0", "<", ">", "<1.5>", " ", "k", "m",
               "g", "L", "s", "min", "%", "mmol<", "µ", "é"]
DATES = ["2026-03-01T08:00:00Z", "2026-03-01T08:00:00+01:00", "2026-03-01T08:00:00.123Z", "2026-03-01", "2024-02-29T00:00:00+14:00"]
DATE_PIECES = ["Z", "+", "-", ":", "T", " ", ".", "0", "9", "60", "24", "99", "+14:00", "-23:59", "+24:00", "0000", "9999",
               "-0001", ",5", "z"]
XML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE HealthData [
<!ELEMENT HealthData (ExportDate,Me,(Record)*)>
]>
<HealthData locale="en_US">
 <ExportDate value="2019-06-17 21:07:11 -0400"/>
 <Me HKCharacteristicTypeIdentifierDateOfBirth="1985-03-14" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexMale"/>
 <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Health" unit="lb" creationDate="2019-05-01 08:00:00 -0400" startDate="2019-05-01 07:59:00 -0400" endDate="2019-05-01 07:59:00 -0400" value="165.4">
  <MetadataEntry key="HKWasUserEntered" value="1"/>
 </Record>
 <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" creationDate="2019-05-02 07:00:00 -0400" startDate="2019-05-02 01:00:00 -0400" endDate="2019-05-02 06:00:00 -0400" value="HKCategoryValueSleepAnalysisAsleepCore"/>
</HealthData>
""".encode()
XML_PIECES = [b"<", b">", b"&", b"&amp;", b"&#0;", b"&#xD800;", b'"', b"'", b"=", b"/>", b"</Record>", b"<!--", b"\x00",
              b"\x80", b"\xc3", b"\xff", b' a="1"', b"2019-13-45 25:61:61 +9999", b"NaN", b"1e309", b"mmol<"]


def mutate_bytes(rng, data, pieces, rounds):
    data = bytearray(data)
    for _ in range(rounds):
        if not data:
            break
        at = rng.randrange(len(data))
        op = rng.randrange(5)
        if op == 0:
            data[at] ^= 1 << rng.randrange(8)
        elif op == 1:
            piece = rng.choice(pieces)
            data[at:at] = piece if isinstance(piece, bytes) else bytes([piece])
        elif op == 2:
            del data[at:at + rng.randrange(1, 8)]
        elif op == 3:
            del data[at:]
        else:
            piece = rng.choice(pieces)
            data[at:at + 1] = piece if isinstance(piece, bytes) else bytes([piece])
    return bytes(data)


def mutate_text(rng, text, pieces):
    chars = list(text)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(chars) + 1)
        op = rng.randrange(4)
        if op == 0:
            chars[at:at] = list(rng.choice(pieces))
        elif op == 1 and chars:
            del chars[min(at, len(chars) - 1)]
        elif op == 2:
            chars = list("(" * rng.randrange(1, 40) + "".join(chars) + ")" * rng.randrange(0, 41))
        else:
            chars = chars[:at]
    return "".join(chars)


def json_line(rng):
    members = list(rng.choice(VALID_LINES))
    for _ in range(rng.randrange(3)):
        op = rng.randrange(5)
        if op == 0:
            i = rng.randrange(len(members))
            members[i] = (members[i][0], rng.choice(VALUES))
        elif op == 1:
            m = rng.choice(members)
            members.insert(rng.randrange(len(members) + 1), (m[0], rng.choice(VALUES + [m[1]])))
        elif op == 2:
            members.append((rng.choice(["metdata", "Type", "", "é"]), rng.choice(VALUES)))
        elif op == 3 and len(members) > 1:
            del members[rng.randrange(len(members))]
        else:
            unit = mutate_text(rng, rng.choice(UNITS), UNIT_PIECES).replace("\\", "\\\\").replace('"', '\\"')
            members = [m for m in members if m[0] != "unit"] + [("unit", '"' + unit + '"')]
    line = ("{" + ",".join(f'"{k}":{v}' for k, v in members) + "}").encode()
    line = mutate_bytes(rng, line, BYTES, rng.randrange(3))
    return line.replace(b"\n", b"").replace(b"\r", b"")


def snapshot(folder):
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            if os.path.relpath(path, folder) == "LOCK":
                continue
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return out


def run(binary, args, stdin=b""):
    p = subprocess.run([binary] + args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stderr.decode(errors="replace")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=2000, help="cases in all (spread over the four kinds)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--binary", default=".build/release/healthledger")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    binary = os.path.abspath(options.binary)
    work = tempfile.mkdtemp(prefix="fuzz_cli.")
    ledger = os.path.join(work, "L")
    for args in (["init"], ["app", "register", "--app", "a", "--name", "A", "--share-purpose", "s", "--read-purpose", "r"],
                 ["authorize", "--app", "a", "--share", "bodyMass,heartRate,sleepAnalysis", "--read", "bodyMass"]):
        status, err = run(binary, ["--ledger", ledger] + args)
        assert status == 0, (args, err)
    tally, failures = Counter(), []

    def check(kind, status, err, allowed, what, ledger_before=None):
        tally[f"{kind} exit {status}"] += 1
        if status < 0 or status >= 128 or status not in allowed:
            failures.append(f"{kind}: exit {status} ({err.strip()[:200]}) for {what!r}")
        if ledger_before is not None and status != 0 and snapshot(ledger) != ledger_before:
            failures.append(f"{kind}: refused (exit {status}) but the ledger changed, for {what!r}")

    before = snapshot(ledger)
    for case in range(options.cases):
        kind = ("ingest", "unit", "date", "import")[case % 4]
        if kind == "ingest":
            line = json_line(rng)
            status, err = run(binary, ["--ledger", ledger, "ingest", "--app", "a"], line + b"\n")
            check(kind, status, err, {0, 3, 5}, line, before)
            if status == 0:
                before = snapshot(ledger)
        elif kind == "unit":
            unit = mutate_text(rng, rng.choice(UNITS), UNIT_PIECES).replace("\x00", "")
            status, err = run(binary, ["unit", "parse", "--", unit])
            check(kind, status, err, {0, 2, 3}, unit)
        elif kind == "date":
            date = mutate_text(rng, rng.choice(DATES), DATE_PIECES).replace("\x00", "")
            status, err = run(binary, ["--ledger", ledger, "query", "--owner", "bodyMass", "--from", date])
            check(kind, status, err, {0, 2, 3}, date, before)
        else:
            xml = mutate_bytes(rng, XML, XML_PIECES, rng.randrange(1, 4))
            folder = os.path.join(work, "import")
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            with open(os.path.join(folder, "export.xml"), "wb") as f:
                f.write(xml)
            target = os.path.join(work, "M")
            shutil.rmtree(target, ignore_errors=True)
            status, err = run(binary, ["--ledger", target, "import-apple-health", folder])
            check(kind, status, err, {0, 3}, xml[:120])
            if status != 0 and os.path.exists(target):
                failures.append(f"import: refused (exit {status}) but created a ledger, for {xml[:120]!r}")
    status, err = run(binary, ["--ledger", ledger, "verify"])
    if status != 0:
        failures.append(f"verify after the run: exit {status}: {err.strip()}")
    shutil.rmtree(work, ignore_errors=True)
    print(f"fuzz_cli seed {options.seed}: {options.cases} cases")
    for key in sorted(tally):
        print(f"  {key}: {tally[key]}")
    for failure in failures[:20]:
        print("FAIL " + failure)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
