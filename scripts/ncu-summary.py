#!/usr/bin/env python3
"""Sums an ncu --csv log (scripts/fmm-profile.sh) by kernel: total duration, launches, and the
duration-weighted issue-slot, resident-warp, SM and memory throughput percentages, largest first.
The log is read as the report reads it (paper/report/fmm_profile.py: launches, number).
Usage: scripts/ncu-summary.py LOG.csv [TOP]   (TOP: how many kernels, default 30)"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "paper"))
from report.fmm_profile import launches, number  # noqa: E402


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    runs = launches(path)
    if not runs:
        sys.exit(f"ncu-summary.py: {path}: no ncu rows")
    weighted = ("smsp__issue_active.avg.pct_of_peak_sustained_active", "sm__warps_active.avg.pct_of_peak_sustained_active",
                "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
    kernels = {}
    for launch in runs.values():
        name = launch["name"].split("(")[0]
        ms = number(launch.get("gpu__time_duration.sum")) / 1e6
        k = kernels.setdefault(name, {"ms": 0.0, "n": 0, "w": [0.0] * len(weighted),
                                      "regs": launch.get("launch__registers_per_thread", "?"),
                                      "block": launch.get("launch__block_size", "?")})
        k["ms"] += ms
        k["n"] += 1
        for i, m in enumerate(weighted):
            k["w"][i] += ms * number(launch.get(m))
    total = sum(k["ms"] for k in kernels.values())
    print(f"{path}: {len(runs)} launches, {total:.3f} ms in all (kernels as ncu timed them, one at a time)")
    print("| ms | share | launches | issue % | warps % | SM % | memory % | registers | block | kernel |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, k in sorted(kernels.items(), key=lambda kv: -kv[1]["ms"])[:top]:
        w = [x / k["ms"] if k["ms"] > 0 else 0.0 for x in k["w"]]
        print(f"| {k['ms']:.3f} | {100 * k['ms'] / total:.1f}% | {k['n']} | {w[0]:.1f} | {w[1]:.1f} | {w[2]:.1f} | {w[3]:.1f} | "
              f"{k['regs']} | {k['block']} | {name.replace('|', '/')} |")


if __name__ == "__main__":
    main()
