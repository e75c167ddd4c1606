#!/usr/bin/env bash
# `healthledger serve` under load (issue 30), release build, 127.0.0.1 only:
#   1. latest-sample reads: wrk, 64 connections, each read recorded durably in the
#      access log before it is answered — requests/s and latency percentiles;
#   2. durable single-sample saves: wrk, 64 connections, one sample per POST (201
#      only once durable; concurrent saves share a sync) — samples/s, percentiles;
#   3. the same saves through one `healthledger save` process each (the CLI's way),
#      for the ratio.
# Usage: tools/serve_bench.sh [--seconds 10] [--connections 64] [--cli-saves 200]
# Needs wrk (apt-get install wrk); installs it when run as root and it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=10
connections=64
cli_saves=200
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --cli-saves) cli_saves=$2; shift 2 ;;
        *) echo "usage: $0 [--seconds N] [--connections N] [--cli-saves N]" >&2; exit 2 ;;
    esac
done
if ! command -v wrk >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
    else
        echo "serve_bench: SKIPPED: wrk is not installed (apt-get install wrk)" >&2
        exit 0
    fi
fi
swift build -c release --product healthledger >/dev/null
bin=$PWD/.build/release/healthledger
work=$(mktemp -d)
server=
cleanup() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT
L=$work/bench.ledger
hl() { "$bin" --ledger "$L" "$@"; }
hl init >/dev/null
hl app register --app com.example.bench --name Bench --share-purpose saves --read-purpose reads >/dev/null
hl --app com.example.bench request --share bodyMass --read bodyMass >/dev/null
hl authorize --app com.example.bench --share bodyMass --read bodyMass >/dev/null
hl save --app com.example.bench --type bodyMass --value 70 --unit kg --start 2026-03-01T08:00:00Z >/dev/null
token=$(hl token create --app com.example.bench --name bench 2>/dev/null)

start_server() {
    # the binary itself in the background (not the hl function: $! would be a subshell)
    "$bin" --ledger "$L" serve --listen 127.0.0.1:0 --rate 0 --max-connections 4096 >"$work/serve.out" 2>"$work/serve.err" &
    server=$!
    for _ in $(seq 200); do grep -q "^listening on " "$work/serve.out" && break; sleep 0.05; done
    address=$(sed -n 's/^listening on //p' "$work/serve.out")
}
stop_server() { kill -TERM "$server"; wait "$server"; server=; }

cat >"$work/save.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local n = 0
request = function()
    n = n + 1
    local minute = n % 60
    local body = string.format('{"type":"bodyMass","value":%d.%d,"unit":"kg","start":"2026-03-02T%02d:%02d:00Z"}',
                               60 + n % 40, n % 10, math.floor(n / 60) % 24, minute)
    return wrk.format(nil, nil, nil, body)
end
done = function(summary, latency, requests)
    io.write(string.format("RESULT requests=%d non2xx=%d errors=%d p50_ms=%.2f p99_ms=%.2f\n", summary.requests,
        summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
LUA
cat >"$work/read.lua" <<'LUA'
done = function(summary, latency, requests)
    io.write(string.format("RESULT requests=%d non2xx=%d errors=%d p50_ms=%.2f p99_ms=%.2f\n", summary.requests,
        summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
LUA

field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" "$2"; }
start_server
echo "serve_bench: $(nproc) cores, $connections connections, ${seconds}s per run, release build at $(git rev-parse --short HEAD)"
wrk -t2 -c"$connections" -d"${seconds}s" --latency -H "Authorization: Bearer $token" -s "$work/read.lua" \
    "http://$address/v1/latest/bodyMass" >"$work/read.txt"
reads=$(field requests "$work/read.txt")
wrk -t2 -c"$connections" -d"${seconds}s" --latency -H "Authorization: Bearer $token" -s "$work/save.lua" \
    "http://$address/v1/samples" >"$work/save.txt"
saves=$(field requests "$work/save.txt")
rss=$(ps -o rss= -p "$server")
stop_server
access=$(hl --json verify | sed -n 's/.*"accessLogEntries":\([0-9]*\).*/\1/p')
cli_start=$(date +%s.%N)
for i in $(seq "$cli_saves"); do
    hl save --app com.example.bench --type bodyMass --value 71 --unit kg --start "2026-03-03T08:00:00Z" >/dev/null
done
cli_seconds=$(echo "$(date +%s.%N) - $cli_start" | bc)
awk -v r="$reads" -v s="$saves" -v t="$seconds" -v c="$cli_saves" -v cs="$cli_seconds" \
    -v rn="$(field non2xx "$work/read.txt")" -v sn="$(field non2xx "$work/save.txt")" \
    -v re="$(field errors "$work/read.txt")" -v se="$(field errors "$work/save.txt")" \
    -v r50="$(field p50_ms "$work/read.txt")" -v r99="$(field p99_ms "$work/read.txt")" \
    -v s50="$(field p50_ms "$work/save.txt")" -v s99="$(field p99_ms "$work/save.txt")" -v rss="$rss" -v acc="$access" 'BEGIN {
    printf "%-44s %12s %9s %9s %8s\n", "work", "per second", "p50 ms", "p99 ms", "refused"
    printf "%-44s %12.0f %9.2f %9.2f %8d\n", "latest-sample reads (serve, access-logged)", r / t, r50, r99, rn + re
    printf "%-44s %12.0f %9.2f %9.2f %8d\n", "durable single-sample saves (serve)", s / t, s50, s99, sn + se
    printf "%-44s %12.1f %9.1f %9s %8s\n", "durable single-sample saves (save, CLI)", c / cs, cs / c * 1000, "-", "-"
    printf "ratio serve / CLI saves: %.0fx; server RSS after the runs: %.0f MB; access log: %d reads recorded\n", (s / t) / (c / cs), rss / 1024, acc
}'
# Every acknowledged save is stored (a save wrk sent as its time ran out may be stored
# without being counted: at least, not exactly).
stored=$(hl --json query --owner bodyMass | wc -l)
expected=$((1 + saves + cli_saves))
[ "$stored" -ge "$expected" ] || { echo "serve_bench: $stored samples stored, fewer than the $expected acknowledged" >&2; exit 1; }
echo "stored: $stored bodyMass samples (acknowledged: $expected)"
hl verify >/dev/null && echo "verify: OK (ledger and access log)"
