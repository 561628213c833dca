#!/usr/bin/env bash
# nearfield-mpi as a user meets it (docs/design.md §15, "Under MPI"): forces, validate, bench and
# simulate with CPU near-field kernels over 2 and 3 real processes, compared with one process
# (nearfield): bit for bit for the deterministic kernels computing cross pairs twice, within the
# float tolerance with counterforces (--cross-pairs once); validate against the float64 ground
# truth; and refusals agreed by every rank: one message, a non-zero status, no MPI abort banner.
# Usage: mpi_cli_test.sh NEARFIELD NEARFIELD_MPI MPIEXEC   (OMP_NUM_THREADS=1 keeps it to seconds)
set -uo pipefail
nearfield="$(realpath "$1")"
nearfield_mpi="$(realpath "$2")"
mpiexec="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*"; exit 1; }
mpi() { local ranks="$1"; shift; "$mpiexec" --allow-run-as-root --oversubscribe -np "$ranks" "$nearfield_mpi" "$@"; }
# MPI_Abort's banner and what follows a crash; mpirun's own notice that a process exited with a
# non-zero status (which it then returns) is not one of them.
banner() { grep -Eq "MPI_ABORT|MPI_Abort|ORTE_|Segmentation fault|on signal" "$1"; }

"$nearfield" generate --dist uniform --dim 2 --n 6000 --seed 3 --output u2.csv >/dev/null || fail "generate u2"
"$nearfield" generate --dist clusters --dim 2 --n 6000 --seed 4 --output c2.csv >/dev/null || fail "generate c2"
"$nearfield" generate --dist uniform --dim 3 --n 5000 --seed 5 --output u3.csv >/dev/null || fail "generate u3"
"$nearfield" generate --dist plummer --dim 3 --n 5000 --seed 6 --output p3.csv >/dev/null || fail "generate p3"

# forces: each CPU near-field kernel on one input (test_mpi covers every pair of them), 2 or 3
# ranks, the same bits as one process; Newton-3 with counterforces within float's tolerance.
for run in u2:4:cpu-serial:2 c2:6:cpu-n3:3 u3:3:cpu-omp:3 p3:3:cpu-omp-n3:2; do
  IFS=: read -r name level kernel ranks <<<"$run"
  args=(forces --input "$name.csv" --level "$level" --kernel "$kernel" --precision float)
  "$nearfield" "${args[@]}" --output one.csv >/dev/null || fail "one process: ${args[*]}"
  mpi "$ranks" "${args[@]}" --output spread.csv >out.txt 2>err.txt || fail "$ranks ranks: ${args[*]}: $(cat err.txt)"
  cmp -s one.csv spread.csv || fail "$ranks ranks differ from one process: ${args[*]}"
  [ "$(grep -c "wrote" out.txt)" -eq 1 ] || fail "$ranks ranks: not one 'wrote' line: $(cat out.txt)"
  if [ "$kernel" = cpu-n3 ] || [ "$kernel" = cpu-omp-n3 ]; then
    mpi "$ranks" "${args[@]}" --cross-pairs once --output once.csv >/dev/null 2>err.txt || fail "once: $(cat err.txt)"
    "$nearfield" compare --reference one.csv --test once.csv >cmp.txt || fail "compare once: $(cat cmp.txt)"
    awk '/rel_l2/ { if ($2 + 0 > 1e-5) exit 1 }' cmp.txt || fail "--cross-pairs once: $(cat cmp.txt)"
  fi
done

# validate: the ground truth, and the same bits as one process.
mpi 3 validate --input p3.csv --level 3 --kernel cpu-serial,cpu-n3,cpu-omp,cpu-omp-n3 --precision float,double \
  >val.txt 2>err.txt || fail "validate under 3 ranks: $(cat val.txt err.txt)"
grep -q "FAIL" val.txt && fail "validate: $(cat val.txt)"
# The repeat and "vs 1 process" columns: bitwise on every row (cpu-omp-n3 too, with one thread per rank).
grep -q "vs 1 process" val.txt || fail "validate: no one-process column: $(cat val.txt)"
[ "$(grep -Ec "bitwise +1 +twice +bitwise" val.txt)" -eq 8 ] || fail "validate: one-process comparison missing: $(cat val.txt)"

# --cross-pairs under MPI: each listed way runs and is recorded (it had been dropped: "auto" and
# bitwise for "once"); once is Newton-3's counterforces sent back, not bitwise.
mpi 2 validate --input c2.csv --level 5 --kernel cpu-n3 --precision double --cross-pairs once,twice \
  >val.txt 2>err.txt || fail "validate --cross-pairs under 2 ranks: $(cat val.txt err.txt)"
grep -q "FAIL" val.txt && fail "validate --cross-pairs: $(cat val.txt)"
grep -Eq "cpu-n3 .* once " val.txt || fail "validate: no once row: $(cat val.txt)"
grep -Eq "cpu-n3 .* twice " val.txt || fail "validate: no twice row: $(cat val.txt)"

# bench: one results row per point, written by rank 0 only.
mpi 2 bench --input u2.csv --level 4 --kernel cpu-n3 --reps 3 --output bench.csv >out.txt 2>err.txt ||
  fail "bench: $(cat err.txt)"
[ "$(wc -l <bench.csv)" -eq 2 ] || fail "bench: $(wc -l <bench.csv) lines in bench.csv, expected 2"

# simulate: the same trajectory as one process (a deterministic kernel: the same bits every step).
sim=(simulate --input p3.csv --kernel cpu-n3 --level 3 --dt 0.001 --steps 5 --format bin)
"$nearfield" "${sim[@]}" --output-dir run1 >/dev/null 2>err.txt || fail "simulate, one process: $(cat err.txt)"
mpi 2 "${sim[@]}" --output-dir run2 >/dev/null 2>err.txt || fail "simulate, 2 ranks: $(cat err.txt)"
for f in run1/*.bin; do cmp -s "$f" "run2/$(basename "$f")" || fail "simulate: $(basename "$f") differs"; done
grep -q "^processes = 2$" run2/run.ini || fail "simulate: run.ini does not record 2 processes: $(cat run2/run.ini)"

# Refusals, agreed: one message from rank 0, status 2, no abort banner, on every kind.
refused() {  # refused WHAT EXPECTED_TEXT COMMAND...
  local what="$1" text="$2"
  shift 2
  "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$what: exit $rc, expected 2: $(cat out.txt err.txt)"
  grep -q -- "$text" err.txt || fail "$what: no '$text' in: $(cat err.txt)"
  [ "$(grep -c "error" err.txt)" -eq 1 ] || fail "$what: not exactly one message: $(cat err.txt)"
  banner err.txt && fail "$what: MPI abort banner: $(cat err.txt)"
  banner out.txt && fail "$what: MPI abort banner on stdout: $(cat out.txt)"
  return 0
}
refused "unknown kernel" "no-such-kernel" mpi 2 forces --input u2.csv --level 4 --kernel no-such-kernel --output x.csv
refused "all-pairs kernel" "only near-field kernels" mpi 2 forces --input u2.csv --level 4 --kernel cpu-allpairs \
  --mask near --output x.csv
refused "bad option" "unrecognised\|unrecognized" mpi 3 bench --input u2.csv --level 4 --kernel cpu-n3 --no-such-option
refused "missing input" "missing.csv" mpi 2 validate --input missing.csv --level 4 --kernel cpu-n3
refused "output folder" "no/such/folder" mpi 2 forces --input u2.csv --level 4 --kernel cpu-n3 --output no/such/folder/a.csv
refused "other command" "not a command" mpi 2 generate --dist uniform --n 10 --output g.csv
# Only rank 1 fails (the same arguments, but its folder has no input): rank 0 prints rank 1's message.
mkdir -p empty
refused "rank 1 alone" "rank 1: .*u2.csv" "$mpiexec" --allow-run-as-root --oversubscribe \
  -np 1 -wdir "$PWD" "$nearfield_mpi" forces --input u2.csv --level 4 --kernel cpu-n3 --output x.csv : \
  -np 1 -wdir "$PWD/empty" "$nearfield_mpi" forces --input u2.csv --level 4 --kernel cpu-n3 --output x.csv
[ -e x.csv ] && fail "a refused run wrote its output"
# Ranks started with different options (here the level) are refused before any work; they had
# aborted inside MPI (levels, precisions, domains), hung (commands) or mixed runs (softening).
refused "different arguments" "different arguments" "$mpiexec" --allow-run-as-root --oversubscribe \
  -np 1 "$nearfield_mpi" forces --input u2.csv --level 4 --kernel cpu-n3 --output x.csv : \
  -np 1 "$nearfield_mpi" forces --input u2.csv --level 3 --kernel cpu-n3 --output x.csv
[ -e x.csv ] && fail "a refused run wrote its output"
echo "mpi_cli: all checks passed"
