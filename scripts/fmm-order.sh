#!/usr/bin/env bash
# The far field's error model (src/farfield/order.h) against measurements: cpu-fmm's relative L2
# error against float64 all pairs for orders 4..12 on uniform inputs of 10 particles per leaf box,
# 2D at levels 4 and 6, 3D at levels 3 and 4 (experiments/fmm-order.ini), rows into
# RESULTS_DIR/fmm-order/<device>.csv, and the error model's constants fitted to them (printed).
# CPU only; about 6 minutes on 2 cores.
# Usage: scripts/fmm-order.sh [BIN_DIR] [RESULTS_DIR]   (defaults build/bin, results)
set -euo pipefail
BIN="${1:-build/bin}"
RESULTS="${2:-results}"
"$BIN/nearfield" experiment experiments/fmm-order.ini --results-dir "$RESULTS" --dim 2 --level 4,6
"$BIN/nearfield" experiment experiments/fmm-order.ini --results-dir "$RESULTS" --dim 3 --level 3,4
# The error model's constants: for each dimension, the largest error over the levels and the
# distributions at each order 4..12; rho from a least-squares line through log(error), c raised
# until the line bounds every point (the model is an upper envelope: an order it picks reaches the
# accuracy on every calibrated input).
python3 - "$RESULTS"/fmm-order/*.csv <<'PY'
import csv, math, sys
rows = [r for f in sys.argv[1:] for r in csv.DictReader(open(f)) if r.get("kernel") == "cpu-fmm" and r.get("p")]
for dim in ("2", "3"):
    mine = [r for r in rows if r["dim"] == dim]
    if not mine:
        continue
    levels = sorted({int(r["level"]) for r in mine})
    worst = {}
    for r in mine:
        p = int(r["p"])
        if 4 <= p <= 12:
            worst[p] = max(worst.get(p, 0.0), float(r["rel_l2"]))
    ps = sorted(worst)
    xs, ys = ps, [math.log(worst[p]) for p in ps]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    rho = math.exp(slope)
    c = max(worst[p] / rho ** p for p in ps)
    print(f"{dim}D levels {levels}: c = {c:.4g}, rho = {rho:.4g} (orders {ps[0]}..{ps[-1]}, the worst over levels and distributions)")
PY
