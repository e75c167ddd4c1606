#!/bin/sh
# What `import HealthLedger` exposes to a client: the public symbols of HealthLedger
# and of every module it re-exports (`@_exported import` in Sources/HealthLedger),
# as the compiler sees them (swift-symbolgraph-extract over a debug build's modules),
# counted per module and kind. Package-only and internal symbols are not counted.
# Usage: tools/count_exposed.sh [BUILD_DIR]   (default .build/debug; run `swift build` first)
set -eu
cd "$(dirname "$0")/.."
build=${1:-.build/debug}
[ -d "$build/Modules" ] || { echo "count_exposed: no $build/Modules: run 'swift build' first" >&2; exit 2; }
command -v swift-symbolgraph-extract >/dev/null || { echo "count_exposed: swift-symbolgraph-extract not on PATH" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
maps=""
for m in "$build"/*.build/module.modulemap; do [ -f "$m" ] && maps="$maps -Xcc -fmodule-map-file=$PWD/$m"; done
modules="HealthLedger $(sed -n 's/^@_exported import \([A-Za-z]*\).*/\1/p' Sources/HealthLedger/*.swift | sort -u | tr '\n' ' ')"
for module in $modules; do
    # shellcheck disable=SC2086
    swift-symbolgraph-extract -module-name "$module" -I "$build/Modules" -target "$(uname -m)-unknown-linux-gnu" \
        -output-dir "$out" -minimum-access-level public $maps >/dev/null
done
python3 - "$out" $modules <<'PY'
import json, sys, collections
out, modules = sys.argv[1], sys.argv[2:]
types = {"swift.struct", "swift.enum", "swift.class", "swift.protocol", "swift.typealias"}
total = total_types = 0
print(f"{'module':<18} {'symbols':>8} {'types':>6}  (import HealthLedger re-exports: {', '.join(modules[1:])})")
for m in modules:
    with open(f"{out}/{m}.symbols.json") as f:
        symbols = json.load(f)["symbols"]
    kinds = collections.Counter(s["kind"]["identifier"] for s in symbols)
    t = sum(kinds[k] for k in types) + kinds["swift.actor"]
    total += len(symbols); total_types += t
    print(f"{m:<18} {len(symbols):>8} {t:>6}")
print(f"{'exposed':<18} {total:>8} {total_types:>6}")
PY
