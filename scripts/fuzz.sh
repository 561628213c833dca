#!/usr/bin/env bash
# Fuzzes the particle-file readers and the experiment parser (docs/design.md §9, "Fuzzing"):
# builds the libFuzzer targets of fuzz/ in ./build-asan (clang, ASan + UBSan; packages installed
# as scripts/setup.sh does), then runs each for SECONDS, starting from fuzz/corpus/<target>/.
# Prints per target the inputs run and whether anything was found; exits 1 if anything was.
# Usage: scripts/fuzz.sh SECONDS [TARGET ...]   (targets: csv tipsy table bin experiment)
# New interesting inputs collect in build-asan/fuzz-corpus/<target>/ (kept between runs); a
# finding is saved as build-asan/fuzz-findings/<target>/{crash,leak,timeout,oom}-<hash>, and
# `build-asan/bin/fuzz_<target> FILE` replays it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh SECONDS [TARGET ...]   (targets: csv tipsy table bin experiment)" >&2
  exit 2
fi
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(csv tipsy table bin experiment)
source "$root/scripts/setup.sh"
nf_build_asan "${targets[@]/#/fuzz_}" >/dev/null

dir="$root/build-asan"
status=0
summary=()
for t in "${targets[@]}"; do
  corpus="$dir/fuzz-corpus/$t" findings="$dir/fuzz-findings/$t" log="$dir/fuzz-logs/$t.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  # A refusal is the reader's InputError; a crash, a sanitizer report, a leak, an input running
  # over 10 s or one allocation over 512 MiB (these inputs are a few KB) is a finding.
  [ -x "$dir/bin/fuzz_$t" ] || { echo "nearfield: no fuzz target $dir/bin/fuzz_$t" >&2; exit 2; }
  rc=0
  "$dir/bin/fuzz_$t" "$corpus" "$root/fuzz/corpus/$t" -max_total_time="$seconds" -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=4096 \
    -artifact_prefix="$findings/" >"$log" 2>&1 || rc=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  artifacts="$(sed -n 's/.*Test unit written to //p' "$log" | tr '\n' ' ')"
  if [ "$rc" -eq 0 ]; then
    summary+=("fuzz_$t: ${runs:-?} inputs in ${seconds} s, nothing found")
  else
    status=1
    what="$(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|runtime error|uncaught exception|terminate called|out-of-memory|timeout' "$log" || true)"
    summary+=("fuzz_$t: ${runs:-?} inputs, FOUND (exit $rc): ${what:-see $log} ${artifacts:+-> $artifacts}(log: $log)")
  fi
done
printf '%s\n' "${summary[@]}"
exit $status
