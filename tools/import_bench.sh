#!/usr/bin/env bash
# Import benchmark: `healthledger import-apple-health` against the tools people use
# today, on the same ~200 MB synthetic export, in the same run: the first import
# (then `verify`), a re-import of the same export (nothing new: only the bracket is
# appended), and the import of a newer export with 1% new records (a merge).
#
#   tools/import_bench.sh [--peers] [--runs N] [--scratch DIR]
#
# --peers    also run healthkit-to-sqlite, atlas-db and apple-health-parser, installed
#            from PyPI into a venv in the scratch folder on first use (network needed)
# --runs N   runs of each of our imports (default 3; the best and all are printed)
# --scratch  where big.xml, big.zip, the venv and the outputs live (default
#            tools/scratch, which git ignores)
#
# Needs ../shared (the generator and bwassim-2021/export.zip) and GNU time
# (/usr/bin/time) for peak RSS. Prints, per tool and input: wall seconds, XML MB/s,
# records/s, peak RSS (MB), and the ratio of its time to ours (our best run) —
# ours counted as the whole import (durable) plus `verify` afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

peers=0
runs=3
scratch=tools/scratch
while [ $# -gt 0 ]; do
    case "$1" in
        --peers) peers=1 ;;
        --runs) runs="$2"; shift ;;
        --scratch) scratch="$2"; shift ;;
        --help|-h) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "import_bench: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

shared=../shared
gen="$shared/tools/synth_apple_health.py"
seed="$shared/data/apple-health/bwassim-2021/export.zip"
if [ ! -f "$gen" ] || [ ! -f "$seed" ]; then
    echo "import_bench: SKIPPED: $gen or $seed is absent" >&2
    exit 0
fi
[ -x /usr/bin/time ] || { echo "import_bench: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }

mkdir -p "$scratch"
xml="$scratch/big.xml"
zip="$scratch/big.zip"
if [ ! -f "$xml" ] || [ ! -f "$zip" ]; then
    echo "== generating the ~200 MB export (once)" >&2
    python3 "$gen" "$seed" "$xml" --target-mb 200 --zip "$zip" >&2
fi
newer="$scratch/big-newer.xml"
if [ ! -f "$newer" ]; then
    echo "== deriving the newer export (1% new records: every 100th one-line Record, written again a second later)" >&2
    python3 - "$xml" "$newer" <<'PY'
import re, sys
src, out = sys.argv[1], sys.argv[2]
later = re.compile(rb'creationDate="(\d{4}-\d\d-\d\d \d\d:\d\d:)(\d\d)')
n = 0
with open(src, "rb") as f, open(out, "wb") as o:
    for line in f:
        o.write(line)
        if line.startswith(b" <Record ") and line.rstrip().endswith(b"/>"):
            n += 1
            if n % 100 == 0:
                o.write(later.sub(lambda m: b'creationDate="' + m.group(1) + b"%02d" % ((int(m.group(2)) + 1) % 60), line, count=1))
PY
fi
records=$(grep -c '^ <Record ' "$xml" || true)
xml_bytes=$(stat -c %s "$xml")
zip_bytes=$(stat -c %s "$zip")
echo "export: $xml ($xml_bytes bytes, $records top-level Records), $zip ($zip_bytes bytes)" >&2

echo "== release build" >&2
swift build -c release --product healthledger >&2
bin=.build/release/healthledger

results="$scratch/import-bench.tsv"
: >"$results"

# measure NAME INPUT -- command...: runs it under GNU time, appends "name input seconds rssKB"
measure() {
    local name="$1" input="$2"
    shift 3
    local t="$scratch/time.txt"
    if ! /usr/bin/time -f "%e %M" -o "$t" "$@" >"$scratch/out.txt" 2>"$scratch/err.txt"; then
        echo "import_bench: $name on $input FAILED:" >&2
        tail -5 "$scratch/err.txt" >&2
        return 0
    fi
    read -r seconds rss <"$t"
    printf '%s\t%s\t%s\t%s\n' "$name" "$input" "$seconds" "$rss" >>"$results"
    printf '  %-22s %-4s %8.2f s  %6d MB peak\n' "$name" "$input" "$seconds" $((rss / 1024)) >&2
}

ledger="$scratch/bench.ledger"
for input in xml zip; do
    path="$xml"; [ "$input" = zip ] && path="$zip"
    for run in $(seq 1 "$runs"); do
        rm -rf "$ledger"
        sync
        measure "healthledger import" "$input" -- "$bin" --ledger "$ledger" import-apple-health "$path"
        measure "healthledger verify" "$input" -- "$bin" --ledger "$ledger" verify
        if [ "$input" = xml ]; then
            measure "healthledger re-import" "$input" -- "$bin" --ledger "$ledger" import-apple-health "$path"
            measure "healthledger newer 1%" "$input" -- "$bin" --ledger "$ledger" import-apple-health "$newer"
            tail -1 "$scratch/out.txt" >&2 || true
        fi
    done
done
du -sh "$ledger" >&2

if [ "$peers" = 1 ]; then
    venv="${PEERS_VENV:-$scratch/peers-venv}"  # PEERS_VENV: an existing venv with the peers
    if [ ! -x "$venv/bin/healthkit-to-sqlite" ]; then
        echo "== installing the peers into $venv" >&2
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q healthkit-to-sqlite atlas-db apple-health-parser >&2
    fi
    "$venv/bin/pip" list 2>/dev/null | grep -E -i "^(healthkit-to-sqlite|atlas-db|apple-health-parser) " >&2 || true
    out="$scratch/peer-out"
    rm -rf "$out"; mkdir -p "$out"
    measure "healthkit-to-sqlite" xml -- "$venv/bin/healthkit-to-sqlite" --silent --xml "$xml" "$out/xml.db"
    measure "healthkit-to-sqlite" zip -- "$venv/bin/healthkit-to-sqlite" --silent "$zip" "$out/zip.db"
    measure "atlas-db" xml -- "$venv/bin/atlas" parquet "$xml" -o "$out/atlas.parquet"
    # apple-health-parser extracts into ./data and looks for <zip stem>.xml there:
    # give it the zip as export.zip in a folder of its own.
    mkdir -p "$out/ahp"
    ln -sf "$(realpath "$zip")" "$out/ahp/export.zip"
    measure "apple-health-parser" zip -- bash -c "cd '$out/ahp' && '$(realpath "$venv")/bin/apple-health-parser-export' --zip_file export.zip --dir_name csv"
fi

# The table: the best of our import+verify per input is the reference.
python3 - "$results" "$xml_bytes" "$records" <<'EOF'
import sys, collections
path, xml_bytes, records = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]
ours = {}
for inp in ("xml", "zip"):
    imports = [float(r[2]) for r in rows if r[0] == "healthledger import" and r[1] == inp]
    verifies = [float(r[2]) for r in rows if r[0] == "healthledger verify" and r[1] == inp]
    if imports:
        ours[inp] = min(imports) + (min(verifies) if verifies else 0)
        print(f"healthledger {inp}: import runs {', '.join(f'{t:.2f}' for t in imports)} s; verify runs {', '.join(f'{t:.2f}' for t in verifies)} s")
best = collections.OrderedDict()
for name, inp, sec, rss in rows:
    key = (name, inp)
    sec, rss = float(sec), int(rss)
    if key not in best or sec < best[key][0]:
        best[key] = (sec, max(rss, best.get(key, (0, 0))[1]))
    else:
        best[key] = (best[key][0], max(rss, best[key][1]))
print(f"\n{'tool':<22} {'input':<5} {'seconds':>8} {'XML MB/s':>9} {'records/s':>10} {'peak MB':>8} {'× ours':>7}")
for inp in ("xml", "zip"):
    if inp in ours:
        imp = best[("healthledger import", inp)]
        ver = best.get(("healthledger verify", inp), (0, 0))
        t = ours[inp]
        print(f"{'healthledger + verify':<22} {inp:<5} {t:8.2f} {xml_bytes / 1e6 / t:9.1f} {records / t:10.0f} {max(imp[1], ver[1]) // 1024:8d} {1:7.2f}")
for (name, inp), (sec, rss) in best.items():
    if name.startswith("healthledger"):
        if name == "healthledger import":
            print(f"{'  import alone':<22} {inp:<5} {sec:8.2f} {xml_bytes / 1e6 / sec:9.1f} {records / sec:10.0f} {rss // 1024:8d}")
        continue
    ref = ours.get(inp) or ours.get("xml")
    print(f"{name:<22} {inp:<5} {sec:8.2f} {xml_bytes / 1e6 / sec:9.1f} {records / sec:10.0f} {rss // 1024:8d} {sec / ref:7.2f}")

# Against the targets of issue 14 (best runs of this one run).
def b(name, inp="xml"):
    return best.get((name, inp), (None, None))
imp, ver = b("healthledger import"), b("healthledger verify")
re_, newer = b("healthledger re-import"), b("healthledger newer 1%")
print("\ntargets (issue 14), xml input:")
for peer, target in (("healthkit-to-sqlite", 20), ("atlas-db", 6)):
    p = b(peer)
    if p[0] and imp[0]:
        r = p[0] / imp[0]
        print(f"  first import vs {peer}: {r:.1f}x (target >= {target}x): {'met' if r >= target else 'NOT met'}")
p = b("healthkit-to-sqlite")
if p[0] and imp[0] and ver[0]:
    r = p[0] / (imp[0] + ver[0])
    print(f"  import + verify vs healthkit-to-sqlite: {r:.1f}x (target >= 12x): {'met' if r >= 12 else 'NOT met'}")
if re_[0] and imp[0]:
    print(f"  re-import {re_[0]:.2f} s vs first import {imp[0]:.2f} s: {'met' if re_[0] <= imp[0] else 'NOT met'} (at least as fast)")
if newer[0]:
    print(f"  newer export with 1% new records: {newer[0]:.2f} s, {newer[1] // 1024} MB peak")
peaks = [v[1] for k, v in best.items() if k[0].startswith("healthledger import") or k[0] in ("healthledger re-import", "healthledger newer 1%")]
if peaks:
    print(f"  peak RSS of our imports: {max(peaks) // 1024} MB (target <= 100 MB): {'met' if max(peaks) // 1024 <= 100 else 'NOT met'}")
EOF
