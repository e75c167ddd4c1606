#!/bin/sh
# Counts the public surface per Sources/ module: declarations whose access is
# `public` or `open` (func, var, let, init, subscript, type, case-carrying enum,
# extension members, typealias). One line per module, then the total.
# A declaration is a line whose first access word is public/open, so
# `public extension` counts once and `public private(set) var` counts once.
# The second column counts `package` declarations the same way (visible to
# every target of this package, to no client).
# Usage: tools/count_public.sh [Sources]
set -eu
root=${1:-Sources}
total=0
ptotal=0
for dir in "$root"/*/; do
    module=$(basename "$dir")
    n=$(find "$dir" -name '*.swift' -exec cat {} + 2>/dev/null |
        grep -cE '^[[:space:]]*(@[A-Za-z_]+(\([^)]*\))?[[:space:]]+)*(public|open)([[:space:]]|\()' || true)
    [ -z "$n" ] && n=0
    k=$(find "$dir" -name '*.swift' -exec cat {} + 2>/dev/null |
        grep -cE '^[[:space:]]*(@[A-Za-z_]+(\([^)]*\))?[[:space:]]+)*package([[:space:]]|\()' || true)
    [ -z "$k" ] && k=0
    printf '%-20s %5d public %5d package\n' "$module" "$n" "$k"
    total=$((total + n)); ptotal=$((ptotal + k))
done
printf '%-20s %5d public %5d package\n' total "$total" "$ptotal"
