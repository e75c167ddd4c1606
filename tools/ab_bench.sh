#!/usr/bin/env bash
# A/B benchmark of two `healthledger` release binaries on the same inputs, in one run,
# runs interleaved (A, B, A, B, …) so that this machine's drift hits both alike:
# import of an Apple Health export into a new ledger (durable) and its re-import,
# ingest of JSON Lines (durable appends), then on a ledger each binary built with the
# same ingest (their snapshot formats may differ): query all, daily statistics, the
# whole change feed, replay without a snapshot, and verify.
# Prints per task the best wall time of each binary, B/A, and B's peak RSS; checks
# that both binaries print the same bytes for every read.
#
#   tools/ab_bench.sh A_BIN B_BIN --zip EXPORT.zip --jsonl SAMPLES.jsonl [--runs N] [--scratch DIR]
#
# SAMPLES.jsonl: one step sample per line as `ingest` reads it (tools/read_bench.sh
# writes tools/scratch/read-1000000.jsonl); EXPORT.zip: e.g. tools/scratch/big.zip
# (tools/import_bench.sh makes it). Needs GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 2 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
a=$1 b=$2; shift 2
runs=3 scratch=tools/scratch zip="" jsonl="" own_ledgers=
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift ;;
        --scratch) scratch="$2"; shift ;;
        --zip) zip="$2"; shift ;;
        --jsonl) jsonl="$2"; shift ;;
        *) echo "ab_bench: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
for f in "$a" "$b"; do [ -x "$f" ] || { echo "ab_bench: not an executable: $f" >&2; exit 2; }; done
[ -f "$zip" ] || { echo "ab_bench: SKIPPED: no export zip (--zip)" >&2; exit 2; }
[ -f "$jsonl" ] || { echo "ab_bench: SKIPPED: no samples (--jsonl)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "ab_bench: needs GNU time at /usr/bin/time" >&2; exit 2; }
work="$scratch/ab"
rm -rf "$work" && mkdir -p "$work"
app=com.example.bench

# measure BIN OUT SETUP -- ARGS…: runs SETUP, then BIN ARGS with stdout to OUT; prints "wall rss_kb".
measure() {
    local bin=$1 out=$2 setup=$3; shift 3
    $setup "$bin"
    /usr/bin/time -f "%e %M" -o "$work/time" "$bin" "$@" > "$out" 2> "$work/stderr" || {
        echo "ab_bench: $bin $* failed:" >&2; cat "$work/stderr" >&2; exit 1; }
    cat "$work/time"
}
none() { :; }
fresh() { rm -rf "$work/l"; "$1" --ledger "$work/l" --tz UTC init > /dev/null; }
ingest_ready() {
    fresh "$1"
    "$1" --ledger "$work/l" app register --app $app --name Bench --share-purpose s --read-purpose r > /dev/null
    "$1" --ledger "$work/l" --app $app request --share stepCount --read stepCount > /dev/null
    "$1" --ledger "$work/l" authorize --app $app --share stepCount --read stepCount > /dev/null
}
imported() { fresh "$1"; "$1" --ledger "$work/l" import-apple-health "$zip" > /dev/null; }

printf '%-10s %9s %9s %7s %10s %s\n' task "A s" "B s" "B/A" "B RSS MB" same-output
# task NAME SETUP STDIN ARGS…: best of $runs for each binary, interleaved. The writes'
# outputs (timings, fresh ids) are not compared ("-").
task() {
    local name=$1 setup=$2 input=$3; shift 3
    local best_a=999999 best_b=999999 rss_b=0 same=yes
    case $name in import|reimport|ingest) same=- ;; esac
    for ((i = 0; i < runs; i++)); do
        for which in a b; do
            local bin=${!which}
            local ledger="$work/l"
            [ -n "$own_ledgers" ] && ledger="$work/l-$which"
            read -r wall rss < <(measure "$bin" "$work/out-$which" "$setup" --ledger "$ledger" "$@" < "$input")
            if [ "$which" = a ]; then
                best_a=$(awk -v x="$wall" -v y="$best_a" 'BEGIN{print (x<y)?x:y}')
            else
                best_b=$(awk -v x="$wall" -v y="$best_b" 'BEGIN{print (x<y)?x:y}')
                rss_b=$rss
            fi
        done
        [ "$same" = - ] || cmp -s "$work/out-a" "$work/out-b" || same=no
    done
    printf '%-10s %9.2f %9.2f %7.2f %10.0f %s\n' "$name" "$best_a" "$best_b" \
        "$(awk -v x="$best_b" -v y="$best_a" 'BEGIN{print x/y}')" "$((rss_b / 1024))" "$same"
}

task import fresh /dev/null import-apple-health "$zip"
task reimport imported /dev/null import-apple-health "$zip"
task ingest ingest_ready "$jsonl" ingest --app $app --batch 1000
# The reads: each binary on the ledger it built from the same ingest (a snapshot of
# another format would be skipped and the log replayed). replay --json prints the
# projection digest: its output differs where the digest's definition does.
own_ledgers=
for which in a b; do
    ingest_ready "${!which}"
    "${!which}" --ledger "$work/l" ingest --app $app --batch 1000 < "$jsonl" > /dev/null
    rm -rf "$work/l-$which"
    mv "$work/l" "$work/l-$which"
done
own_ledgers=1
task query none /dev/null query --owner stepCount --json
task daily none /dev/null statistics stepCount --owner --sum --by day --tz UTC --json
task changes none /dev/null changes stepCount --owner --json
task replay none /dev/null replay --no-snapshot --json  # --json: the text says how long it took
task verify none /dev/null verify
