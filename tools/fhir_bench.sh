#!/usr/bin/env bash
# `export fhir` of a whole ledger against reading the same samples as JSON Lines
# (issue 33): wall time and peak RSS of each, as whole processes (GNU time), and the
# output sizes and resource counts.
#
#   tools/fhir_bench.sh [--zip EXPORT.zip] [--scratch DIR] [--bin PATH] [--validate]
#
# --zip       the Apple Health export to import (default tools/scratch/big.zip; made
#             by tools/import_bench.sh)
# --scratch   where the ledger and the outputs go (default tools/scratch/fhir-bench)
# --bin       the healthledger binary (default .build/release/healthledger)
# --validate  also run tools/check_fhir_export.py on the export (tools/fhir_venv.sh)
#
# Timed (the import before them is not):
#   export fhir --owner --out DIR
#   changes <every sample type> --owner --json     (the same samples, in the same log
#                                                   order, through the same change feed)
#   query --owner TYPE --json, one process per type with samples (`stats`), summed
#   wall time and the largest peak RSS
# Counts: the manifest's output counts against `stats` (Observations = live samples).
set -euo pipefail
cd "$(dirname "$0")/.."

zip=tools/scratch/big.zip
scratch=tools/scratch/fhir-bench
bin=.build/release/healthledger
validate=0
while [ $# -gt 0 ]; do
    case "$1" in
        --zip) zip="$2"; shift ;;
        --scratch) scratch="$2"; shift ;;
        --bin) bin="$2"; shift ;;
        --validate) validate=1 ;;
        --help|-h) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
bin=$(realpath "$bin")
mkdir -p "$scratch"
ledger="$scratch/big.ledger"
if [ ! -d "$ledger" ]; then
    "$bin" --ledger "$ledger" init >/dev/null
    echo "== importing $zip (not timed)"
    "$bin" --ledger "$ledger" import-apple-health "$zip" | tail -3
fi

timed() {  # $1: label, $2: stdout file, rest: command. Prints wall and CPU seconds and peak RSS (MB).
    local label="$1" out="$2"
    shift 2
    /usr/bin/time -f "%e %M %U %S" -o "$scratch/time.txt" "$@" >"$out"
    read -r wall rss user sys <"$scratch/time.txt"
    printf '%-34s %8.2f s wall %8.2f s CPU %8.0f MB peak\n' "$label" "$wall" "$(python3 -c "print($user + $sys)")" "$((rss / 1024))"
}

rm -rf "$scratch/fhir"
echo "== timed (release: $bin)"
timed "export fhir --owner" "$scratch/export.txt" "$bin" --ledger "$ledger" export fhir --owner --out "$scratch/fhir"
types=$("$bin" --ledger "$ledger" --json stats | python3 -c 'import json,sys; print(",".join(sorted(json.load(sys.stdin)["samples"])))')
timed "changes ALL --owner --json" "$scratch/changes.jsonl" "$bin" --ledger "$ledger" changes "$types" --owner --json
total=0
cpu=0
peak=0
: >"$scratch/query.jsonl"
for t in ${types//,/ }; do
    /usr/bin/time -f "%e %M %U %S" -o "$scratch/time.txt" "$bin" --ledger "$ledger" query --owner "$t" --json >>"$scratch/query.jsonl"
    read -r wall rss user sys <"$scratch/time.txt"
    total=$(python3 -c "print($total + $wall)")
    cpu=$(python3 -c "print($cpu + $user + $sys)")
    peak=$((rss > peak ? rss : peak))
done
printf '%-34s %8.2f s wall %8.2f s CPU %8.0f MB peak (%d processes)\n' "query --owner TYPE --json, all" "$total" "$cpu" "$((peak / 1024))" \
    "$(echo "${types//,/ }" | wc -w)"

echo "== sizes"
du -b "$scratch"/fhir/* | awk '{ printf "%-60s %10.1f MB\n", $2, $1 / 1e6 }'
for f in changes.jsonl query.jsonl; do
    printf '%-60s %10.1f MB  %d lines\n' "$f" "$(python3 -c "print($(stat -c %s "$scratch/$f") / 1e6)")" "$(wc -l <"$scratch/$f")"
done
echo "== counts"
python3 - "$scratch/fhir/manifest.json" "$bin" "$ledger" <<'EOF'
import json, subprocess, sys
manifest = json.load(open(sys.argv[1]))
stats = json.loads(subprocess.run([sys.argv[2], "--ledger", sys.argv[3], "--json", "stats"], capture_output=True, check=True).stdout)
live = sum(sum(s.values()) for s in stats["samples"].values())
counts = {o["type"]: o["count"] for o in manifest["output"]}
print("manifest:", counts, "| stats live samples:", live, "| Observations == stats:", counts["Observation"] == live)
EOF
if [ "$validate" = 1 ]; then
    echo "== validating every resource (fhir.resources R4B)"
    python=$(tools/fhir_venv.sh)
    /usr/bin/time -f "%e s" "$python" tools/check_fhir_export.py "$scratch/fhir"
fi
