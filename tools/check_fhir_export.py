#!/usr/bin/env python3
"""Validates a `healthledger export fhir` folder with an R4 validator.

    tools/check_fhir_export.py DIR

Run it with the python of tools/fhir_venv.sh (it needs PyPI's fhir.resources, whose
R4B models validate FHIR R4 resources: types, cardinalities, required elements,
primitive formats such as id, dateTime, instant, decimal, code, uri).

Checks manifest.json as Bulk Data's completion manifest (transactionTime,
request, requiresAccessToken, output [{type, url, count}], deleted, error); then
every line of every file it lists: parsed by the R4B model of the file's type, of
that type, ids unique per type, the count the manifest gives; references inside
the export resolve (an Observation's subject to the Patient, its device to a
Device, every Provenance target to a resource of the export); each resource has a
Provenance; each deletion is a transaction Bundle of DELETE entries. Prints
"ok N resources (Patient a, Observation b, …), D deletions" and exits 0, or
names the first failure (file, line, reason) and exits 1.
"""
import json
import os
import re
import sys

from fhir.resources.R4B.bundle import Bundle
from fhir.resources.R4B.device import Device
from fhir.resources.R4B.observation import Observation
from fhir.resources.R4B.patient import Patient
from fhir.resources.R4B.provenance import Provenance

# What the models leave to a terminology server or accept loosely, checked here: the
# Observation status value set (required binding) and the FHIR dateTime / instant
# formats (the spec's regular expressions).
OBSERVATION_STATUS = {"registered", "preliminary", "final", "amended", "corrected", "cancelled", "entered-in-error", "unknown"}
DATE_TIME = re.compile(r"([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)(-(0[1-9]|1[0-2])(-(0[1-9]|[1-2][0-9]|3[0-1])"
                       r"(T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))?)?)?")
INSTANT = re.compile(r"([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)-(0[1-9]|1[0-2])-(0[1-9]|[1-2][0-9]|3[0-1])"
                     r"T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|(\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00))")


def check_formats(where, kind, data):
    if kind == "Observation":
        if data.get("status") not in OBSERVATION_STATUS:
            fail(f"{where}: Observation.status {data.get('status')!r} is not in its value set")
        times = [data.get("effectiveDateTime")] + list((data.get("effectivePeriod") or {}).values())
        for t in times:
            if t is not None and not DATE_TIME.fullmatch(t):
                fail(f"{where}: {t!r} is not a FHIR dateTime")
        if "issued" in data and not INSTANT.fullmatch(data["issued"]):
            fail(f"{where}: issued {data['issued']!r} is not a FHIR instant")
    if kind == "Provenance" and not INSTANT.fullmatch(data["recorded"]):
        fail(f"{where}: recorded {data['recorded']!r} is not a FHIR instant")


MODELS = {"Patient": Patient, "Observation": Observation, "Device": Device, "Provenance": Provenance, "Bundle": Bundle}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def read_lines(folder, entry):
    path = os.path.join(folder, entry["url"])
    if os.path.basename(entry["url"]) != entry["url"]:
        fail(f"manifest url {entry['url']!r} is not a file of the folder")
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    if raw and not raw.endswith("\n"):
        fail(f"{entry['url']}: the last line has no newline")
    lines = raw.split("\n")[:-1] if raw else []
    if len(lines) != entry["count"]:
        fail(f"{entry['url']}: {len(lines)} lines, the manifest says {entry['count']}")
    return lines


def validate(name, number, line, kind):
    where = f"{name}:{number}"
    try:
        data = json.loads(line)
    except ValueError as e:
        fail(f"{where}: not JSON: {e}")
    if data.get("resourceType") != kind:
        fail(f"{where}: resourceType {data.get('resourceType')!r} in the {kind} file")
    try:
        MODELS[kind].parse_raw(line)
    except Exception as e:  # the model's ValidationError, whatever its class in this version
        fail(f"{where}: not a valid R4 {kind}: {e}")
    check_formats(where, kind, data)
    return data


def main():
    if len(sys.argv) != 2:
        fail("usage: check_fhir_export.py DIR")
    folder = sys.argv[1]
    with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    for key, kind in (("transactionTime", str), ("request", str), ("requiresAccessToken", bool), ("output", list), ("error", list)):
        if not isinstance(manifest.get(key), kind):
            fail(f"manifest: {key} missing or not a {kind.__name__}")
    resources = {}
    counts = {}
    for entry in manifest["output"]:
        kind = entry["type"]
        if kind not in MODELS or kind == "Bundle":
            fail(f"manifest: unexpected output type {kind!r}")
        ids = resources.setdefault(kind, {})
        for number, line in enumerate(read_lines(folder, entry), 1):
            data = validate(entry["url"], number, line, kind)
            if data["id"] in ids:
                fail(f"{entry['url']}:{number}: id {data['id']} twice")
            ids[data["id"]] = data
        counts[kind] = len(ids)
    deletions = 0
    for entry in manifest.get("deleted", []):
        if entry["type"] != "Bundle":
            fail(f"manifest: deleted entry of type {entry['type']!r}")
        for number, line in enumerate(read_lines(folder, entry), 1):
            data = validate(entry["url"], number, line, "Bundle")
            if data.get("type") != "transaction":
                fail(f"{entry['url']}:{number}: a deletion Bundle is a transaction")
            for e in data.get("entry", []):
                if e["request"]["method"] != "DELETE":
                    fail(f"{entry['url']}:{number}: a {e['request']['method']} entry")
                deletions += 1

    def exists(reference, where):
        kind, _, rid = reference.partition("/")
        if rid not in resources.get(kind, {}):
            fail(f"{where}: {reference} is not in the export")

    for oid, o in resources.get("Observation", {}).items():
        exists(o["subject"]["reference"], f"Observation/{oid} subject")
        if "device" in o:
            exists(o["device"]["reference"], f"Observation/{oid} device")
    provenanced = set()
    for pid, p in resources.get("Provenance", {}).items():
        for target in p["target"]:
            exists(target["reference"], f"Provenance/{pid} target")
            provenanced.add(target["reference"])
    for kind in ("Patient", "Observation", "Device"):
        for rid in resources.get(kind, {}):
            if f"{kind}/{rid}" not in provenanced:
                fail(f"{kind}/{rid} has no Provenance")
    total = sum(counts.values())
    summary = ", ".join(f"{k} {v}" for k, v in counts.items())
    print(f"ok {total} resources ({summary}), {deletions} deletions")


main()
