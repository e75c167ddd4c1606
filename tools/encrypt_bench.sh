#!/usr/bin/env bash
# Encrypted vs plain ledgers (issue 32), the same binary, the same data, one run:
#   import   `import-apple-health` of the ~200 MB synthetic export (big.zip), durable
#   ingest   `ingest` of 1M step samples (JSON Lines), durable, batches of 1,000
#   query    `query --owner stepCount --json` of those 1M samples (opening included:
#            an encrypted ledger writes no snapshot yet, so it replays at every open)
#   verify   `verify` of the 1M ledger
# and prints, per item, wall / CPU / peak RSS of each and the slowdown of the
# encrypted one (goal: at most 1.15x), and checks the two answers are byte-identical.
#
#   tools/encrypt_bench.sh [--runs N] [--scratch DIR]
#
# HEALTHLEDGER_BIN names the binary (default: a release build made here). Data:
# DIR/big.zip (tools/import_bench.sh makes it) and DIR/read-1000000.jsonl
# (tools/read_bench.sh --samples 1000000 makes it); an item whose data is absent is
# skipped, saying so. Needs GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
scratch=tools/scratch
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift ;;
        --scratch) scratch="$2"; shift ;;
        --help|-h) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "encrypt_bench: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[[ "$runs" =~ ^[1-9][0-9]?$ ]] || { echo "encrypt_bench: --runs takes 1-99" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "encrypt_bench: needs GNU time at /usr/bin/time" >&2; exit 1; }

bin=${HEALTHLEDGER_BIN:-}
if [ -z "$bin" ]; then
    swift build -c release --product healthledger >&2
    bin=.build/release/healthledger
fi
[ -x "$bin" ] || { echo "encrypt_bench: no healthledger binary at $bin" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/encrypt-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
kek="$work/kek"

# Runs "$@" $runs times after `setup`, prints "best-wall cpu-of-best peak-rss-MB".
measure() {
    local out=$1 in=$2 setup=$3; shift 3
    local best="" bestcpu="" bestrss=""
    for _ in $(seq "$runs"); do
        "$setup"
        /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$@" < "$in" > "$out"
        read -r secs user sys rss < "$work/time.txt"
        if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then
            best=$secs; bestcpu=$(awk "BEGIN{printf \"%.2f\", $user + $sys}"); bestrss=$rss
        fi
    done
    echo "$best $bestcpu $((bestrss / 1024))"
}

rows=()
failed=0
compare() {  # item plain-result encrypted-result
    local pw pc pr ew ec er
    read -r pw pc pr <<< "$2"; read -r ew ec er <<< "$3"
    local ratio; ratio=$(awk "BEGIN{printf \"%.2f\", $ew / $pw}")
    local verdict=ok
    awk "BEGIN{exit !($ew / $pw > 1.15)}" && verdict="OVER 1.15x"
    rows+=("$1|$pw|$pc|$pr|$ew|$ec|$er|${ratio}x|$verdict")
}

app=com.example.bench
step=HKQuantityTypeIdentifierStepCount
new_ledger() {  # path encrypted(0/1)
    rm -rf "$1" "$kek"
    if [ "$2" = 1 ]; then
        "$bin" --ledger "$1" --tz UTC init --encrypt --key-file "$kek" >/dev/null
    else
        "$bin" --ledger "$1" --tz UTC init >/dev/null
    fi
}
with_key() { env HEALTHLEDGER_KEY_FILE="$kek" "$@"; }

# --- import ---------------------------------------------------------------------------
if [ -f "$scratch/big.zip" ]; then
    echo "== import of big.zip ($runs runs each)" >&2
    fresh_plain_import() { new_ledger "$work/import-plain" 0; }
    fresh_enc_import() { new_ledger "$work/import-enc" 1; }
    p=$(measure /dev/null /dev/null fresh_plain_import "$bin" --ledger "$work/import-plain" import-apple-health "$scratch/big.zip")
    e=$(measure /dev/null /dev/null fresh_enc_import env HEALTHLEDGER_KEY_FILE="$kek" "$bin" --ledger "$work/import-enc" import-apple-health "$scratch/big.zip")
    compare import "$p" "$e"
    for t in stepCount heartRate; do
        "$bin" --ledger "$work/import-plain" --owner query $t --json > "$work/imp-$t-plain.jsonl"
        with_key "$bin" --ledger "$work/import-enc" --owner query $t --json > "$work/imp-$t-enc.jsonl"
        if cmp -s "$work/imp-$t-plain.jsonl" "$work/imp-$t-enc.jsonl"; then
            echo "import: query $t identical ($(wc -l < "$work/imp-$t-plain.jsonl") lines)" >&2
        else
            echo "import: query $t DIFFERS" >&2; failed=1
        fi
    done
    echo "import: log $(stat -c %s "$work/import-plain/ledger.log") vs $(stat -c %s "$work/import-enc/ledger.log") bytes; keys.bin $(stat -c %s "$work/import-enc/keys/keys.bin") bytes" >&2
else
    echo "encrypt_bench: SKIPPED import: no $scratch/big.zip (tools/import_bench.sh makes it)" >&2
fi

# --- ingest, query, verify of 1M --------------------------------------------------------
jsonl="$scratch/read-1000000.jsonl"
if [ -f "$jsonl" ]; then
    prepare() {  # path encrypted
        new_ledger "$1" "$2"
        local run=("$bin"); [ "$2" = 1 ] && run=(with_key "$bin")
        "${run[@]}" --ledger "$1" app register --app $app --name Bench --share-purpose s --read-purpose r >/dev/null
        "${run[@]}" --ledger "$1" --app $app request --share stepCount --read stepCount >/dev/null
        "${run[@]}" --ledger "$1" authorize --app $app --share stepCount --read stepCount >/dev/null
    }
    fresh_plain() { prepare "$work/plain" 0; }
    fresh_enc() { prepare "$work/enc" 1; }
    echo "== ingest of 1M ($runs runs each)" >&2
    p=$(measure /dev/null "$jsonl" fresh_plain "$bin" --ledger "$work/plain" ingest --app $app --batch 1000)
    e=$(measure /dev/null "$jsonl" fresh_enc env HEALTHLEDGER_KEY_FILE="$kek" "$bin" --ledger "$work/enc" ingest --app $app --batch 1000)
    compare ingest "$p" "$e"
    noop() { :; }
    echo "== query of 1M ($runs runs each)" >&2
    p=$(measure "$work/q-plain.jsonl" /dev/null noop "$bin" --ledger "$work/plain" query --owner stepCount --json)
    e=$(measure "$work/q-enc.jsonl" /dev/null noop env HEALTHLEDGER_KEY_FILE="$kek" "$bin" --ledger "$work/enc" query --owner stepCount --json)
    compare query "$p" "$e"
    if cmp -s "$work/q-plain.jsonl" "$work/q-enc.jsonl"; then
        echo "query: identical ($(wc -l < "$work/q-plain.jsonl") lines)" >&2
    else
        echo "query: DIFFERS" >&2; failed=1
    fi
    echo "== verify of 1M ($runs runs each)" >&2
    p=$(measure /dev/null /dev/null noop "$bin" --ledger "$work/plain" verify)
    e=$(measure /dev/null /dev/null noop env HEALTHLEDGER_KEY_FILE="$kek" "$bin" --ledger "$work/enc" verify)
    compare verify "$p" "$e"
    echo "1M: log $(stat -c %s "$work/plain/ledger.log") vs $(stat -c %s "$work/enc/ledger.log") bytes; plain snapshots: $(ls "$work/plain/snapshots" 2>/dev/null | wc -l), encrypted: $(ls "$work/enc/snapshots" 2>/dev/null | wc -l)" >&2
else
    echo "encrypt_bench: SKIPPED ingest/query/verify: no $jsonl (tools/read_bench.sh --samples 1000000 makes it)" >&2
fi

printf '%-8s | %-24s | %-24s | %-7s | %s\n' item "plain: wall cpu rss" "encrypted: wall cpu rss" ratio verdict
for r in "${rows[@]}"; do
    IFS='|' read -r item pw pc pr ew ec er ratio verdict <<< "$r"
    printf '%-8s | %6ss %6ss %6s MB | %6ss %6ss %6s MB | %-7s | %s\n' "$item" "$pw" "$pc" "$pr" "$ew" "$ec" "$er" "$ratio" "$verdict"
done
exit $failed
