#!/usr/bin/env python3
"""The far field's error model (src/farfield/order.h) from measured rows.

For each dimension and order p = 1..20, the largest relative L2 error over every calibrated input:
cpu-fmm against float64 all pairs (RESULTS/fmm-order/, scripts/fmm-order.sh) and fmm in double
(RESULTS/fmm-accuracy/, scripts/fmm-bench.sh accuracy). Each source is first filled between its
measured orders by log-linear interpolation (where a source skipped orders) and past
its highest order at the mean ratio of its last four (at most 1); then the sources' maxima are taken, the table
is made non-increasing in p (an order never promises less than a higher one) and rounded up to 3
digits.

Orders below every source's lowest take that order's error. The tables hold one entry per order
1..kMaxOrder (src/farfield/multi_index.h).

The adaptive methods' 3D margin over that table (order.h: kAdaptiveMargin3): the largest measured
error of fmm-adaptive over the table's at its order, over every order, input, leaf size and
precision of RESULTS/fmm-depth-error/ (scripts/fmm-bench.sh depth-error), rounded up to 2 decimals.

The sparse factor (order.h: kSparseSlope, kSparseScale): 3D rows of uniform fmm in double on
sparse trees (RESULTS/fmm-sparse/, scripts/fmm-sparse.sh and scripts/fmm-bench.sh sparse), each
row's error over the table at its order, r, against x = N^2 / 8^level. For each slope s = 0.10,
0.15, .., 0.50 the scale is the smallest that bounds every row of r >= 1, max x r^(1/s); the slope
kept is the one whose factor (scale / x)^s overshoots those rows least (the largest factor / r),
its scale rounded up to 2 significant digits; kSparseLeastX, the smallest x of any row rounded down
to 2 digits, where the factor stops growing. Only double rows count (the truncation alone). The 2D rows must stay within the depth factor
(1 up to level 5, 1 + 0.8 (level - 5) past it): 2D takes no sparse factor.

Usage: fit_error_model.py RESULTS_DIR               prints the tables as C++ initializers
       fit_error_model.py RESULTS_DIR --check FILE  exits 1 unless FILE's tables k2, k3,
                                                    kAdaptiveMargin3 and the sparse factor equal them
"""
import csv
import glob
import math
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def max_order():
    """kMaxOrder of src/farfield/multi_index.h: the table has one entry per order 1..kMaxOrder."""
    text = open(os.path.join(ROOT, "src", "farfield", "multi_index.h")).read()
    return int(re.search(r"constexpr int kMaxOrder = (\d+);", text).group(1))


def sources(results):
    def rows(pattern, keep):
        return [r for f in sorted(glob.glob(os.path.join(results, pattern))) for r in csv.DictReader(open(f))
                if keep(r)]
    return {
        "cpu-fmm against float64 all pairs (fmm-order)": rows("fmm-order/*.csv", lambda r: r.get("kernel") == "cpu-fmm"),
        "fmm in double, N = 2^20 (fmm-accuracy)": rows(
            "fmm-accuracy/*.csv", lambda r: r.get("kernel") == "fmm" and r.get("precision") == "double"),
    }


def round_up(x):
    e = math.floor(math.log10(x)) - 2
    return float(f"{math.ceil(round(x / 10 ** e, 9)) * 10 ** e:.3g}")


def fit(results):
    """{dim: ([error at p = 1..kMaxOrder], [what each source gave])} for the dimensions measured."""
    MAX_ORDER = max_order()
    out = {}
    for dim in ("2", "3"):
        env, used = {}, []
        for name, rs in sources(results).items():
            worst = {}
            for r in rs:
                if r["dim"] == dim and r.get("p") and r.get("rel_l2"):
                    p, e = int(r["p"]), float(r["rel_l2"])
                    if not e > 0 or math.isinf(e):
                        sys.exit(f"fit_error_model: {name}, {dim}D p = {p}: relative L2 error {r['rel_l2']} "
                                 "(a model needs a finite, positive error at every measured order)")
                    worst[p] = max(worst.get(p, 0.0), e)
            if not worst:
                continue
            ps = sorted(worst)
            used.append(f"{name}: orders {ps[0]}..{ps[-1]} ({len(ps)} measured)")
            for a, b in zip(ps, ps[1:]):
                for p in range(a + 1, b):
                    t = (p - a) / (b - a)
                    worst[p] = math.exp((1 - t) * math.log(worst[a]) + t * math.log(worst[b]))
            top = ps[-1]
            if top < MAX_ORDER:
                lo = max(ps[0], top - 4)
                if lo == top:
                    sys.exit(f"fit_error_model: {name}, {dim}D: one order measured ({top}); nothing to extrapolate from")
                # at most flat: a source on its rounding floor does not lift the higher orders
                rho = min(1.0, (worst[top] / worst[lo]) ** (1.0 / (top - lo)))
                for p in range(top + 1, MAX_ORDER + 1):
                    worst[p] = worst[top] * rho ** (p - top)
                used[-1] += f", extrapolated to {MAX_ORDER} at {rho:.3f} an order"
            for p, e in worst.items():
                env[p] = max(env.get(p, 0.0), e)
        if not env:
            continue
        lowest = min(env)
        for p in range(MAX_ORDER - 1, lowest - 1, -1):
            env[p] = max(env.get(p, 0.0), env[p + 1])
        for p in range(1, lowest):  # below every source: the lowest measured order's error
            env[p] = env[lowest]
        out[dim] = ([round_up(env[p]) for p in range(1, MAX_ORDER + 1)], used)
    return out


def adaptive_margin(results, table3):
    """(the margin, the orders measured) of fmm-adaptive in 3D over table3, or None where
    RESULTS/fmm-depth-error holds no such rows."""
    worst = {}
    for f in sorted(glob.glob(os.path.join(results, "fmm-depth-error", "*.csv"))):
        for r in csv.DictReader(open(f)):
            if r.get("kernel") == "fmm-adaptive" and r["dim"] == "3" and r.get("p") and r.get("rel_l2"):
                p = int(r["p"])
                worst[p] = max(worst.get(p, 0.0), float(r["rel_l2"]) / table3[p - 1])
    if not worst:
        return None
    return math.ceil(round(max(worst.values()) * 100, 6)) / 100, sorted(worst)


def sparse_rows(results, tables):
    """{dim: [(x, r, level, where)]} of the rows under RESULTS/fmm-sparse (r: error over the table
    of that dimension, tables[dim])."""
    out = {"2": [], "3": []}
    for f in sorted(glob.glob(os.path.join(results, "fmm-sparse", "*.csv"))):
        for r in csv.DictReader(open(f)):
            if (r.get("kernel") not in ("fmm", "cpu-fmm") or r.get("precision") != "double" or not r.get("p")
                    or not r.get("rel_l2")):
                continue  # the truncation alone: float rows would add float32's rounding
            dim, n, level, p = r["dim"], int(r["n"]), int(r["level"]), int(r["p"])
            x = n * n / 2.0 ** (int(dim) * level)
            out[dim].append((x, float(r["rel_l2"]) / tables[dim][p - 1], level, f"N = {n}, level {level}, p = {p}"))
    return out


def sparse_fit(rows3):
    """(slope, scale, worst overshoot, least x) bounding the 3D rows of r >= 1, or None without
    any; least x: the smallest x measured, rounded down to 2 significant digits (below it the
    factor stays at its value there)."""
    over = [(x, r) for x, r, _, _ in rows3 if r >= 1]
    if not over:
        return None
    least = min(x for x, _, _, _ in rows3)
    least_digits = 10 ** (math.floor(math.log10(least)) - 1)
    best = None
    for step in range(2, 11):
        s = step * 0.05
        scale = max(x * r ** (1 / s) for x, r in over)
        overshoot = max((scale / x) ** s / r for x, r in over)
        if best is None or overshoot < best[2] - 1e-12:
            best = (round(s, 2), scale, overshoot)
    digits = 10 ** (math.floor(math.log10(best[1])) - 1)
    return best[0], math.ceil(best[1] / digits) * digits, best[2], math.floor(least / least_digits) * least_digits


def depth_factor_2d(level):
    return 1.0 + 0.8 * (level - 5) if level > 5 else 1.0


def tables_in(path):
    text = open(path).read()
    found = {}
    for dim in ("2", "3"):
        m = re.search(r"k%s\[kMaxOrder\]\s*=\s*\{([^}]*)\}" % dim, text)
        if m:
            found[dim] = [float(v) for v in m.group(1).replace("\n", " ").split(",") if v.strip()]
    m = re.search(r"kAdaptiveMargin3\s*=\s*([0-9.eE+-]+)\s*;", text)
    if m:
        found["adaptive3"] = float(m.group(1))
    for key in ("kSparseSlope", "kSparseScale", "kSparseLeastX"):
        m = re.search(key + r"\s*=\s*([0-9.eE+-]+)\s*;", text)
        if m:
            found[key] = float(m.group(1))
    return found


def main():
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and sys.argv[2] != "--check"):
        sys.exit(__doc__)
    fitted = fit(sys.argv[1])
    margin = adaptive_margin(sys.argv[1], fitted["3"][0]) if "3" in fitted else None
    sparse = (sparse_rows(sys.argv[1], {d: fitted[d][0] for d in fitted}) if "3" in fitted and "2" in fitted
              else {"2": [], "3": []})
    factor = sparse_fit(sparse["3"])
    above_2d = [(w, r) for x, r, level, w in sparse["2"] if r > depth_factor_2d(level)]
    if len(sys.argv) == 2:
        for dim, (table, used) in fitted.items():
            print(f"{dim}D from " + "; ".join(used))
            print(f"  k{dim}[kMaxOrder] = {{" + ", ".join(f"{v:.3g}" for v in table) + "};")
        if margin:
            print(f"3D adaptive margin from fmm-depth-error, orders {', '.join(map(str, margin[1]))} measured")
            print(f"  kAdaptiveMargin3 = {margin[0]:.2f};")
        if factor:
            print(f"3D sparse factor from fmm-sparse, {len(sparse['3'])} rows (overshoot at most {factor[2]:.2f}x)")
            print(f"  kSparseSlope = {factor[0]:g};\n  kSparseScale = {factor[1]:g};\n  kSparseLeastX = {factor[3]:g};")
        for w, r in above_2d:
            print(f"2D {w}: {r:.2f}x the table, above the depth factor")
        return
    have = tables_in(sys.argv[3])
    bad = False
    for dim in ("2", "3"):
        if dim not in fitted:
            print(f"{dim}D: no calibration rows under {sys.argv[1]}")
            bad = True
        elif have.get(dim) != fitted[dim][0]:
            print(f"{dim}D: {sys.argv[3]} holds {have.get(dim)}\n    the rows give {fitted[dim][0]}")
            bad = True
    if margin is None:
        print(f"3D adaptive margin: no fmm-adaptive rows under {sys.argv[1]}/fmm-depth-error")
        bad = True
    elif have.get("adaptive3") != margin[0]:
        print(f"3D adaptive margin: {sys.argv[3]} holds {have.get('adaptive3')}\n    the rows give {margin[0]}")
        bad = True
    if factor is None:
        print(f"3D sparse factor: no double rows of error at least the table's under {sys.argv[1]}/fmm-sparse"
              + ("" if "2" in fitted and "3" in fitted else " (no calibration tables to measure them against)"))
        bad = True
    elif (have.get("kSparseSlope"), have.get("kSparseScale"), have.get("kSparseLeastX")) != factor[:2] + factor[3:]:
        print(f"3D sparse factor: {sys.argv[3]} holds slope {have.get('kSparseSlope')}, scale "
              f"{have.get('kSparseScale')}, least x {have.get('kSparseLeastX')}\n    the rows give {factor[0]:g}, "
              f"{factor[1]:g}, {factor[3]:g}")
        bad = True
    for w, r in above_2d:
        print(f"2D {w}: {r:.2f}x the table, above the depth factor (2D would need a sparse factor)")
        bad = True
    if bad:
        print("error_model: order.h differs from the measured rows. The tables: rerun scripts/fmm-order.sh (FIT_ONLY=1 "
              "fits the rows there) and copy its tables into src/farfield/order.h; the margin kAdaptiveMargin3: "
              "rerun scripts/fmm-bench.sh depth-error and copy the value this script prints; the sparse factor: rerun "
              "scripts/fmm-sparse.sh (and fmm-bench.sh sparse) and copy kSparseSlope, kSparseScale and kSparseLeastX")
        sys.exit(1)
    print(f"error_model: the 2D and 3D tables, the 3D adaptive margin and the sparse factor of {sys.argv[3]} are the fit of the rows "
          f"under {sys.argv[1]}")


if __name__ == "__main__":
    main()
