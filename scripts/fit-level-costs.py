#!/usr/bin/python3
"""Fits each GPU kernel's cost per near-field pair and per box (methods/level_costs.cc) from the
committed depth and non-uniform results: median_ms = pair_s * pairs + box_s * boxes + link_s * links, least
squares on the relative error, every coefficient >= 0. The pairs are the rows' counted
interactions; the boxes and links (non-empty boxes and the links among them, each box's own
included, or every box and link for the dense-layout kernels) come from `nearfield tree` on the
same generated input. Prints one C++ table line per (kernel, dim) and the
fit's worst relative error.

  scripts/fit-level-costs.py NEARFIELD_BINARY [RESULTS_DIR]   (docs/design.md §11)
"""
import csv
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np

DENSE = {"bpb", "bpb-n3"}
SOURCES = ["depth", "nonuniform"]


def tree_counts(nf, dist, dim, n, seed, level, cache={}):
    """(non-empty boxes, links among them counting each box itself, all boxes, their links)."""
    key = (dist, dim, n, seed, level)
    if key not in cache:
        out = subprocess.run([nf, "tree", "--dist", dist, "--dim", str(dim), "--n", str(n), "--seed", str(seed),
                              "--level", str(level)], capture_output=True, text=True, check=True).stdout
        v = {l.split(":")[0]: l.split(":")[1].strip() for l in out.splitlines() if ":" in l}
        m, nbox = int(v["nonempty_boxes"]), int(v["boxes"])
        cache[key] = (m, m + int(v["neighbor_links_nonempty"]), nbox, nbox + int(v["neighbor_links_full"]))
    return cache[key]


def fit(points):
    """min sum ((c . x) / t - 1)^2 over c >= 0: every subset of the terms solved by least squares,
    the best feasible one kept."""
    terms = len(points[0][0])
    a = np.array([[xi / t for xi in x] for x, t in points])
    best, best_err = None, float("inf")
    for mask in itertools.product([0, 1], repeat=terms):
        cols = [i for i in range(terms) if mask[i]]
        if not cols:
            continue
        c, *_ = np.linalg.lstsq(a[:, cols], np.ones(len(points)), rcond=None)
        if (c < 0).any():
            continue
        full = np.zeros(terms)
        full[cols] = c
        err = float(((a @ full - 1.0) ** 2).sum())
        if err < best_err:
            best, best_err = full, err
    return best


def main():
    nf = sys.argv[1]
    results = Path(sys.argv[2] if len(sys.argv) > 2 else "results")
    groups, series = {}, {}
    for source in SOURCES:
        for f in sorted((results / source).glob("nvidia-h100*.csv")):
            for r in csv.DictReader(open(f)):
                if r.get("level_rule") == "auto" or r["precision"] != "float" or not r["interactions"]:
                    continue
                dim, level, n = int(r["dim"]), int(r["level"]), int(r["n"])
                m, links, nbox, all_links = tree_counts(nf, r["distribution"], dim, n, int(r["seed"] or 1), level)
                x = (float(r["interactions"]), float(nbox if r["kernel"] in DENSE else m),
                     float(all_links if r["kernel"] in DENSE else links))
                t = float(r["median_ms"]) * 1e-3
                groups.setdefault((r["kernel"], dim), []).append((x, t))
                series.setdefault((r["kernel"], dim, r["distribution"]), []).append((level, x, t))
    for (kernel, dim), pts in sorted(groups.items()):
        c = fit(pts)
        model = lambda x: float(np.dot(c, x))
        worst = max(abs(model(x) / t - 1.0) for x, t in pts)
        print(f'      {{"{kernel}", {dim}, {c[0]:.4g}, {c[1]:.4g}, {c[2]:.4g}}},  // {len(pts)} points, '
              f'worst {100 * worst:.0f}%')
        for (k, d, dist), levels in sorted(series.items()):
            if (k, d) != (kernel, dim):
                continue
            pick = min(levels, key=lambda v: (model(v[1]), v[0]))
            best = min(levels, key=lambda v: v[2])
            print(f"      //   {dist}: the fit picks level {pick[0]} ({pick[2] * 1e3:.3g} ms), best measured "
                  f"{best[0]} ({best[2] * 1e3:.3g} ms): {pick[2] / best[2]:.2f}x")


if __name__ == "__main__":
    main()
