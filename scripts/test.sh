#!/usr/bin/env bash
# The test command of the README: set-up (packages, configure, build), then every test through
# CTest. GPU tests are skipped with their reason when there is no CUDA device; set
# NEARFIELD_REQUIRE_GPU=1 to make a missing device a failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
nf_setup
cd "$root/build"
status=0
ctest --output-on-failure -j "$(nproc)" "$@" || status=$?
# CTest only says "Skipped"; say why.
grep -h "^SKIPPED:" Testing/Temporary/LastTest.log 2>/dev/null | sort -u || true
exit $status
