#!/usr/bin/env bash
# The far field's error model (src/farfield/order.h) from measurements: cpu-fmm's relative L2
# error against float64 all pairs for orders 1..16 on uniform, Plummer and clustered inputs of 10
# particles per leaf box, 2D at levels 4 and 6, 3D at levels 3 and 4 (experiments/fmm-order.ini),
# rows into RESULTS_DIR/fmm-order/<device>.csv; then the model's table (printed as C++ for
# order.h) from those rows and the double-precision rows of RESULTS_DIR/fmm-accuracy (fmm on the
# GPU, N = 2^20, level 5; scripts/fmm-bench.sh accuracy). CPU only; about 9 minutes on 2 cores.
# The experiment exits non-zero where a row is above validate's tolerance (3x the model at that
# order): the rows are written all the same, and the fit below is what the model is made of.
# Usage: scripts/fmm-order.sh [BIN_DIR] [RESULTS_DIR]   (defaults build/bin, results)
set -euo pipefail
BIN="${1:-build/bin}"
RESULTS="${2:-results}"
if [ "${FIT_ONLY:-0}" = 0 ]; then
  rm -f "$RESULTS"/fmm-order/*.csv
  "$BIN/nearfield" experiment experiments/fmm-order.ini --results-dir "$RESULTS" --dim 2 --level 4,6 || true
  "$BIN/nearfield" experiment experiments/fmm-order.ini --results-dir "$RESULTS" --dim 3 --level 3,4 || true
fi
# The model: for each dimension and order, the largest error over every calibrated input (levels,
# distributions, N). Each source (the CPU rows; the GPU's double rows) is first filled between its
# measured orders by log-linear interpolation (the GPU ran even orders only until fmm-accuracy.ini
# asked for all) and past its highest order at the mean ratio of its last four, then the sources'
# maxima are taken, then the table is made non-increasing in p
# (an order never promises less than a higher one), and rounded up to 3 digits.
# FIT_ONLY=1 skips the runs and fits the rows already there.
python3 - "$RESULTS" <<'PY'
import csv, glob, math, os, sys
results = sys.argv[1]
def rows(pattern, keep):
    return [r for f in glob.glob(os.path.join(results, pattern)) for r in csv.DictReader(open(f)) if keep(r)]
sources = {
    "cpu-fmm, float64 all pairs (fmm-order)": rows("fmm-order/*.csv", lambda r: r.get("kernel") == "cpu-fmm"),
    "fmm double, N = 2^20 (fmm-accuracy)": rows("fmm-accuracy/*.csv",
                                                lambda r: r.get("kernel") == "fmm" and r.get("precision") == "double"),
}
MAX_ORDER = 20
for dim in ("2", "3"):
    env, used = {}, []
    for name, rs in sources.items():
        worst = {}
        for r in rs:
            if r["dim"] == dim and r.get("p") and r.get("rel_l2"):
                p = int(r["p"])
                worst[p] = max(worst.get(p, 0.0), float(r["rel_l2"]))
        if not worst:
            continue
        ps = sorted(worst)
        used.append(f"{name}: orders {ps[0]}..{ps[-1]} ({len(ps)} measured)")
        for a, b in zip(ps, ps[1:]):
            for p in range(a + 1, b):
                t = (p - a) / (b - a)
                worst[p] = math.exp((1 - t) * math.log(worst[a]) + t * math.log(worst[b]))
        top = ps[-1]
        if top < MAX_ORDER:  # past its measurements: the mean ratio of its last four orders
            lo = max(ps[0], top - 4)
            rho = (worst[top] / worst[lo]) ** (1.0 / (top - lo))
            for p in range(top + 1, MAX_ORDER + 1):
                worst[p] = worst[top] * rho ** (p - top)
            used[-1] += f", extrapolated to {MAX_ORDER} at {rho:.3f} an order"
        for p, e in worst.items():
            env[p] = max(env.get(p, 0.0), e)
    if not env:
        continue
    for p in range(MAX_ORDER - 1, 0, -1):
        env[p] = max(env.get(p, 0.0), env[p + 1])
    def up(x):
        e = math.floor(math.log10(x)) - 2
        return math.ceil(x / 10 ** e) * 10 ** e
    table = ", ".join(f"{up(env[p]):.3g}" for p in range(1, MAX_ORDER + 1))
    print(f"{dim}D from " + "; ".join(used))
    print(f"  {dim}D table, p = 1..{MAX_ORDER}: {{{table}}}")
PY
