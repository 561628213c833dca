"""Parts of the fmm report section (fmm_hopper.py) on how the method grows: time against N beside all
pairs (results/fmm-scaling) and error against the order (results/fmm-accuracy)."""
import os
from collections import defaultdict

from .common import Flags, context_label, distinct, fmt_ms, join, latest, machine, num, table
from .figures import plt
from .kernels import GROUND_TRUTH
from .fmm_common import DIST_STYLE, full_method, on, bench_rows, order_of, is_auto, share, per_s, pct


def scaling_figure(fmm, ap, path, title):
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    styles = ("o-", "^-.", "v:", "D-")  # a marker and line per full method, a colour per input
    kernels = sorted({k for k, _ in fmm})
    for (kernel, dist), pts in sorted(fmm.items()):
        pts = sorted(pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], styles[kernels.index(kernel) % len(styles)],
                color=DIST_STYLE.get(dist, "black"), label=f"{kernel} (level auto), {dist}")
    for (kernel, dist), pts in sorted(ap.items()):
        pts = sorted(pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "s--", color=DIST_STYLE.get(dist, "black"),
                label=f"{kernel}, {dist}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N")
    ax.set_ylabel("time of one evaluation (ms)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def scaling_part(report, out):
    parts = []
    for m, all_rows in report.tables("fmm-scaling"):
        fmm = list(latest(bench_rows(report, all_rows),
                          lambda r: (r["kernel"], r["distribution"], r["dim"], r["precision"], int(r["n"]),
                                     r.get("near_kernel", ""), r.get("accuracy", ""))).values())
        all_pairs = report.kernels.all_pairs | {GROUND_TRUTH}
        ap = latest([r for r in all_rows if r["kernel"] in all_pairs and r.get("median_ms")],
                    lambda r: (r["distribution"], r["dim"], r["precision"], int(r["n"]), r["kernel"]))
        if not fmm:
            continue
        fmm.sort(key=lambda r: (r["distribution"] != "uniform", r["distribution"], r["kernel"], int(r["n"])))
        flags = Flags(report, fmm + list(ap.values()),
                      lambda r: f"{r['kernel']} {r['distribution']} N = {r['n']}")
        ap_kernels = sorted({k[4] for k in ap})
        body, speedups = [], []
        fig_fmm, fig_ap = defaultdict(list), defaultdict(list)
        for r in fmm:
            n = int(r["n"])
            t = num(r, "median_ms")
            fig_fmm[(r["kernel"], r["distribution"])].append((n, t))
            cells = []
            for k in ap_kernels:
                a = ap.get((r["distribution"], r["dim"], r["precision"], n, k))
                if a:
                    x = num(a, "median_ms") / t
                    speedups.append((x, k, r["distribution"], n))
                    cells.append(f"{fmt_ms(num(a, 'median_ms'))}{flags.mark(a)} ({x:.1f}x)")
                else:
                    cells.append("-")
            body.append([r["kernel"], r["distribution"], f"{r['dim']}D", n,
                         r["level"] + (" (auto)" if is_auto(r) else ""), order_of(r) or "-",
                         fmt_ms(t) + flags.mark(r), f"{per_s(n, t):.3g}", pct(share(r))] + cells)
        for (dist, dim, prec, n, k), a in ap.items():
            fig_ap[(k, dist)].append((n, num(a, "median_ms")))
        acc = distinct(fmm, "accuracy")
        text = [f"**{m}**: the full method at the level `--level auto` chose and the order the accuracy chose ("
                + (f"accuracy {acc}" if acc else "the default `--accuracy`; the rows leave the column empty") +
                "), against N; "
                f"ms (median of {distinct(fmm, 'reps')} timed runs), particles per second (N over the evaluation "
                "time) and, where measured at the same N and input, the all-pairs kernel's time (its speed-up over "
                "all pairs: all-pairs time / full-method time).\n\n" + context_label(report, fmm + list(ap.values()))
                + "\n\n" + table(["method", "input", "dim", "N", "level", "p", "ms", "particles/s", "near share"] +
                                 [f"{k} ms (speed-up)" for k in ap_kernels], body) + flags.text()]
        if speedups:
            best = max(speedups)
            worst = min(speedups)
            slower = sorted((n, d) for x, k, d, n in speedups if x < 1)
            text.append(f"The speed-up over all pairs at equal N ranges from {worst[0]:.2g} ({worst[2]}, N = {worst[3]}) "
                        f"to {best[0]:.3g} ({best[2]}, N = {best[3]})" +
                        (("; all pairs is the faster at " + join(f"{d} N = {n}" for n, d in slower)) if slower else "")
                        + ".")
        else:
            text.append("No all-pairs rows at the same N and input in this file: the speed-up over all pairs is "
                        "not measured yet.")
        if speedups:
            out.summary.append(f"over all pairs at equal N the method is up to {best[0]:.3g}x faster"
                               f"{on(report, 'fmm-scaling', m)} "
                               f"({best[2]}, N = {best[3]})")
        big = {}
        for r in fmm:
            if int(r["n"]) >= int(big.get(r["distribution"], {"n": "0"})["n"]):
                big[r["distribution"]] = r
        text.append("At the largest N: " + "; ".join(
            f"{d} N = {r['n']}, {per_s(int(r['n']), num(r, 'median_ms')):.3g} particles/s" for d, r in sorted(big.items()))
                    + ".")
        fig = f"fmm-scaling-{m}.png"
        scaling_figure(fig_fmm, fig_ap, os.path.join(report.figdir, fig), f"full method against N, {machine(fmm)}")
        text.append(f"![fmm against N](figures/{fig})")
        parts.append("\n\n".join(text))
    if not parts:
        out.missing.append(("results/fmm-scaling/", "the method against N beside all pairs", "scaling"))
    return parts


# --- error against the order -------------------------------------------------------------------
def accuracy_figure(curves, path, title):
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for (dim, dist, prec), pts in sorted(curves.items()):
        pts = sorted(pts)
        double = prec == "double"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if dim == "3" else "^",
                markersize=5 if double else 9, fillstyle="full" if double else "none",
                linestyle="-" if double else "--", color=DIST_STYLE.get(dist, "black"), label=f"{dist} {dim}D {prec}")
    ax.set_yscale("log")
    ax.set_xlabel("order p")
    ax.set_ylabel("relative L2 error of the accelerations")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def accuracy_part(report, out):
    parts = []
    sources = [("fmm-accuracy", "")]
    if not any(r.get("rel_l2") for r in report.rows("fmm-accuracy")):
        out.missing.append(("results/fmm-accuracy/", "the error against the order, 2D and 3D, float and double",
                        "accuracy"))
        sources = [("fmm", "_The order sweep of results/fmm-accuracy/ is not measured yet; these are the validate "
                           "rows kept beside the stage timings in results/fmm/._\n\n")]
    for name, note in sources:
        for m, all_rows in report.tables(name):
            rows = list(latest([r for r in all_rows if full_method(report, r) and r.get("rel_l2")],
                               lambda r: (r["kernel"], r["dim"], r["distribution"], r["precision"], r["n"], r["level"],
                                          order_of(r), r.get("near_kernel", ""))).values())
            if not rows:
                continue
            orders = sorted({order_of(r) for r in rows if order_of(r) is not None})
            groups = defaultdict(dict)
            for r in rows:
                groups[(r["kernel"], r["dim"], r["distribution"], r["precision"], r["n"], r["level"])][order_of(r)] = r
            flags = Flags(report, rows, lambda r: f"{r['distribution']} {r['dim']}D {r['precision']} p = {order_of(r)}")
            body, curves = [], defaultdict(list)
            for (kernel, dim, dist, prec, n, level), by_p in sorted(groups.items()):
                body.append([kernel, f"{dim}D", dist, n, level, prec] +
                            [f"{num(by_p[p], 'rel_l2'):.1e}{flags.mark(by_p[p])}" if p in by_p else "-" for p in orders])
                for p, r in by_p.items():
                    curves[(dim, dist, prec)].append((p, num(r, "rel_l2")))
            fails = [r for r in rows if r.get("status") not in ("PASS", "")]
            text = [note + f"**{m}**: relative L2 error of the accelerations against {distinct(rows, 'reference')}, "
                    "per input and precision (columns: the order p).\n\n" + context_label(report, rows) + "\n\n" +
                    table(["method", "dim", "input", "N", "level", "precision"] + [f"p = {p}" for p in orders], body)
                    + flags.text()]
            tails = [r for r in rows if r.get("p99_rel")]
            if tails:
                top = max(order_of(r) for r in tails)
                at_top = [num(r, "p99_rel") for r in tails if order_of(r) == top]
                worst = max(tails, key=lambda r: num(r, "max_rel"))
                text.append(f"The per-particle tails: at the highest order, p = {top}, the 99th percentile of the "
                            f"relative error is {min(at_top):.1e} to {max(at_top):.1e} over the inputs; the largest "
                            f"single particle's relative error in any row is {num(worst, 'max_rel'):.1e} "
                            f"({worst['distribution']} {worst['dim']}D {worst['precision']} p = {order_of(worst)}).")
            text.append(f"Validate's status: {len(rows) - len(fails)} of {len(rows)} rows PASS" +
                        (" (failing: " + join(f"{r['distribution']} {r['dim']}D {r['precision']} p = {order_of(r)}"
                                              for r in fails) + ")." if fails else "."))
            floors = []
            for (dim, dist, prec), pts in sorted(curves.items()):
                if prec == "double" and dim == "3" and dist == "plummer":
                    e, p = min((e, p) for p, e in pts)
                    floors.append(f"**The lowest error in double on 3D Plummer** is {e:.1e}, at p = {p}")
                    out.summary.append(f"the lowest error in double on 3D Plummer is {e:.1e} (relative L2, p = {p}"
                                       f"{on(report, name, m)})")
                    deeper = [e2 for p2, e2 in sorted(pts) if p2 > p]
                    if deeper:
                        floors[-1] += (f"; higher orders do not go below it (up to {max(deeper):.1e} at "
                                       f"p = {max(p2 for p2, _ in pts)})")
            apart = []
            for (dim, dist, prec), pts in sorted(curves.items()):
                dbl = dict(curves.get((dim, dist, "double"), []))
                if prec == "float" and dbl:
                    off = [p for p, e in sorted(pts) if p in dbl and e > 2 * dbl[p]]
                    apart.append(f"{dist} {dim}D " + (f"from p = {off[0]} on" if off else "at no measured order"))
            if apart:
                text.append("Float departs from double (an error more than twice double's): " + "; ".join(apart) + ".")
            if floors:
                text.append(". ".join(floors) + ".")
            elif any(prec == "double" for _, _, prec in curves):
                text.append("No double-precision 3D Plummer rows in this file.")
            fig = f"fmm-accuracy-{m}.png"
            accuracy_figure(curves, os.path.join(report.figdir, fig),
                            f"{distinct(rows, 'kernel')}: error against the order, {machine(rows)}")
            text.append(f"![fmm error against the order](figures/{fig})\n\n_Solid, filled: double; dashed, hollow: "
                        "float; circles 3D, triangles 2D._")
            parts.append("\n\n".join(text))
    return parts
