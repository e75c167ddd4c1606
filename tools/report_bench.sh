#!/usr/bin/env bash
# Report benchmark: `healthledger report --owner` of the ~200 MB synthetic import
# (about 740,000 samples, the export tools/import_bench.sh makes), against its own
# parts run alone in the same run: `verify` (the report runs a full verify) and
# `stats` (a replay and a count per type and source).
#
#   tools/report_bench.sh [--runs N] [--scratch DIR] [--before BIN]
#
# --runs N   runs of each (default 3; the best and all are printed)
# --scratch  where big.zip, bench.ledger and the reports live (default tools/scratch,
#            which git ignores); a missing ledger is imported from big.zip, a missing
#            big.zip generated from ../shared as tools/import_bench.sh does.
# --before   another healthledger binary (an older build) whose report is measured
#            in the same runs, interleaved, as "before" (its page is compared too)
#
# Prints wall and CPU (user + system) seconds, peak RSS (GNU time), the report's
# size, and the targets: under 2 s and under 2 MB. On a loaded machine CPU time is
# what the report costs; wall time is what it waited.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
scratch=tools/scratch
before=
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift ;;
        --scratch) scratch="$2"; shift ;;
        --before) before="$2"; shift ;;
        --help|-h) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "report_bench: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -x /usr/bin/time ] || { echo "report_bench: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }

mkdir -p "$scratch"
zip="$scratch/big.zip"
ledger="$scratch/bench.ledger"
if [ ! -f "$ledger/ledger.log" ] && [ ! -f "$zip" ]; then
    gen=../shared/tools/synth_apple_health.py
    seed=../shared/data/apple-health/bwassim-2021/export.zip
    if [ ! -f "$gen" ] || [ ! -f "$seed" ]; then echo "report_bench: SKIPPED: $gen or $seed is absent" >&2; exit 0; fi
    echo "== generating the ~200 MB export (once)" >&2
    python3 "$gen" "$seed" "$scratch/big.xml" --target-mb 200 --zip "$zip" >&2
fi

echo "== release build" >&2
swift build -c release --product healthledger >&2
bin=.build/release/healthledger

if [ ! -f "$ledger/ledger.log" ]; then
    echo "== importing $zip (once)" >&2
    "$bin" --ledger "$ledger" import-apple-health "$zip" >&2
fi
echo "ledger: $(du -sh "$ledger" | cut -f1), $("$bin" --ledger "$ledger" --json stats | python3 -c 'import sys,json; d=json.load(sys.stdin); print(sum(sum(v.values()) for v in d["samples"].values()), "samples,", d["eventsTotal"], "events")')" >&2

results="$scratch/report-bench.tsv"
: >"$results"
measure() {  # NAME command...: appends "name seconds rssKB cpuSeconds"
    local name="$1"; shift
    local t="$scratch/time.txt"
    if ! /usr/bin/time -f "%e %M %U %S" -o "$t" "$@" >"$scratch/out.txt" 2>"$scratch/err.txt"; then
        echo "report_bench: $name FAILED:" >&2; tail -5 "$scratch/err.txt" >&2; return 1
    fi
    read -r seconds rss user sys <"$t"
    cpu=$(python3 -c "print(f'{$user + $sys:.2f}')")
    printf '%s\t%s\t%s\t%s\n' "$name" "$seconds" "$rss" "$cpu" >>"$results"
    printf '  %-10s %6.2f s wall  %6.2f s CPU  %6d MB peak\n' "$name" "$seconds" "$cpu" $((rss / 1024)) >&2
}
out="$scratch/report-big.html"
for run in $(seq 1 "$runs"); do
    measure report "$bin" --ledger "$ledger" report --owner --out "$out"
    if [ -n "$before" ]; then measure before "$before" --ledger "$ledger" report --owner --out "$scratch/report-big-before.html"; fi
    measure verify "$bin" --ledger "$ledger" verify
    measure stats "$bin" --ledger "$ledger" stats
done
bytes=$(stat -c %s "$out")
if [ -n "$before" ]; then
    # the pages may differ only in the report's time and the --out name (in the rebuild command)
    if python3 - "$scratch/report-big-before.html" "$out" <<'PY'
import re, sys
def page(path):
    s = open(path).read()
    s = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "TIME", s)
    s = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "TIME", s)
    return s.replace(sys.argv[1], "OUT").replace(sys.argv[2], "OUT")
sys.exit(0 if page(sys.argv[1]) == page(sys.argv[2]) else 1)
PY
    then
        echo "before and after pages: the same (but for the report's time and file name)" >&2
    else
        echo "before and after pages DIFFER: compare $scratch/report-big-before.html with $out" >&2
    fi
    echo "before page: $(stat -c %s "$scratch/report-big-before.html") bytes" >&2
fi
python3 - "$results" "$bytes" <<'PY'
import sys, collections
rows = [l.split("\t") for l in open(sys.argv[1]) if l.strip()]
best = collections.OrderedDict()
for name, s, rss, cpu in rows:
    best.setdefault(name, []).append((float(s), int(rss), float(cpu)))
for name, v in best.items():
    print(f"{name}: wall {', '.join(f'{s:.2f}' for s, _, _ in v)} s (best {min(s for s, _, _ in v):.2f}); "
          f"CPU {', '.join(f'{c:.2f}' for _, _, c in v)} s (best {min(c for _, _, c in v):.2f}); peak RSS {max(r for _, r, _ in v) // 1024} MB")
r, v = min(s for s, _, _ in best["report"]), min(s for s, _, _ in best["verify"])
if "before" in best:
    b = min(s for s, _, _ in best["before"])
    bc = min(c for _, _, c in best["before"])
    print(f"report / before: wall {r / b:.2f}, CPU {min(c for _, _, c in best['report']) / bc:.2f}")
rc = min(c for _, _, c in best["report"])
size = int(sys.argv[2])
print(f"report / verify: {r / v:.2f}")
print(f"report size: {size} bytes ({size / 1e6:.2f} MB)")
print(f"targets: time {'MET' if r < 2 else 'MISSED'} (wall {r:.2f} s < 2 s; CPU {rc:.2f} s), size {'MET' if size < 2e6 else 'MISSED'} ({size / 1e6:.2f} MB < 2 MB)")
print(f"load average at the end: {open('/proc/loadavg').read().split()[0]} (a shared machine: compare within the run)")
PY
