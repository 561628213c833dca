#!/usr/bin/env bash
# The cost of a simulation step on the GPU machine (issue 19): the rows of the step-cost target
# (simulate --timing, 40 steps each) and, with PROFILE=1, every kernel of a 3-step run under ncu
# (one hardware timer per kernel, clocks left alone), summed per kernel name per step.
#   scripts/step-profile.sh OUTDIR [BIN_DIR]
# RUNS=REGEX keeps only the runs whose name matches the extended regular expression (e.g.
# RUNS='2d-1m-n3rotate|bpblb-l8'); STEPS=S sets the timed run's steps (default 40).
# OUTDIR/step-costs.csv: the --timing rows; OUTDIR/step-profile.txt: the log and the ncu tables.
set -uo pipefail
OUTDIR="$1"
BIN="${2:-build/bin}"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
mkdir -p "$OUTDIR"
LOG="$OUTDIR/step-profile.txt"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# name | simulate arguments (input, kernel, level)
runs=(
  "2d-8m-n3rotate|--dist uniform-exact --dim 2 --level 7 --ppb 512 --kernel n3-rotate"
  "2d-1m-n3rotate|--dist uniform-exact --dim 2 --level 6 --ppb 256 --kernel n3-rotate"
  "2d-1m-bpb|--dist uniform-exact --dim 2 --level 6 --ppb 256 --kernel bpb"
  "3d-plummer-2m-bpblb|--dist plummer --dim 3 --n 2097152 --level auto --kernel bpb-lb"
  "3d-plummer-2m-bpblb-l8|--dist plummer --dim 3 --n 2097152 --level 8 --kernel bpb-lb"
  "3d-plummer-1m-fmm|--dist plummer --dim 3 --n 1048576 --level auto --kernel fmm"
  "3d-uniform-4m-fmm|--dist uniform --dim 3 --n 4194304 --level auto --kernel fmm"
  "2d-clusters-1m-fmm|--dist clusters --dim 2 --n 1048576 --level auto --kernel fmm"
  "3d-plummer-1m-fmm-adaptive|--dist plummer --dim 3 --n 1048576 --level auto --kernel fmm-adaptive"
)
for run in "${runs[@]}"; do
  name="${run%%|*}"
  args="${run#*|}"
  [[ -z "${RUNS:-}" || "$name" =~ ${RUNS:-} ]] || continue
  echo "=== $(date +%T) $name: $args" >> "$LOG"
  # shellcheck disable=SC2086
  timeout 120 "$NF" simulate $args --seed 1 --precision float --softening 1e-4 --dt 1e-5 --steps ${STEPS:-40} \
    --format bin --output-dir "$work/run" --timing "$OUTDIR/step-costs.csv" >> "$LOG" 2> "$work/err.txt"
  echo "exit status $?" >> "$LOG"
  grep -v '^step ' "$work/err.txt" >> "$LOG"
  rm -rf "$work/run"
  [ "${PROFILE:-0}" = 1 ] || continue
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  # shellcheck disable=SC2086
  timeout 240 "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv --page raw \
    "$NF" simulate $args --seed 1 --precision float --softening 1e-4 --dt 1e-5 --steps 3 --format bin \
    --output-dir "$work/run" > "$work/ncu.csv" 2>> "$work/ncu-err.txt"
  echo "ncu exit status $?" >> "$LOG"
  rm -rf "$work/run"
  python3 - "$work/ncu.csv" >> "$LOG" <<'PY'
import csv, sys, collections, re
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows:
    print("ncu: no rows"); sys.exit()
h = rows[0]; ki = h.index("Kernel Name"); ti = h.index("gpu__time_duration.sum")
unit = rows[1][ti] if len(rows) > 1 else "nsecond"
scale = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}.get(unit, 1e-3)
tot = collections.defaultdict(float); cnt = collections.Counter()
for r in rows[2:]:
    name = re.sub(r"\(.*", "", r[ki])[:90]
    tot[name] += float(r[ti].replace(',', '')) * scale; cnt[name] += 1
print("kernel time per name over the whole 3-step run (us; count of launches)")
for n, t in sorted(tot.items(), key=lambda x: -x[1]):
    print(f"{t:12.1f} {cnt[n]:5d}  {n}")
PY
done
tail -n 5 "$work/ncu-err.txt" >> "$LOG" 2>/dev/null
