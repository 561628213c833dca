"""Figures drawn by several sections: Fig. 8 redrawn, and time against a swept parameter."""
import sys

from .common import FULL_LEVEL, PAPER_DEVICE, num
from .facts import best_newton3
from .kernels import BPB, BPB_N3, FIGURE_STYLES

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # pragma: no cover - reported to the user
    sys.exit("make_report.py needs matplotlib: install the Debian package python3-matplotlib "
             "and run it with /usr/bin/python3")


def fig8(report, by, ps, gpu, path):
    paper = report.paper
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    pp = sorted(paper)
    ax.plot(pp, [paper[p]["bpb_ms"] for p in pp], "o--", color="tab:blue", label=f"original BPB, paper ({PAPER_DEVICE})")
    ax.plot(pp, [paper[p]["bpb_n3_ms"] for p in pp], "s--", color="tab:red", label=f"improved BPB, paper ({PAPER_DEVICE})")
    best, _ = best_newton3(report, by, max(ps)) if ps else (None, None)
    curves = [(BPB, "tab:blue", "o", f"original BPB ({BPB})"), (BPB_N3, "tab:red", "s", f"improved BPB ({BPB_N3})")]
    if best:
        curves.append((best, "tab:green", "D", f"best new Newton-3 kernel ({best})"))
    for k, color, marker, label in curves:
        pts = [(p, by[(k, FULL_LEVEL, p)]) for p in ps if (k, FULL_LEVEL, p) in by]
        if not pts:
            continue
        med = [num(r, "median_ms") for _, r in pts]
        err = [[m - num(r, "min_ms") for (_, r), m in zip(pts, med)], [num(r, "max_ms") - m for (_, r), m in zip(pts, med)]]
        ax.errorbar([p for p, _ in pts], med, yerr=err, fmt=marker + "-", color=color, label=f"{label}, ours ({gpu})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(f"particles per box P (level {FULL_LEVEL}, {4 ** FULL_LEVEL} boxes)")
    ax.set_ylabel("time of one evaluation (ms)")
    ax.set_title("Fig. 8 redrawn: original vs improved BPB" + (f", and {best}" if best else ""))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def sweep_figure(rows, xcol, groups, path, xlabel, title, group_label):
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    dashes = ["-", "--", ":", "-."]
    for gi, g in enumerate(groups):
        for k in sorted({r["kernel"] for r in rows}):
            pts = sorted((float(r[xcol]), num(r, "median_ms")) for r in rows if r["kernel"] == k and g(r))
            if not pts:
                continue
            color, marker = FIGURE_STYLES.get(k, ("black", "x"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, linestyle=dashes[gi % 4], color=color,
                    label=f"{k} {group_label(gi)}".strip())
    ax.set_yscale("log")
    if xcol == "ppb":
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("time of one evaluation (ms)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
