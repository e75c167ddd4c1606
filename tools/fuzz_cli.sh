#!/bin/sh
# The CLI input fuzzer's soak (issue 17): the in-process fuzzer of ingest's JSON
# Lines, unit strings, ISO 8601 dates and export XML (Tests/CLITests/CLIInputFuzz.swift)
# at scale, then the binary-level fuzzer (tools/fuzz_cli.py) that checks exit
# statuses, signals and that refused input leaves the ledger byte-identical.
#
#   tools/fuzz_cli.sh [CASES_PER_KIND (default 40000)] [SEED (default 1)] [BINARY_CASES (default 2000)]
#
# CASES_PER_KIND JSON lines, units and dates each, plus CASES_PER_KIND/10 XML
# documents: 40000 gives 124,000 in-process cases.
set -eu
cases=${1:-40000}
seed=${2:-1}
binary_cases=${3:-2000}
swift build --build-tests
HEALTHLEDGER_FUZZ_CASES=$cases HEALTHLEDGER_FUZZ_SEED=$seed \
    swift test --skip-build --filter CLIInputFuzzTests/inProcessInputsNeverTrapAndAreRefusedByName
python3 tools/fuzz_cli.py --cases "$binary_cases" --seed "$seed" --binary .build/debug/healthledger
