#!/usr/bin/env bash
# The report generator: on the committed results it writes every section and figure and starts
# with a verdict; on a small results folder made here by the nearfield binary it labels the table
# with its rows' context and flags a row measured unlike the others (re-measured with other reps);
# its sets of kernels follow the traits of `nearfield bench --list`, not names typed in the script.
# Usage: report_test.sh SOURCE_DIR NEARFIELD_BINARY
set -euo pipefail
src="$1"
nearfield="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import matplotlib' >/dev/null 2>&1; then python="$p"; break; fi
done
[ -n "$python" ] || { echo "no python3 with matplotlib (Debian package python3-matplotlib)"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
# A command whose output the test does not read: kept in a log, printed with the command if it fails.
quiet() {
  local rc=0
  "$@" > "$tmp/quiet.log" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { cat "$tmp/quiet.log"; fail "exit $rc: $*"; }
}
# Any other command that fails names its line.
trap 'echo "FAIL: line $LINENO exits non-zero: $BASH_COMMAND"' ERR

# 1. The committed results.
mkdir -p "$tmp/paper"
cp -r "$src/paper/reference" "$tmp/paper/"
"$python" "$src/paper/make_report.py" --results "$src/results" --paper "$tmp/paper" --nearfield "$nearfield"
readme="$tmp/paper/README.md"
for section in "Table III" "The GPU tree build" "Tables I and II" "Tree depth" "Particles per box" "Validation" \
               "What reproduces"; do
  grep -qE "^## [0-9]+\. $section" "$readme" || fail "missing section: $section"
done
if grep -q "(no " "$readme"; then grep "(no " "$readme"; fail "a section has no results"; fi
# The verdict comes first: the lines right after the title say what reproduced and what did not.
sed -n 3p "$readme" | grep -qE '^- \*\*(Reproduced|Partly reproduced|Not reproduced|Not tested)' \
  || fail "no verdict on the first lines"
grep -q "Measured on: " "$readme" || fail "tables carry no context label"
# The far field's speed targets, each with a verdict computed from the committed rows.
grep -q "^### The speed targets" "$readme" || fail "no far-field speed targets"
grep -qE '^\| uniform 3D, N = 16777216, <= 1e-04, <= 60 ms \| [^|]+ \| [^|]+ \| [^|]+ \| (\*\*met\*\*|met at `--order [0-9]+[^`]*` only|not met) \|$' \
  "$readme" || fail "the speed targets' table has no verdict for uniform 2^24 at 1e-04"
ls "$tmp/paper/figures"/fig8-*.png "$tmp/paper/figures"/depth-*.png "$tmp/paper/figures"/ppb-*.png > /dev/null

# 2. A small results folder: a reduced-scale table3 whose P = 3 row is re-measured with 1 timed run
#    instead of 2. The report must label the table (scale, compiler) and flag exactly that row.
cat > "$tmp/table3.ini" <<'INI'
description = tiny table3
mode = bench
dist = uniform-exact
dim = 2
level = 2
ppb = 2,3,4
kernel = cpu-serial
reps = 2
warmup = 0
[reduced]
level = 2
INI
quiet "$nearfield" experiment "$tmp/table3.ini" --reduced --results-dir "$tmp/results"
quiet "$nearfield" experiment "$tmp/table3.ini" --reduced --results-dir "$tmp/results" --remeasure --ppb 3 --reps 1
# A CPU-only newton3 table (the kernels of a reduced run, no bpb): its times must show.
cat > "$tmp/newton3.ini" <<'INI'
description = tiny newton3
mode = bench
dist = uniform-exact
dim = 2
level = 2
ppb = 2
kernel = cpu-n3,cpu-omp-n3
precision = double
reps = 2
warmup = 0
INI
quiet "$nearfield" experiment "$tmp/newton3.ini" --results-dir "$tmp/results"
mkdir -p "$tmp/small"
cp -r "$src/paper/reference" "$tmp/small/"
quiet "$python" "$src/paper/make_report.py" --results "$tmp/results" --paper "$tmp/small" --nearfield "$nearfield"
small="$tmp/small/README.md"
sed -n 3p "$small" | grep -q '^- \*\*Not tested' || fail "the verdict claims more than a CPU-only run tested"
grep -q "scale reduced" "$small" || fail "the table does not say it is reduced scale"
grep -qE "compiler [A-Za-z]+ [0-9]" "$small" || fail "the table does not name the compiler"
grep -q "⚑1 cpu-serial, level 2, P = 3: 1 timed runs (other cpu-serial rows: 2)" "$small" \
  || fail "the re-measured row with other reps is not flagged"
[ "$(grep -c '⚑1' "$small")" -eq 2 ] || fail "expected the flag on exactly one table cell and one note"
grep -q "2D, double, level 2, P = 2: ms as median \[min-max\] (bpb not measured here, so no speedups)" "$small" \
  || fail "the CPU-only Newton-3 caption promises what its table does not show"
grep -qx '| dim | level | P | precision | cpu-n3 | cpu-omp-n3 |' "$small" || fail "the CPU Newton-3 kernels are not columns"
grep -qE '^\| 2D \| 2 \| 2 \| double \| [0-9.]+ \[[0-9.]+-[0-9.]+\] \| [0-9.]+ \[' "$small" \
  || fail "the CPU Newton-3 table drops its measured times"
# 3. Simulation results (CPU runs made here): without them the section says what is missing; with
#    them it shows the energy drift, the cost table and a strip of frames.
grep -q "^\*\*Not measured yet:\*\* results/energy-check/" "$small" || fail "the simulation section does not say what is missing"
quiet "$nearfield" generate --dist galaxies --n 600 --seed 1 --output "$tmp/g.bin"
sim="$tmp/results/collision"
quiet "$nearfield" simulate --input "$tmp/g.bin" --kernel cpu-allpairs --softening 0.05 --dt 0.05 --steps 20 \
  --snapshot-every 5 --render-every 5 --render-size 32 --output-dir "$tmp/run" --format bin \
  --timing "$tmp/timing.csv"
mkdir -p "$sim/cpu/cpu-allpairs" "$tmp/results/simulate"
cp "$tmp/run"/energy.csv "$tmp/run"/run.ini "$tmp/run"/frame_*.png "$sim/cpu/cpu-allpairs/"
cp "$tmp/timing.csv" "$sim/cpu.csv"
cp "$tmp/timing.csv" "$tmp/results/simulate/cpu.csv"
quiet "$python" "$src/paper/make_report.py" --results "$tmp/results" --paper "$tmp/small" --nearfield "$nearfield"
grep -q "^\*\*Cost of a step\*\*" "$small" || fail "no cost table from results/simulate"
grep -q "Energy drift of the CPU float all-pairs run (cpu-allpairs, 600 particles, 20 steps" "$small" \
  || fail "no energy drift of the collision run"
[ -f "$tmp/small/figures/collision-cpu.png" ] || fail "no strip of frames"
grep -q "^\*\*Not measured yet:\*\* results/energy-check/ (the energy check on the GPU)\. " "$small" \
  || fail "the missing energy check is not named alone"
# 4. Kernel sets come from `nearfield bench --list`, parsed by columns: through a binary whose list
#    drops n3-shfl (a kernel removed since its rows were written), takes Newton-3 from n3-colour's
#    traits and drops the "scratch" trait (narrowing the traits column of some rows), the Newton-3
#    table of the committed Table III shows only n3-rotate beside the paper's kernels, while the
#    table of all kernels keeps the rows of the unlisted and the changed kernel.
printf '#!/usr/bin/env bash\nif [ "$1 $2" = "bench --list" ]; then\n  %q bench --list | grep -v "^n3-shfl " | sed -e "s/, scratch//" -e "/^n3-colour /s/Newton-3, //"\nelse\n  exec %q "$@"\nfi\n' \
  "$nearfield" "$nearfield" > "$tmp/nearfield-list"
chmod +x "$tmp/nearfield-list"
mkdir -p "$tmp/registry/results" "$tmp/registry/paper"
cp -r "$src/results/table3" "$tmp/registry/results/"
cp -r "$src/paper/reference" "$tmp/registry/paper/"
"$python" "$src/paper/make_report.py" --results "$tmp/registry/results" --paper "$tmp/registry/paper" \
  --nearfield "$tmp/nearfield-list" > /dev/null || fail "the report fails on a changed kernel list"
reg="$tmp/registry/paper/README.md"
grep -qx '| P | bpb | bpb-n3 | speedup | n3-rotate | speedup |' "$reg" \
  || fail "the new Newton-3 kernels are not the listed GPU kernels with the Newton-3 trait"
grep -E '^\| P \| bpb \| bpb-lb \|' "$reg" | grep -q '| n3-colour |.*| n3-shfl |' \
  || fail "the rows of an unlisted or changed kernel are gone from the table of all kernels"
echo "report OK"
