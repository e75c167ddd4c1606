#!/usr/bin/env bash
# Creates (once) the Python virtual environment the FHIR export's validator runs in:
# fhir.resources (its R4B models validate FHIR R4 resources) from PyPI, in
# ${HEALTHLEDGER_FHIR_VENV:-~/.cache/healthledger/fhir-venv}. Prints the venv's python.
# Tests/CLITests/ExportFHIRCommandTests runs tools/check_fhir_export.py with it, and
# is skipped (saying why) when it is absent; .ci/run calls this before `swift test`.
# Exits non-zero when the venv cannot be made (no python3 venv module, PyPI unreachable).
set -euo pipefail
venv="${HEALTHLEDGER_FHIR_VENV:-$HOME/.cache/healthledger/fhir-venv}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import fhir.resources.R4B.observation' 2>/dev/null; then
    echo "$venv/bin/python"
    exit 0
fi
python3 -m venv "$venv"
# 7.x is the first series with the R4B package (and its models are what check_fhir_export.py imports).
"$venv/bin/pip" install --quiet --disable-pip-version-check 'fhir.resources>=7,<8'
"$venv/bin/python" -c 'import fhir.resources.R4B.observation'
echo "$venv/bin/python"
