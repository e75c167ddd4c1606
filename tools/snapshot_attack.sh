#!/usr/bin/env bash
# Mapped-snapshot attacks (issue 28, rule S8): another process changes the snapshot
# file while a read command has it mapped, and the read must either answer exactly as
# it would have or fail with exit 6 naming S8 — never die of a signal.
#
#   tools/snapshot_attack.sh [--rounds N] [--samples N] [--seed S] [--scratch DIR] [--bin PATH]
#
# --rounds N   rounds (default 100); each runs every attack below once against a
#              running `query --owner heartRate --json` (all samples) and once against
#              a lookup by UUID (`query … --after UUID --limit 1000`, or `prove UUID`):
#              8 readers per round
# --samples N  heart-rate samples in the ledger (default 120000: the slot column spans
#              two 4 MiB blocks)
# --seed S     seed of the attack timings and sizes (default 1): a run is repeatable
# --scratch    where the ledger lives (default tools/scratch)
# --bin PATH   the healthledger binary to attack (default: the release build, built
#              here) — e.g. an older build, to see what the attacks did to it
#
# Attacks, on the snapshot the reader maps, in place (the same inode):
#   truncate    cut to 4 KiB (`truncate -s 4096`)
#   overwrite   every byte after the first 4 KiB set to 0xFF (`dd conv=notrunc`)
#   shrink      cut to a random length between 4 KiB and its length
#   grow        1 MiB of random bytes appended
# each at one of three moments, in turn: as soon as the reader is started; after it
# printed 100 bytes; after it printed a random share of its answer (it waits, its
# output a FIFO nobody reads, while the file is changed). The pristine snapshot is put
# back before each reader.
#
# Per reader: exit 0 with output byte-identical to the answer before any attack
# ("answered"), exit 6 with an `[S8]` error ("S8"), a signal or exit ≥ 128 ("TRAP"),
# anything else ("WRONG"). Prints a table by attack and the totals; exits 1 on any
# TRAP or WRONG.
set -euo pipefail
trap 'echo "snapshot_attack: line $LINENO: exit status $?" >&2' ERR
cd "$(dirname "$0")/.."

rounds=100
samples=120000
seed=1
scratch=tools/scratch
bin=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds="$2"; shift ;;
        --samples) samples="$2"; shift ;;
        --seed) seed="$2"; shift ;;
        --scratch) scratch="$2"; shift ;;
        --bin) bin="$2"; shift ;;
        --help|-h) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "snapshot_attack: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
if [ -z "$bin" ]; then
    swift build -c release --product healthledger >&2
    bin=$(swift build -c release --show-bin-path)/healthledger
fi
mkdir -p "$scratch"
work="$scratch/snapshot-attack"
ledger="$work/heart.ledger"
pristine="$work/pristine.bin"

# The ledger and its snapshot, made once per sample count.
if [ ! -f "$work/made-$samples" ]; then
    echo "== preparing $samples heart-rate samples (once)" >&2
    rm -rf "$work"
    mkdir -p "$work"
    python3 - "$samples" > "$work/samples.jsonl" <<'EOF'
import sys, time
n = int(sys.argv[1])
base = 1767225600  # 2026-01-01T00:00:00Z
for i in range(n):
    t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(base + 60 * i))
    print('{"type":"heartRate","value":%d,"unit":"count/min","start":"%s"}' % (55 + i * 7919 % 90, t))
EOF
    "$bin" --ledger "$ledger" init >/dev/null
    "$bin" --ledger "$ledger" app register --app com.example.watch --name Watch --share-purpose s --read-purpose r >/dev/null
    "$bin" --ledger "$ledger" --app com.example.watch request --share heartRate --read heartRate >/dev/null
    "$bin" --ledger "$ledger" authorize --app com.example.watch --share heartRate --read heartRate >/dev/null
    "$bin" --ledger "$ledger" ingest --app com.example.watch --batch 1000 < "$work/samples.jsonl" >/dev/null
    "$bin" --ledger "$ledger" replay --write-snapshot >/dev/null 2>&1
    touch "$work/made-$samples"
fi
rm -f "$ledger"/snapshots/*.damaged
snapshot=$(ls "$ledger"/snapshots/*.bin | head -1)
[ -f "$pristine" ] || cp "$snapshot" "$pristine"
size=$(stat -c %s "$pristine")

# The answers before any attack.
query=(--ledger "$ledger" --json query --owner heartRate)
"$bin" "${query[@]}" > "$work/expected-query.jsonl"
total=$(stat -c %s "$work/expected-query.jsonl")
uuid=$(sed -n '5000p' "$work/expected-query.jsonl" | sed 's/.*"uuid":"\([0-9A-F-]*\)".*/\1/')
after=(--ledger "$ledger" --json query --owner heartRate --after "$uuid" --limit 1000)
prove=(--ledger "$ledger" --json prove "$uuid")
"$bin" "${after[@]}" > "$work/expected-after.jsonl" 2>/dev/null  # "next: UUID" on stderr
"$bin" "${prove[@]}" > "$work/expected-prove.json"
echo "== $bin: $samples samples, snapshot $size bytes, query answer $total bytes, $rounds rounds" >&2

RANDOM=$seed
attack() {  # attack NAME FILE
    case "$1" in
        truncate) truncate -s 4096 "$2" ;;
        overwrite) head -c $((size - 4096)) /dev/zero | tr '\0' '\377' \
                       | dd of="$2" bs=1M seek=4096 oflag=seek_bytes conv=notrunc status=none ;;
        shrink) truncate -s $((4096 + (RANDOM * 32768 + RANDOM) % (size - 4096))) "$2" ;;
        grow) head -c 1048576 /dev/urandom >> "$2" ;;
    esac
}

declare -A answered s8 traps wrong
attacks=(truncate overwrite shrink grow)
for a in "${attacks[@]}"; do answered[$a]=0; s8[$a]=0; traps[$a]=0; wrong[$a]=0; done
fifo="$work/fifo"
rm -f "$fifo"
mkfifo "$fifo"
run=0

# One reader under one attack: reader NAME EXPECTED ARGS…
reader() {
    local a=$1 expected=$2; shift 2
    rm -f "$ledger"/snapshots/*
    cp "$pristine" "$snapshot"
    local bytes=$(stat -c %s "$expected") wait_for
    case $((run % 3)) in
        0) wait_for=0 ;;
        1) wait_for=$((bytes < 100 ? bytes : 100)) ;;
        2) wait_for=$(((RANDOM * 32768 + RANDOM) % (bytes / 2 + 1))) ;;
    esac
    run=$((run + 1))
    "$bin" "$@" > "$fifo" 2> "$work/stderr.txt" &
    local pid=$!
    exec 3< "$fifo"
    if [ "$wait_for" -gt 0 ]; then
        dd bs="$wait_for" count=1 iflag=fullblock status=none <&3 > "$work/part1" || true
    else
        : > "$work/part1"
    fi
    attack "$a" "$snapshot"
    cat <&3 > "$work/part2"
    exec 3<&-
    local status=0
    wait "$pid" || status=$?
    cat "$work/part1" "$work/part2" > "$work/got"
    if [ "$status" -ge 128 ]; then
        traps[$a]=$((traps[$a] + 1))
        echo "TRAP: $a after $wait_for bytes: exit $status: $*" >&2
    elif [ "$status" -eq 0 ] && cmp -s "$work/got" "$expected"; then
        answered[$a]=$((answered[$a] + 1))
    elif [ "$status" -eq 6 ] && grep -q '\[S8\]' "$work/stderr.txt"; then
        s8[$a]=$((s8[$a] + 1))
    else
        wrong[$a]=$((wrong[$a] + 1))
        echo "WRONG: $a after $wait_for bytes: exit $status: $*: $(head -c 300 "$work/stderr.txt")" >&2
    fi
}

for round in $(seq "$rounds"); do
    for a in "${attacks[@]}"; do
        reader "$a" "$work/expected-query.jsonl" "${query[@]}"
        if [ $((round % 2)) -eq 0 ]; then
            reader "$a" "$work/expected-after.jsonl" "${after[@]}"
        else
            reader "$a" "$work/expected-prove.json" "${prove[@]}"
        fi
    done
done
rm -f "$ledger"/snapshots/* "$fifo"
cp "$pristine" "$snapshot"

printf '%-10s %8s %8s %8s %8s %8s\n' attack readers answered S8 TRAP WRONG
sum_a=0 sum_s=0 sum_t=0 sum_w=0
for a in "${attacks[@]}"; do
    n=$((answered[$a] + s8[$a] + traps[$a] + wrong[$a]))
    printf '%-10s %8d %8d %8d %8d %8d\n' "$a" "$n" "${answered[$a]}" "${s8[$a]}" "${traps[$a]}" "${wrong[$a]}"
    sum_a=$((sum_a + answered[$a])) sum_s=$((sum_s + s8[$a])) sum_t=$((sum_t + traps[$a])) sum_w=$((sum_w + wrong[$a]))
done
printf '%-10s %8d %8d %8d %8d %8d\n' all $((sum_a + sum_s + sum_t + sum_w)) "$sum_a" "$sum_s" "$sum_t" "$sum_w"
[ "$sum_t" -eq 0 ] && [ "$sum_w" -eq 0 ]
