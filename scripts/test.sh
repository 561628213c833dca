#!/usr/bin/env bash
# The test command of the README: set-up (packages, configure, build), then every test through
# CTest. GPU tests are skipped with their reason when there is no CUDA device; set
# NEARFIELD_REQUIRE_GPU=1 to make a missing device a failure.
# Then the checks of docs/design.md §9: the CPU tests again in ./build-asan (clang, AddressSanitizer
# and UndefinedBehaviorSanitizer; NEARFIELD_SANITIZE=0 leaves this and the fuzzing out), and each
# fuzz target for NEARFIELD_FUZZ_SECONDS (default 20; 0: none) through scripts/fuzz.sh.
# Arguments go to both ctest runs (e.g. -R test_io).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/setup.sh"
nf_setup
cd "$root/build"
status=0
ctest --output-on-failure -j "$(nproc)" "$@" || status=$?
# CTest only says "Skipped"; say why.
grep -h "^SKIPPED:" Testing/Temporary/LastTest.log 2>/dev/null | sort -u || true

if [ "${NEARFIELD_SANITIZE:-1}" != 0 ]; then
  echo "nearfield: the CPU tests under AddressSanitizer and UndefinedBehaviorSanitizer (build-asan)" >&2
  start=$SECONDS
  nf_build_asan >/dev/null
  cd "$root/build-asan"
  # The repository checks build nothing: the normal pass ran them. Leaks fail a test (but
  # test_mpi's, which are OpenMPI's: tests/CMakeLists.txt).
  sanitized=(env ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1")
  if ! "${sanitized[@]}" ctest --output-on-failure -j "$(nproc)" -L cpu -E '^(doc_paths|layering|file_size|error_model)$' "$@"; then
    # LeakSanitizer's own stop-the-world tracer now and then crashes at a process's exit after
    # the test passed ("Tracer caught signal 11 ... LeakSanitizer has encountered a fatal
    # error"; google/sanitizers#1353): a runtime failure, not a leak report. Only when every
    # failed test's own output shows that crash are the failed tests run once more; any other
    # failure stays a failure.
    failed=$(awk '/^[0-9]+\/[0-9]+ Testing: / { name = $3; crash = 0 }
                  /LeakSanitizer has encountered a fatal error/ { crash = 1 }
                  /^Test Failed\./ { print name, crash }' Testing/Temporary/LastTest.log 2>/dev/null || true)
    if [ -n "$failed" ] && ! grep -q ' 0$' <<<"$failed"; then
      echo "nearfield: LeakSanitizer's tracer crashed in $(cut -d' ' -f1 <<<"$failed" | paste -sd' ') (not a leak report); those once more" >&2
      "${sanitized[@]}" ctest --output-on-failure --rerun-failed || status=$?
    else
      status=1
    fi
  fi
  echo "nearfield: sanitizer pass took $((SECONDS - start)) s" >&2
  seconds="${NEARFIELD_FUZZ_SECONDS:-20}"
  if [ "$seconds" != 0 ]; then
    "$root/scripts/fuzz.sh" "$seconds" || status=$?
  fi
fi
exit $status
