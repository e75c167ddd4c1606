#!/usr/bin/env bash
# The PostgreSQL store against a real server: starts a throwaway PostgreSQL 15
# (tools/pg_server.sh: initdb/pg_ctl in a temporary folder as an unprivileged user,
# 127.0.0.1, a free port), builds with HEALTHLEDGER_POSTGRES=1 (warnings fail) in a
# scratch path of its own (.build/postgres: the default build stays as it was, so
# the next `swift build` does not recompile what this one changed), runs
# the PostgreSQL tests (LedgerPostgresTests) against it, and stops it.
# Usage: tools/pg_test.sh [swift test arguments, e.g. --filter NAME: run only those]
# PG_TEST_SCRATCH=PATH builds and tests in another scratch path, PG_TEST_SANITIZE=KIND
# under a sanitizer: CI runs these tests in its AddressSanitizer build
# (PG_TEST_SCRATCH=.build/address PG_TEST_SANITIZE=address), which it made with
# HEALTHLEDGER_POSTGRES=1, so the build here finds nothing to do.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/compiler_warnings.sh
. tools/pg_server.sh
trap pg_stop EXIT
pg_start

log=$PG_TMP/build.log
scratch=${PG_TEST_SCRATCH:-.build/postgres}
sanitize=()
if [ -n "${PG_TEST_SANITIZE:-}" ]; then sanitize=(--sanitize="$PG_TEST_SANITIZE"); fi
echo "== HEALTHLEDGER_POSTGRES=1 swift build --build-tests --scratch-path $scratch ${sanitize[*]}"
HEALTHLEDGER_POSTGRES=1 swift build --build-tests --scratch-path "$scratch" "${sanitize[@]}" 2>&1 | tee "$log"
if compiler_warnings "$log"; then
    echo "pg_test: compiler warnings (above) are failures" >&2
    exit 1
fi
echo "== PostgreSQL tests"
if [ $# -gt 0 ]; then
    HEALTHLEDGER_POSTGRES=1 HEALTHLEDGER_TEST_POSTGRES="$PG_URL" HEALTHLEDGER_TEST_PG_RESTART="$PG_TMP/restart.sh" \
        swift test --skip-build --scratch-path "$scratch" "${sanitize[@]}" "$@"
    exit 0
fi
HEALTHLEDGER_POSTGRES=1 HEALTHLEDGER_TEST_POSTGRES="$PG_URL" \
    swift test --skip-build --scratch-path "$scratch" "${sanitize[@]}" --filter LedgerPostgresTests
# The server restart cuts every session: that test runs alone, after the others.
echo "== PostgreSQL server restart mid-ingest (alone)"
HEALTHLEDGER_POSTGRES=1 HEALTHLEDGER_TEST_POSTGRES="$PG_URL" HEALTHLEDGER_TEST_PG_RESTART="$PG_TMP/restart.sh" \
    swift test --skip-build --scratch-path "$scratch" "${sanitize[@]}" --filter aServerRestartMidIngestLosesNothingAcknowledged
