#!/usr/bin/env bash
# PostgreSQL store benchmark, all in one run on one (shared, loaded) machine:
#  1. N ledgers (default 100) imported from the Apple Health exports in ../shared by
#     2 worker processes, into one PostgreSQL server and into folders: samples/s of
#     each and the ratio (PostgreSQL / files);
#  2. durable single appends/s (`ingest --batch 1`: one commit per sample) into
#     PostgreSQL and into a folder, against PostgreSQL's own one-row INSERT commits
#     from psql (autocommit, synchronous_commit on) in the same run, and the ratio.
# Starts a throwaway PostgreSQL 15 (tools/pg_server.sh) and stops it at the end.
#
#   tools/pg_bench.sh [--ledgers N] [--appends N] [--rounds N] [--scratch DIR]
# (single appends: N rounds alternating ours-files, ours-postgres, psql; best of each)
set -euo pipefail
cd "$(dirname "$0")/.."

ledgers=100
appends=2000
rounds=3
scratch=tools/scratch/pg_bench
while [ $# -gt 0 ]; do
    case "$1" in
        --ledgers) ledgers="$2"; shift ;;
        --appends) appends="$2"; shift ;;
        --rounds) rounds="$2"; shift ;;
        --scratch) scratch="$2"; shift ;;
        --help|-h) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "pg_bench: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

shared=../shared/data/apple-health
exports=()
for e in rgosdin-2019/export.zip bwassim-2021/export.zip k0rventen-2023/test-export.zip \
         k0rventen-2023/test-export-cn.zip ashtom-hkimport-2017/export.xml dogsheep-fixtures-2019/export.xml; do
    [ -f "$shared/$e" ] && exports+=("$shared/$e")
done
if [ ${#exports[@]} = 0 ]; then
    echo "pg_bench: SKIPPED: no exports under $shared" >&2
    exit 0
fi

. tools/pg_server.sh
rm -rf "$scratch"
mkdir -p "$scratch/out"
trap 'pg_stop; rm -rf "$scratch"' EXIT
pg_start

echo "== HEALTHLEDGER_POSTGRES=1 swift build -c release" >&2
# Its own scratch path: the default release build (no libpq) stays as it is.
HEALTHLEDGER_POSTGRES=1 swift build -c release --product healthledger --scratch-path .build/postgres \
    >"$scratch/build.log" 2>&1 || { cat "$scratch/build.log" >&2; exit 1; }
bin=$(pwd)/.build/postgres/release/healthledger
export HEALTHLEDGER_CACHE="$scratch/cache"

now() { date +%s.%N; }
location() {  # store index
    if [ "$1" = files ]; then echo "$scratch/files/ledger-$2"; else echo "$PG_URL?ledger=bench-$2"; fi
}
worker() {  # store first-index: imports every second ledger
    local store=$1 i=$2
    while [ "$i" -lt "$ledgers" ]; do
        "$bin" --ledger "$(location "$store" "$i")" --json import-apple-health "${exports[$((i % ${#exports[@]}))]}" \
            >"$scratch/out/$store-$i.json" 2>"$scratch/out/$store-$i.err" \
            || { echo "pg_bench: import $store $i failed:" >&2; cat "$scratch/out/$store-$i.err" >&2; return 1; }
        i=$((i + 2))
    done
}
import_run() {  # store → prints "seconds samples"
    local store=$1 t0 t1
    mkdir -p "$scratch/files"
    t0=$(now)
    worker "$store" 0 & local a=$!
    worker "$store" 1 & local b=$!
    wait $a; wait $b
    t1=$(now)
    python3 - "$scratch/out" "$store" "$t0" "$t1" <<'PY'
import json, os, sys
folder, store, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
samples = 0
for name in os.listdir(folder):
    if name.startswith(store + "-") and name.endswith(".json"):
        with open(os.path.join(folder, name)) as f:
            samples += json.loads(f.readline())["samplesSaved"]
print(f"{t1 - t0:.3f} {samples}")
PY
}

echo "== $ledgers ledgers from ${#exports[@]} exports, 2 worker processes" >&2
read -r files_s files_n < <(import_run files)
read -r pg_s pg_n < <(import_run pg)
[ "$files_n" = "$pg_n" ] || { echo "pg_bench: sample counts differ: files $files_n, postgres $pg_n" >&2; exit 1; }
# A PostgreSQL ledger verifies, and copies back to a folder (same chain head, checked by copy).
"$bin" --ledger "$(location pg 0)" verify >/dev/null
"$bin" copy "$(location pg 0)" "$scratch/roundtrip" >/dev/null

# Durable single appends: one commit per line.
setup() {
    "$bin" --ledger "$1" init >/dev/null
    "$bin" --ledger "$1" app register --app com.example.bench --name Bench --share-purpose bench --read-purpose bench >/dev/null
    "$bin" --ledger "$1" --app com.example.bench request --share bodyMass >/dev/null
    "$bin" --ledger "$1" authorize --app com.example.bench --share bodyMass >/dev/null
}
python3 - "$appends" >"$scratch/lines.jsonl" <<'PY'
import sys, datetime
for i in range(int(sys.argv[1])):
    t = datetime.datetime.fromtimestamp(1_700_000_000 + 60 * i, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    print('{"type":"bodyMass","value":%s,"unit":"kg","start":"%s"}' % (60 + (i % 400) / 10, t))
PY
single() {  # location → appends/s
    setup "$1"
    local t0 t1
    t0=$(now)
    "$bin" --ledger "$1" ingest --app com.example.bench --batch 1 <"$scratch/lines.jsonl" >/dev/null
    t1=$(now)
    python3 -c "print(f'{$appends / ($t1 - $t0):.0f}')"
}
echo "== $appends durable single appends, $rounds rounds alternating (best of each)" >&2
psql_url="$PG_URL"
psql -X -q "$psql_url" -c "CREATE TABLE bench_rows (id bigserial PRIMARY KEY, payload bytea NOT NULL)"
python3 - "$appends" >"$scratch/inserts.sql" <<'PY'
import sys
for i in range(int(sys.argv[1])):
    print("INSERT INTO bench_rows (payload) VALUES ('\\x%s');" % (("%02x" % (i % 256)) * 100))
PY
psql_single() {
    local t0 t1
    t0=$(now)
    psql -X -q "$psql_url" -v ON_ERROR_STOP=1 -c "SET synchronous_commit TO on" -f "$scratch/inserts.sql" >/dev/null
    t1=$(now)
    python3 -c "print(f'{$appends / ($t1 - $t0):.0f}')"
}
files_all=(); pg_all=(); psql_all=()
for r in $(seq 1 "$rounds"); do
    files_all+=("$(single "$scratch/files/single-$r")")
    pg_all+=("$(single "$PG_URL?ledger=bench-single-$r")")
    psql_all+=("$(psql_single)")
done
best() { printf '%s\n' "$@" | sort -n | tail -1; }
files_a=$(best "${files_all[@]}"); pg_a=$(best "${pg_all[@]}"); psql_a=$(best "${psql_all[@]}")
echo "rounds (appends/s): files ${files_all[*]}; postgresql ${pg_all[*]}; psql ${psql_all[*]}"

python3 - "$files_s" "$pg_s" "$files_n" "$files_a" "$pg_a" "$psql_a" "$ledgers" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import sys
files_s, pg_s, n, files_a, pg_a, psql_a = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
ledgers, cores, load = sys.argv[7], sys.argv[8], sys.argv[9]
print(f"machine: {cores} cores, load average {load} at the end (shared with other builds: compare ratios, not absolutes)")
print(f"import, {ledgers} ledgers, 2 worker processes, {n} samples each way:")
print(f"  files       {files_s:8.2f} s  {n / files_s:10.0f} samples/s")
print(f"  postgresql  {pg_s:8.2f} s  {n / pg_s:10.0f} samples/s   ratio postgres/files {files_s / pg_s:.2f}")
print(f"durable single appends (one commit each):")
print(f"  healthledger ingest --batch 1, files       {files_a:8.0f} appends/s")
print(f"  healthledger ingest --batch 1, postgresql  {pg_a:8.0f} appends/s")
print(f"  psql one-row INSERT commits (peer)         {psql_a:8.0f} commits/s   ratio ours(postgresql)/psql {pg_a / psql_a:.2f}")
PY
