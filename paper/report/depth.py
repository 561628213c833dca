"""Section: tree depth at a fixed N: where each kernel is fastest as the boxes empty."""
import os

from .common import Flags, context_label, distinct, fmt_ms, latest, machine, ms, num, table
from .figures import sweep_figure


def best_depths(report):
    """[(machine, kernel, best level, levels, N, mean P by level)] from results/depth."""
    out = []
    for m, rows in report.tables("depth"):
        by = latest(rows, lambda r: (r["kernel"], int(r["level"]), r["n"]))
        for k in sorted({r["kernel"] for r in by.values()}):
            pts = sorted((num(r, "median_ms"), int(r["level"]), r["n"], num(r, "ppb")) for (kk, _, _), r in by.items() if kk == k)
            if pts:
                out.append((m, k, pts[0][1], sorted(p[1] for p in pts), pts[0][2], {p[1]: p[3] for p in pts}))
    return out


def depth(report):
    parts = []
    for m, rows in report.tables("depth"):
        by = latest(rows, lambda r: (r["kernel"], int(r["level"]), r["n"]))
        rows = list(by.values())
        flags = Flags(report, rows, lambda r: f"{r['kernel']}, level {r['level']}, N = {r['n']}", "interactions_per_s")
        for n in sorted({r["n"] for r in rows}, key=int):
            at = [r for r in rows if r["n"] == n]
            kernels = sorted({r["kernel"] for r in at})
            levels = sorted({int(r["level"]) for r in at})
            body = [[lv, next((r["ppb"] for r in at if int(r["level"]) == lv), "-")] +
                    [ms(by.get((k, lv, n))) + flags.mark(by.get((k, lv, n))) for k in kernels] for lv in levels]
            best = [f"{k}: level {lv} ({fmt_ms(num(by[(k, lv, n)], 'median_ms'))} ms)"
                    for mm, k, lv, _, nn, _ in best_depths(report) if mm == m and nn == n]
            dims = distinct(at, "dim")
            fig = f"depth-{m}.png"
            sweep_figure(at, "level", [lambda r: True], os.path.join(report.figdir, fig), "tree level K",
                         f"tree depth at fixed N = {n} ({dims}D), {machine(at)}", lambda gi: "")
            parts.append(f"**{m}**: N = {n} particles, {distinct(at, 'distribution')} in {dims}D, "
                         f"{distinct(at, 'precision')}; mean P = N / (boxes at the level). Times in ms, median "
                         f"[min-max].\n\n" + context_label(report, at) + "\n\n" +
                         table(["level", "mean P"] + kernels, body) + "\n\nFastest level per kernel: " + "; ".join(best) +
                         f".\n\n![depth sweep](figures/{fig})")
        parts[-1] += flags.text()
    return "\n\n".join(parts) or "(no depth results yet)"
