#!/usr/bin/env bash
# The concurrent layers under ThreadSanitizer: the log's flusher, the replay and verify
# threads, the store's actors, the importer's read-ahead thread, the HTTP server's event
# loop and handler threads. Its own build (`.build/thread`, about 5 minutes on this
# 2-core VM), so not in .ci/run's budget; run it before a hand-in that touches any of
# them. Without the tests tagged `sweep` (the plain `swift test` has them).
# Usage: tools/thread_sanitizer.sh [--skip-build]
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/compiler_warnings.sh
if [ "${1:-}" != "--skip-build" ]; then
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    swift build --build-tests --sanitize=thread --scratch-path .build/thread 2>&1 | tee "$log"
    if compiler_warnings "$log"; then
        echo "thread_sanitizer: compiler warnings under --sanitize=thread (above)" >&2
        exit 1
    fi
fi
start=$(date +%s)
for m in LedgerLogTests LedgerCoreTests HealthLedgerTests AppleHealthImportTests.XMLReadAheadTests LedgerHTTPTests LedgerServerTests; do
    echo "-- $m"
    HEALTHLEDGER_SKIP_SWEEPS=1 TSAN_OPTIONS=halt_on_error=1 \
        swift test --skip-build --sanitize=thread --scratch-path .build/thread --filter "^$m[./]" \
        || { echo "thread_sanitizer: $m failed" >&2; exit 1; }
done
echo "thread_sanitizer: all passed ($(( $(date +%s) - start )) s of tests)"
