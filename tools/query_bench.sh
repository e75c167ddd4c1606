#!/usr/bin/env bash
# Read benchmark: `healthledger query` and `latest` against Python's sqlite3 over an
# indexed table, same samples, same output, same run.
#
#   tools/query_bench.sh [--samples N]... [--runs R] [--scratch DIR]
#
# --samples N  step samples to save (default: 200000; repeat for more sizes, e.g.
#              --samples 200000 --samples 2000000)
# --runs R     runs of each timed command (default 3; the best is reported)
# --scratch    where ledgers, databases and outputs live (default tools/scratch)
#
# Per size: N step-count samples with shuffled start dates are saved with
# `healthledger ingest --batch 1000` (records of 1,000 samples) and loaded into
# SQLite (index on type, start, end). Timed, as whole processes (GNU time: wall
# seconds and peak RSS):
#   query   `healthledger query --owner stepCount --json` (all of them, newest first)
#           vs `SELECT … ORDER BY start DESC, end DESC, rowid DESC` written as the
#           same JSON Lines (the two outputs are compared byte for byte);
#   metadata `query … --where 'metadata.HKWasUserEntered = true'` (one sample in ten)
#           vs the same SELECT with json_extract over the stored metadata;
#   limit1  `query … --limit 1`: the cost of opening the ledger, as a baseline RSS;
#   latest  `healthledger latest --owner stepCount` vs the peer's LIMIT 1 query.
# Needs a release build (`swift build -c release --product healthledger`, done here).
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=()
runs=3
scratch=tools/scratch
while [ $# -gt 0 ]; do
    case "$1" in
        --samples) sizes+=("$2"); shift ;;
        --runs) runs="$2"; shift ;;
        --scratch) scratch="$2"; shift ;;
        --help|-h) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "query_bench: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ ${#sizes[@]} -gt 0 ] || sizes=(200000)
[ -x /usr/bin/time ] || { echo "query_bench: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }

swift build -c release --product healthledger >&2
bin=$(swift build -c release --show-bin-path)/healthledger
peer=tools/peers/sqlite_query_peer.py
mkdir -p "$scratch"

# best of R runs of a command writing to OUT: "wall_seconds cpu_seconds rss_mb" (the run
# with the least wall time; CPU = user + sys, steadier than wall on a busy machine)
measure() {
    local out=$1; shift
    local best="" bestcpu="" bestrss=""
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e %U %S %M" -o "$scratch/time.txt" "$@" > "$out"
        read -r secs user sys rss < "$scratch/time.txt"
        if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then
            best=$secs; bestcpu=$(awk "BEGIN{printf \"%.2f\", $user + $sys}"); bestrss=$rss
        fi
    done
    echo "$best $bestcpu $((bestrss / 1024))"
}

printf '%-9s %-8s %-18s %8s %8s %8s\n' samples what tool wall_s cpu_s rss_MB
for n in "${sizes[@]}"; do
    ledger="$scratch/query-$n.ledger" db="$scratch/query-$n.sqlite" input="$scratch/query-$n.jsonl"
    # (re)made when absent or older than the generator (its data format changed)
    if [ ! -f "$ledger/ledger.log" ] || [ ! -f "$db" ] || [ "$peer" -nt "$db" ]; then
        echo "== preparing $n samples (once)" >&2
        rm -rf "$ledger"
        python3 "$peer" gen "$n" 7 "$input"
        "$bin" --ledger "$ledger" init >/dev/null
        "$bin" --ledger "$ledger" app register --app com.example.bench --name Bench --share-purpose s --read-purpose r >/dev/null
        "$bin" --ledger "$ledger" authorize --app com.example.bench --share stepCount --read stepCount >/dev/null
        "$bin" --ledger "$ledger" ingest --app com.example.bench --batch 1000 < "$input" >/dev/null
        python3 "$peer" load "$input" "$db"
    fi
    read -r s c r <<< "$(measure "$scratch/ours.jsonl" "$bin" --ledger "$ledger" query --owner stepCount --json)"
    read -r ps pc pr <<< "$(measure "$scratch/peer.jsonl" python3 "$peer" query "$db" stepCount)"
    same=$(cmp -s "$scratch/ours.jsonl" "$scratch/peer.jsonl" && echo "identical output" || echo "OUTPUTS DIFFER")
    printf '%-9s %-8s %-18s %8s %8s %8s\n' "$n" query healthledger "$s" "$c" "$r"
    printf '%-9s %-8s %-18s %8s %8s %8s   wall %sx, cpu %sx ours; %s, %s lines\n' "$n" query "sqlite3 (python)" "$ps" "$pc" "$pr" \
        "$(awk "BEGIN{printf \"%.1f\", $ps / $s}")" "$(awk "BEGIN{printf \"%.1f\", $pc / $c}")" "$same" "$(wc -l < "$scratch/ours.jsonl")"
    read -r s c r <<< "$(measure "$scratch/ours-meta.jsonl" "$bin" --ledger "$ledger" query --owner stepCount --json --where 'metadata.HKWasUserEntered = true')"
    read -r ps pc pr <<< "$(measure "$scratch/peer-meta.jsonl" python3 "$peer" where-user-entered "$db" stepCount)"
    same=$(cmp -s "$scratch/ours-meta.jsonl" "$scratch/peer-meta.jsonl" && echo "identical output" || echo "OUTPUTS DIFFER")
    printf '%-9s %-8s %-18s %8s %8s %8s\n' "$n" metadata healthledger "$s" "$c" "$r"
    printf '%-9s %-8s %-18s %8s %8s %8s   wall %sx, cpu %sx ours; %s, %s lines\n' "$n" metadata "sqlite3 (python)" "$ps" "$pc" "$pr" \
        "$(awk "BEGIN{printf \"%.1f\", $ps / $s}")" "$(awk "BEGIN{printf \"%.1f\", $pc / $c}")" "$same" "$(wc -l < "$scratch/ours-meta.jsonl")"
    read -r s c r <<< "$(measure /dev/null "$bin" --ledger "$ledger" query --owner stepCount --json --limit 1 2>/dev/null)"
    printf '%-9s %-8s %-18s %8s %8s %8s   (opening the ledger: the RSS baseline)\n' "$n" limit1 healthledger "$s" "$c" "$r"
    now=2031-01-01T00:00:00Z
    read -r s c r <<< "$(measure "$scratch/ours-latest.jsonl" "$bin" --ledger "$ledger" latest --owner stepCount --now $now --json)"
    read -r ps pc pr <<< "$(measure "$scratch/peer-latest.jsonl" python3 "$peer" latest "$db" stepCount $now)"
    printf '%-9s %-8s %-18s %8s %8s %8s\n' "$n" latest healthledger "$s" "$c" "$r"
    printf '%-9s %-8s %-18s %8s %8s %8s   %s\n' "$n" latest "sqlite3 (python)" "$ps" "$pc" "$pr" \
        "$(cmp -s "$scratch/ours-latest.jsonl" "$scratch/peer-latest.jsonl" && echo "identical output" || echo "OUTPUTS DIFFER")"
done
