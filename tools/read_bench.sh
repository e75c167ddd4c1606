#!/usr/bin/env bash
# Read benchmark against the usual tools (issue 31): HealthLedger vs the sqlite3
# command-line shell (C) vs DuckDB, same samples, same run, release build.
#
#   tools/read_bench.sh [--samples N] [--runs R] [--scratch DIR] [--build-path DIR]
#
# --samples N    step samples (default 1000000)
# --runs R       runs of each timed command (default 3; the run with the least wall
#                time is reported: "best of R")
# --scratch DIR  data, ledger, databases, outputs, DuckDB's venv (default tools/scratch)
# --build-path   where the release build goes (default DIR/read-bench-build: its own
#                scratch path, so a .build in use is never touched); HEALTHLEDGER_BIN=PATH
#                uses that binary instead and builds nothing
# READ_BENCH_DUCKDB=shell (default: the duckdb-cli package's shell binary, else the
#                duckdb Python package) | python (the Python package only) | none
#
# Data (made once per N, not timed): N stepCount samples with shuffled start times,
# one in ten with metadata HKWasUserEntered = true (tools/peers/sqlite_query_peer.py's
# generator), as ingest JSON Lines and as CSV (tools/peers/read_bench_peers.py).
# Timed, as whole processes (GNU time: wall, user + sys CPU, peak RSS):
#   ingest  ours: `healthledger ingest --batch 1000` into a fresh ledger (a durable
#           commit per 1,000 lines; init and authorization before it, not timed);
#           sqlite3: CREATE TABLE (uuid UNIQUE), `.import --csv`, CREATE INDEX on
#           (type, start, end) and on (type, user_entered, start, end), one process;
#           DuckDB: CREATE TABLE … AS SELECT * FROM read_csv(…) (no index).
#   query   all samples as JSON Lines, newest first (start, end, then ingest order,
#           all descending): ours `query --owner stepCount --json`; sqlite3 one
#           json_object(…) per row (byte for byte ours); DuckDB COPY (…) TO
#           '/dev/stdout' (FORMAT JSON).
#   where   the same, only HKWasUserEntered samples: ours `--where
#           'metadata.HKWasUserEntered = true'` (metadata, no index); sqlite3 the
#           indexed user_entered column; DuckDB the user_entered column (no index).
#   daily   daily sums: ours `statistics stepCount --owner --sum --by day --tz UTC
#           --json` (HealthKit's merge: manual entries rank above the app's other
#           samples where they overlap; a sample over midnight split by time); the
#           peers the naive `GROUP BY date(start)` SUM.
#   size    the ledger folder vs the sqlite3 file vs the DuckDB file (bytes).
# Agreement (exit 1 on any DISAGREE): ingest — count and sum of values stored;
# query, where — lines, sum of values and a digest of the UUIDs in printed order;
# daily — totals: ours unmerged (the same command with --separate-by-source, not
# timed) against theirs; days: theirs = the days a sample starts in, ours = the days
# a sample covers (one running past midnight gives the next day a share), each
# against the same count made from the input.
# sqlite3 missing from PATH, or DuckDB not installable from PyPI into
# DIR/venv-duckdb (shell from the duckdb-cli package, else the duckdb Python
# package): its rows say SKIPPED and the rest runs.
set -euo pipefail
cd "$(dirname "$0")/.."

n=1000000
runs=3
scratch=tools/scratch
build_path=""
while [ $# -gt 0 ]; do
    case "$1" in
        --samples) n="$2"; shift ;;
        --runs) runs="$2"; shift ;;
        --scratch) scratch="$2"; shift ;;
        --build-path) build_path="$2"; shift ;;
        --help|-h) sed -n '2,46p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "read_bench: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -x /usr/bin/time ] || { echo "read_bench: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)
peer=$PWD/tools/peers/read_bench_peers.py
gen_peer=tools/peers/sqlite_query_peer.py

# --- the three engines ---------------------------------------------------------------
if [ -n "${HEALTHLEDGER_BIN:-}" ]; then
    bin=$HEALTHLEDGER_BIN
else
    build_path=${build_path:-$scratch/read-bench-build}
    swift build -c release --product healthledger --scratch-path "$build_path" >&2
    bin=$(swift build -c release --product healthledger --scratch-path "$build_path" --show-bin-path)/healthledger
fi
[ -x "$bin" ] || { echo "read_bench: no healthledger binary at $bin" >&2; exit 1; }

sqlite=""
if command -v sqlite3 >/dev/null; then
    sqlite=$(command -v sqlite3)
    sqlite_name="sqlite3 $(sqlite3 --version | cut -d' ' -f1)"
else
    echo "read_bench: sqlite3 SKIPPED: no sqlite3 on PATH (apt-get install sqlite3)" >&2
fi

venv=$scratch/venv-duckdb duck_cli="" duck_py="" duck_name="" duck_want=${READ_BENCH_DUCKDB:-shell}
if [ "$duck_want" = none ]; then
    echo "read_bench: DuckDB SKIPPED: READ_BENCH_DUCKDB=none" >&2
elif [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import duckdb' 2>/dev/null; then
    echo "== installing DuckDB from PyPI into $venv (once)" >&2
    { python3 -m venv "$venv" && "$venv/bin/pip" install -q duckdb; } >&2 || true
    "$venv/bin/pip" install -q duckdb-cli >&2 || true
fi
if [ "$duck_want" != none ] && [ -x "$venv/bin/python" ]; then
    # the shell binary the duckdb-cli package ships (run directly, not through its Python launcher)
    duck_cli=$("$venv/bin/python" -c 'import duckdb_cli, os; p = os.path.join(os.path.dirname(duckdb_cli.__file__), "duckdb"); print(p if os.access(p, os.X_OK) else "")' 2>/dev/null || true)
    [ "$duck_want" != python ] || duck_cli=""
    if [ -n "$duck_cli" ]; then
        duck_name="duckdb $("$duck_cli" --version | cut -d' ' -f1) shell"
    elif "$venv/bin/python" -c 'import duckdb' 2>/dev/null; then
        duck_py="$venv/bin/python"
        duck_name="duckdb $("$venv/bin/python" -c 'import duckdb; print(duckdb.__version__)') (Python)"
    fi
fi
duck_skip="READ_BENCH_DUCKDB=none"
if [ -z "$duck_name" ] && [ "$duck_want" != none ]; then
    duck_skip="not installable from PyPI"
    echo "read_bench: DuckDB SKIPPED: could not install duckdb or duckdb-cli from PyPI into $venv" >&2
fi

# DuckDB's command, then the file and `-c SQL` (rows as CSV without a header)
duck_rw=() duck_ro=()
if [ -n "$duck_cli" ]; then
    duck_rw=("$duck_cli" -batch -csv -noheader) duck_ro=("$duck_cli" -readonly -batch -csv -noheader)
elif [ -n "$duck_py" ]; then
    duck_rw=("$duck_py" "$peer" duckdb) duck_ro=("$duck_py" "$peer" duckdb -readonly)
fi

# --- data (once per N) -------------------------------------------------------------
jsonl=$scratch/read-$n.jsonl csv=$scratch/read-$n.csv
if [ ! -f "$csv" ] || [ "$peer" -nt "$csv" ] || [ "$gen_peer" -nt "$csv" ]; then
    echo "== generating $n samples (once)" >&2
    python3 "$peer" gen "$n" 7 "$jsonl" "$csv.tmp"
    mv "$csv.tmp" "$csv"
fi
ledger=$scratch/read-$n.ledger db=$scratch/read-$n.sqlite ddb=$scratch/read-$n.duckdb
app=com.example.bench
step=HKQuantityTypeIdentifierStepCount

# --- timing --------------------------------------------------------------------------
# measure OUT IN SETUP CMD…: R runs of CMD (stdin IN, stdout OUT), SETUP (a shell
# function or :) before each, not timed; prints "wall cpu rss_MB" of the run with the
# least wall time (CPU = user + sys)
measure() {
    local out=$1 in=$2 setup=$3; shift 3
    local best="" bestcpu="" bestrss=""
    for _ in $(seq "$runs"); do
        "$setup"
        /usr/bin/time -f "%e %U %S %M" -o "$scratch/read-time.txt" "$@" < "$in" > "$out"
        read -r secs user sys rss < "$scratch/read-time.txt"
        if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then
            best=$secs; bestcpu=$(awk "BEGIN{printf \"%.2f\", $user + $sys}"); bestrss=$rss
        fi
    done
    echo "$best $bestcpu $((bestrss / 1024))"
}

rows=()        # table rows: "item|engine|wall|cpu|rss|ratio wall|ratio cpu|note"
checks=()      # agreement lines
disagree=0
declare -A W C   # ours' wall and CPU per item, for the ratios
row() {  # item engine "wall cpu rss" note
    local item=$1 engine=$2 note=${4:-}
    local wall cpu rss; read -r wall cpu rss <<< "$3"
    local rw="" rc=""
    if [ "$engine" = healthledger ]; then
        W[$item]=$wall C[$item]=$cpu
    elif [ -n "${W[$item]:-}" ]; then
        rw=$(awk "BEGIN{printf \"%.2fx\", $wall / ${W[$item]}}")
        rc=$(awk "BEGIN{c = ${C[$item]}; if (c > 0) printf \"%.2fx\", $cpu / c; else print \"-\"}")
    fi
    rows+=("$item|$engine|$wall|$cpu|$rss|$rw|$rc|$note")
}
skipped() { rows+=("$1|$2|-|-|-|||SKIPPED${3:+: $3}"); }
agree() {  # item "what" value-ours value-sqlite value-duckdb (an empty value: skipped)
    local item=$1 what=$2 ours=$3 sq=$4 dk=$5 verdict=AGREE ref=$3
    for v in "$sq" "$dk"; do [ -z "$v" ] || [ "$v" = "$ref" ] || verdict=DISAGREE; done
    [ $verdict = AGREE ] || disagree=1
    checks+=("$(printf '%-8s %-9s %-50s ours %s | sqlite3 %s | duckdb %s' "$item" "$verdict" "$what" "$ours" "${sq:--}" "${dk:--}")")
}

# --- 1. ingest -----------------------------------------------------------------------
echo "== ingest ($runs runs each)" >&2
fresh_ledger() {
    rm -rf "$ledger"
    "$bin" --ledger "$ledger" --tz UTC init >/dev/null
    "$bin" --ledger "$ledger" app register --app $app --name Bench --share-purpose s --read-purpose r >/dev/null
    "$bin" --ledger "$ledger" --app $app request --share stepCount --read stepCount >/dev/null
    "$bin" --ledger "$ledger" authorize --app $app --share stepCount --read stepCount >/dev/null
}
row ingest healthledger "$(measure /dev/null "$jsonl" fresh_ledger "$bin" --ledger "$ledger" ingest --app $app --batch 1000)"
ours_count=$("$bin" --ledger "$ledger" stats --json | python3 -c "import json, sys; print(json.load(sys.stdin)['samples']['$step']['$app'])")
ours_sum=$("$bin" --ledger "$ledger" statistics stepCount --owner --sum --separate-by-source --tz UTC --json \
    | python3 -c "import json, sys; print('%.0f' % json.loads(sys.stdin.readline())['sources']['$app']['sum'])")

sq_count="" sq_sum="" dk_count="" dk_sum=""
cat > "$scratch/read-ingest.sql" <<EOF
CREATE TABLE samples (seq INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, type TEXT NOT NULL, value NUMERIC NOT NULL,
    unit TEXT NOT NULL, start TEXT NOT NULL, "end" TEXT NOT NULL, user_entered INTEGER NOT NULL);
.import --csv --skip 1 '$csv' samples
CREATE INDEX by_type_start ON samples (type, start, "end");
CREATE INDEX by_type_user_entered ON samples (type, user_entered, start, "end");
EOF
fresh_db() { rm -f "$db" "$db-journal" "$db-wal" "$db-shm"; }
if [ -n "$sqlite" ]; then
    row ingest "$sqlite_name" "$(measure /dev/null "$scratch/read-ingest.sql" fresh_db "$sqlite" -bail "$db")" ".import + 3 indexes (uuid unique)"
    IFS=, read -r sq_count sq_sum <<< "$("$sqlite" -readonly -csv "$db" "SELECT count(*), printf('%.0f', sum(value)) FROM samples")"
else skipped ingest sqlite3 "no sqlite3 on PATH"; fi

duck_ingest="CREATE TABLE samples AS SELECT * FROM read_csv('$csv', header = true, columns = {'seq': 'BIGINT',
    'uuid': 'VARCHAR', 'type': 'VARCHAR', 'value': 'DOUBLE', 'unit': 'VARCHAR', 'start': 'TIMESTAMP',
    'end': 'TIMESTAMP', 'user_entered': 'BOOLEAN'}, timestampformat = '%Y-%m-%dT%H:%M:%SZ');"
fresh_ddb() { rm -f "$ddb" "$ddb.wal"; }
if [ -n "$duck_name" ]; then
    row ingest "$duck_name" "$(measure /dev/null /dev/null fresh_ddb "${duck_rw[@]}" "$ddb" -c "$duck_ingest")" "read_csv, no index"
    IFS=, read -r dk_count dk_sum <<< "$("${duck_ro[@]}" "$ddb" -c "SELECT count(*), printf('%.0f', sum(value)) FROM samples")"
else skipped ingest duckdb "$duck_skip"; fi
agree ingest "samples stored" "$ours_count" "$sq_count" "$dk_count"
agree ingest "sum of values stored" "$ours_sum" "$sq_sum" "$dk_sum"

# --- 2, 3. query all, where ----------------------------------------------------------
cols="'uuid',uuid,'type',type,'kind','quantity','value',value,'unit',unit,'start',start,'end',\"end\",'source','$app'"
sq_select="SELECT CASE WHEN user_entered THEN json_object($cols,'metadata',json_object('HKWasUserEntered',json('true')))
    ELSE json_object($cols) END FROM samples WHERE type = '$step'"
sq_order='ORDER BY start DESC, "end" DESC, seq DESC'
dk_select="SELECT uuid, type, 'quantity' AS kind, value, unit, strftime(start, '%Y-%m-%dT%H:%M:%SZ') AS start,
    strftime(\"end\", '%Y-%m-%dT%H:%M:%SZ') AS \"end\", '$app' AS source,
    CASE WHEN user_entered THEN {'HKWasUserEntered': true} END AS metadata FROM samples WHERE type = '$step'"
dk_order='ORDER BY samples.start DESC, samples."end" DESC, seq DESC'
digest() { python3 "$peer" digest "$1"; }

for item in query where; do
    echo "== $item ($runs runs each)" >&2
    if [ $item = query ]; then where_ours=() sq_where="" dk_where=""
    else where_ours=(--where 'metadata.HKWasUserEntered = true') sq_where=" AND user_entered = 1" dk_where=" AND user_entered"; fi
    out=$scratch/read-$item
    row $item healthledger "$(measure "$out-ours.jsonl" /dev/null : "$bin" --ledger "$ledger" query --owner stepCount --json "${where_ours[@]}")"
    d_ours=$(digest "$out-ours.jsonl") d_sq="" d_dk="" note=""
    if [ -n "$sqlite" ]; then
        t=$(measure "$out-sqlite.jsonl" /dev/null : "$sqlite" -readonly "$db" "$sq_select$sq_where $sq_order")
        row $item "$sqlite_name" "$t" "$(cmp -s "$out-ours.jsonl" "$out-sqlite.jsonl" && echo "output byte for byte ours" || echo "output differs in bytes from ours")"
        d_sq=$(digest "$out-sqlite.jsonl")
    else skipped $item sqlite3 "no sqlite3 on PATH"; fi
    if [ -n "$duck_name" ]; then
        row $item "$duck_name" "$(measure "$out-duckdb.jsonl" /dev/null : "${duck_ro[@]}" "$ddb" -c \
            "COPY ($dk_select$dk_where $dk_order) TO '/dev/stdout' (FORMAT JSON)")" "COPY … (FORMAT JSON)"
        d_dk=$(digest "$out-duckdb.jsonl")
    else skipped $item duckdb "$duck_skip"; fi
    f() { [ -z "$1" ] || echo "$1" | cut -d' ' -f"$2"; }
    agree $item "lines" "$(f "$d_ours" 1)" "$(f "$d_sq" 1)" "$(f "$d_dk" 1)"
    agree $item "sum of values" "$(f "$d_ours" 2)" "$(f "$d_sq" 2)" "$(f "$d_dk" 2)"
    agree $item "order (SHA-256 of the UUIDs as printed)" "$(f "$d_ours" 3)" "$(f "$d_sq" 3)" "$(f "$d_dk" 3)"
done

# --- 4. daily sums -------------------------------------------------------------------
echo "== daily ($runs runs each)" >&2
out=$scratch/read-daily
row daily healthledger "$(measure "$out-ours.jsonl" /dev/null : "$bin" --ledger "$ledger" statistics stepCount --owner --sum --by day --tz UTC --json)" \
    "merged by priority, split at midnight"
"$bin" --ledger "$ledger" statistics stepCount --owner --sum --by day --tz UTC --json --separate-by-source > "$out-ours-unmerged.jsonl"
read -r ours_days ours_merged <<< "$(python3 "$peer" days "$out-ours.jsonl")"
read -r ours_udays ours_unmerged <<< "$(python3 "$peer" days "$out-ours-unmerged.jsonl")"
sq_days="" sq_total="" dk_days="" dk_total=""
if [ -n "$sqlite" ]; then
    row daily "$sqlite_name" "$(measure "$out-sqlite.jsonl" /dev/null : "$sqlite" -readonly "$db" \
        "SELECT json_object('day', date(start), 'sum', SUM(value)) FROM samples WHERE type = '$step' GROUP BY date(start) ORDER BY date(start)")" \
        "naive GROUP BY date(start)"
    read -r sq_days sq_total <<< "$(python3 "$peer" days "$out-sqlite.jsonl")"
else skipped daily sqlite3 "no sqlite3 on PATH"; fi
if [ -n "$duck_name" ]; then
    row daily "$duck_name" "$(measure "$out-duckdb.jsonl" /dev/null : "${duck_ro[@]}" "$ddb" -c \
        "COPY (SELECT CAST(start AS DATE) AS day, SUM(value) AS sum FROM samples WHERE type = '$step' GROUP BY 1 ORDER BY 1) TO '/dev/stdout' (FORMAT JSON)")" \
        "naive GROUP BY date"
    read -r dk_days dk_total <<< "$(python3 "$peer" days "$out-duckdb.jsonl")"
else skipped daily duckdb "$duck_skip"; fi
# days: the peers count the days a sample starts in, ours the days a sample covers
# (one running past midnight gives the next day a share); both from the input too
read -r in_start_days in_covered_days <<< "$(python3 "$peer" input-days "$jsonl")"
verdict=AGREE
for v in "$sq_days" "$dk_days"; do [ -z "$v" ] || [ "$v" = "$in_start_days" ] || verdict=DISAGREE; done
[ "$ours_udays" = "$in_covered_days" ] || verdict=DISAGREE
[ $verdict = AGREE ] || disagree=1
checks+=("$(printf '%-8s %-9s %-50s ours %s | sqlite3 %s | duckdb %s' daily $verdict \
    "days (input: $in_covered_days covered, $in_start_days with a start)" "$ours_udays" "${sq_days:--}" "${dk_days:--}")")
# ours unmerged total to the nearest whole step (the split shares are fractions)
ours_total_r=$(awk "BEGIN{printf \"%.0f\", $ours_unmerged}")
agree daily "total steps (ours unmerged)" "$ours_total_r" \
    "${sq_total:+$(awk "BEGIN{printf \"%.0f\", $sq_total}")}" "${dk_total:+$(awk "BEGIN{printf \"%.0f\", $dk_total}")}"

# --- 5. size on disk -----------------------------------------------------------------
mb() { awk "BEGIN{printf \"%.1f\", $1 / 1048576}"; }
ours_bytes=$(du -sb "$ledger" | cut -f1)
snap=$( (ls "$ledger"/snapshots/ 2>/dev/null || true) | grep -c . || true)
sizes=("size|healthledger|$(mb "$ours_bytes") MB|||||folder: log $(mb "$(stat -c %s "$ledger/ledger.log")") MB, $snap snapshot(s)")
if [ -n "$sqlite" ]; then
    b=$(du -cb "$db"* | tail -1 | cut -f1)
    sizes+=("size|$sqlite_name|$(mb "$b") MB|||$(awk "BEGIN{printf \"%.2fx\", $b / $ours_bytes}")||with its 3 indexes")
fi
if [ -n "$duck_name" ]; then
    b=$(du -cb "$ddb"* | tail -1 | cut -f1)
    sizes+=("size|$duck_name|$(mb "$b") MB|||$(awk "BEGIN{printf \"%.2fx\", $b / $ours_bytes}")||")
fi

# --- the table -----------------------------------------------------------------------
echo
echo "read_bench: $n samples, best of $runs runs (least wall); $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ratio = peer / healthledger (above 1: the peer is slower or bigger)"
printf '%-7s %-24s %9s %8s %8s %11s %10s  %s\n' item engine wall_s cpu_s rss_MB ratio_wall ratio_cpu note
for r in "${rows[@]}" "${sizes[@]}"; do
    IFS='|' read -r a b c d e f g h <<< "$r"
    printf '%-7s %-24s %9s %8s %8s %11s %10s  %s\n' "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h"
done
echo
echo "daily: ours merged total $(awk "BEGIN{printf \"%.0f\", $ours_merged}") over $ours_days days (manual entries above the app's other samples where they overlap), unmerged $ours_total_r"
printf '%s\n' "${checks[@]}"
if [ $disagree -ne 0 ]; then echo "read_bench: the answers DISAGREE" >&2; exit 1; fi
echo "all answers agree"
