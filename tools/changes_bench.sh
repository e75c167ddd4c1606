#!/usr/bin/env bash
# Change-feed benchmark: catching up from an anchor, and commit-to-follower latency.
#
#   tools/changes_bench.sh [--samples N] [--commits C] [--runs R] [--scratch DIR]
#
# --samples N  step samples in the ledger (default 1000000; ingested in records of 1,000)
# --commits C  commits for the latency measurement (default 1000)
# --runs R     runs of each timed catch-up (default 3; the best is reported)
#
# catch-up: the anchor after the first 1,000 changes (`changes --limit 1000`), then
#   `healthledger --json changes stepCount --owner --anchor A | cat > out` (N − 1,000
#   changes, JSON Lines through a pipe) vs Python sqlite3 reading the same rows by
#   `rowid > 1000` and writing the same lines (same run; the sample objects are
#   compared, the anchor line aside).
# latency: a `changes --follow` process on a small ledger while C `save` processes
#   commit one sample each (tools/peers/changes_peer.py latency).
set -euo pipefail
cd "$(dirname "$0")/.."
n=1000000 commits=1000 runs=3 scratch=tools/scratch
while [ $# -gt 0 ]; do
    case "$1" in
        --samples) n="$2"; shift ;;
        --commits) commits="$2"; shift ;;
        --runs) runs="$2"; shift ;;
        --scratch) scratch="$2"; shift ;;
        --help|-h) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "changes_bench: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
swift build -c release --product healthledger >&2
bin=$(swift build -c release --show-bin-path)/healthledger
gen=tools/peers/sqlite_query_peer.py peer=tools/peers/changes_peer.py
mkdir -p "$scratch"
ledger="$scratch/changes-$n.ledger" db="$scratch/changes-$n.sqlite" input="$scratch/changes-$n.jsonl"
if [ ! -f "$ledger/ledger.log" ] || [ ! -f "$db" ]; then
    echo "== preparing $n samples (once)" >&2
    rm -rf "$ledger"
    python3 "$gen" gen "$n" 7 "$input"
    "$bin" --ledger "$ledger" init >/dev/null
    "$bin" --ledger "$ledger" app register --app com.example.bench --name Bench --share-purpose s --read-purpose r >/dev/null
    "$bin" --ledger "$ledger" authorize --app com.example.bench --share stepCount --read stepCount >/dev/null
    "$bin" --ledger "$ledger" ingest --app com.example.bench --batch 1000 < "$input" >/dev/null
    python3 "$gen" load "$input" "$db"
fi
anchor=$("$bin" --ledger "$ledger" changes stepCount --owner --limit 1000 | tail -1 | cut -d' ' -f2)
best() {  # best wall seconds of R runs of a pipeline given as a string
    local b=""
    for _ in $(seq "$runs"); do
        local s e
        s=$(date +%s.%N); bash -c "$1"; e=$(date +%s.%N)
        local t; t=$(awk "BEGIN{printf \"%.3f\", $e - $s}")
        if [ -z "$b" ] || awk "BEGIN{exit !($t < $b)}"; then b=$t; fi
    done
    echo "$b"
}
ours=$(best "'$bin' --ledger '$ledger' --json changes stepCount --owner --anchor '$anchor' | cat > '$scratch/changes-ours.jsonl'")
theirs=$(best "python3 '$peer' catchup '$db' 1000 | cat > '$scratch/changes-peer.jsonl'")
same=$(cmp -s <(head -n -1 "$scratch/changes-ours.jsonl") "$scratch/changes-peer.jsonl" && echo "identical lines" || echo "OUTPUTS DIFFER")
lines=$(($(wc -l < "$scratch/changes-ours.jsonl") - 1))
echo "catch-up $lines changes: healthledger ${ours}s, sqlite3 (python) ${theirs}s ($(awk "BEGIN{printf \"%.1f\", $theirs / $ours}")x); $same"
small="$scratch/changes-latency.ledger"
rm -rf "$small"
"$bin" --ledger "$small" init >/dev/null
"$bin" --ledger "$small" app register --app com.example.bench --name Bench --share-purpose s --read-purpose r >/dev/null
"$bin" --ledger "$small" authorize --app com.example.bench --share stepCount --read stepCount >/dev/null
python3 "$peer" latency "$bin" "$small" "$commits"
