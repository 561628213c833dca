#!/usr/bin/env python3
"""Errors of two CPU kernels on a Plummer sphere, against every pair (docs/design.md §17, "From Python").

Generates a 3D Plummer sphere with nearfield.generate, computes its accelerations at one
tree level with the near-field kernel cpu-omp-n3 (only the same and adjacent boxes: a partial
force) and with the fast multipole method cpu-fmm (the full force), compares both with the float64 all-pairs sum
(cpu-allpairs), and plots the distribution of the per-particle relative error to a PNG.

Usage (from the repository root, after the build):
  PYTHONPATH=build/python python3 examples/plummer_errors.py [--n 20000] [--level 3] [--output plummer_errors.png]
"""
import argparse
import time

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import nearfield  # noqa: E402


def relative_errors(acc, exact):
    """|a_i - ref_i| / |ref_i| per particle (floored at 1e-6 of the RMS reference, as validate does)."""
    norm = np.linalg.norm(exact, axis=1)
    floor = 1e-6 * np.sqrt(np.mean(norm ** 2))
    return np.linalg.norm(acc - exact, axis=1) / np.maximum(norm, floor)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000, help="particles (default 20000)")
    parser.add_argument("--softening", type=float, default=1e-2, help="softening length (default 0.01)")
    parser.add_argument("--level", type=int, default=3,
                        help="tree level of both kernels (default 3: the FMM then has a far field at small N too)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", default="plummer_errors.png", help="the PNG to write")
    args = parser.parse_args()

    p = nearfield.generate("plummer", dim=3, n=args.n, seed=args.seed)
    pos, m, eps = p["pos"], p["m"], args.softening
    t0 = time.perf_counter()
    exact = nearfield.forces(pos, m, softening=eps, kernel="cpu-allpairs", precision="double")
    runs = {"all pairs": time.perf_counter() - t0}
    results = {}
    for kernel in ("cpu-omp-n3", "cpu-fmm"):
        t0 = time.perf_counter()
        acc, info = nearfield.forces(pos, m, softening=eps, kernel=kernel, precision="double",
                                     level=args.level, return_info=True)
        runs[kernel] = time.perf_counter() - t0
        err = relative_errors(acc, exact)
        label = f"{kernel} (level {info['level']}" + (f", order {info['order']})" if "order" in info else ")")
        results[label] = err
        l2 = np.linalg.norm(acc - exact) / np.linalg.norm(exact)
        print(f"{label}: relative L2 {l2:.3e}, median {np.median(err):.3e}, 99th percentile "
              f"{np.percentile(err, 99):.3e}, max {err.max():.3e}, {runs[kernel]:.2f} s")
    print(f"all pairs (float64 reference): {runs['all pairs']:.2f} s")

    fig, ax = plt.subplots(figsize=(7, 4.5))
    positive = np.concatenate([e[e > 0] for e in results.values()])
    smallest = positive.min() if positive.size else 1e-16  # exact results are drawn at the smallest error
    largest = max(positive.max() if positive.size else 0, 10 * smallest)
    bins = np.logspace(np.log10(smallest), np.log10(largest) + 0.1, 60)
    for label, err in results.items():
        ax.hist(np.maximum(err, smallest), bins=bins, histtype="step", linewidth=1.5, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("per-particle relative error of the acceleration, against all pairs (float64)")
    ax.set_ylabel("particles")
    ax.set_title(f"Plummer sphere, N = {args.n}, softening {eps:g}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
