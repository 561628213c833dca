"""Section: the near field inside a full fast multipole method on the GPU (docs/design.md §16, README
"The far field"). Where the near and the far field balance against the leaf level and where `--level
auto` lands (results/fmm-levels), the time and rate of every stage (results/fmm), what a faster
near-field kernel buys the whole method (results/fmm-near), the method against N beside all pairs
(results/fmm-scaling), and its error against the order (results/fmm-accuracy). A part whose results
are missing says so and how to measure them; the rest of the section is written regardless."""
import math
import os
from collections import defaultdict

from .common import Flags, context_label, distinct, fmt_ms, join, latest, machine, num, table
from .figures import plt
from .kernels import GROUND_TRUTH

from .fmm_common import (AUTO_TARGET, FIGURE_ORDER, NEAR_FACTORS, FMA_PER_SM_CLOCK, SM_COUNT_BY_NAME, STAGES, DIST_STYLE, HOW, full_method, on, bench_rows, order_of, is_auto, stage_sum, share, per_s, fmt_rate, pct, sm_count, fp32_peak, case_name, spread, coverage_text)  # noqa: F401


def level_sweep(report, rows):
    """{(case, near kernel): {p: {"levels": {level: row}, "auto": row or None}}} from bench rows."""
    by = latest(rows, lambda r: (r["kernel"], case_name(r), r.get("near_kernel", ""), order_of(r), int(r["level"]),
                                 is_auto(r)))
    out = defaultdict(lambda: defaultdict(lambda: {"levels": {}, "auto": None}))
    for r in by.values():
        p = order_of(r)
        if p is None:
            continue
        cell = out[(r["kernel"], case_name(r), r.get("near_kernel", ""))][p]
        if is_auto(r):
            cell["auto"] = r
        else:
            cell["levels"][int(r["level"])] = r
    return out


def best_level(cell):
    return min(cell["levels"].items(), key=lambda x: (num(x[1], "median_ms"), x[0]), default=(None, None))


def what_if_faster_near(cell, factor):
    """(best total, its level) with the near field `factor` times faster and the far field unchanged,
    the level chosen again over the measured ones."""
    pts = [(num(r, "median_ms") - num(r, "near_ms") * (1 - 1 / factor), lv) for lv, r in cell["levels"].items()]
    return min(pts, default=(math.nan, None))


def level_figure(sweeps, path, title):
    """One panel per input: per level, the stages' shares of the evaluation stacked, the time on top."""
    fig, axes = plt.subplots(1, len(sweeps), figsize=(4.2 * len(sweeps), 4.0), squeeze=False)
    for ax, (label, p, cell) in zip(axes[0], sweeps):
        levels = sorted(cell["levels"])
        bottom = [0.0] * len(levels)
        for col, name, color in STAGES:
            h = [num(cell["levels"][lv], col) / num(cell["levels"][lv], "median_ms") for lv in levels]
            ax.bar(levels, h, bottom=bottom, color=color, label=name, width=0.7)
            bottom = [b + x for b, x in zip(bottom, h)]
        best = best_level(cell)[0]
        for lv, b in zip(levels, bottom):
            r = cell["levels"][lv]
            ax.text(lv, b + 0.02, f"{fmt_ms(num(r, 'median_ms'))} ms" + ("\nbest" if lv == best else ""),
                    ha="center", va="bottom", fontsize=7, fontweight="bold" if lv == best else "normal")
        auto = cell["auto"]
        ax.set_title(f"{label}, p = {p}" + (f" (auto: level {auto['level']})" if auto else ""), fontsize=9)
        ax.set_xticks(levels)
        ax.set_xlabel("leaf level K")
        ax.set_ylim(0, 1.3)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    axes[0][0].set_ylabel("share of the evaluation time")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=len(STAGES))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def short_case(rows, case, kernel, near, with_near=True):
    """The row label of a (method, input, near kernel) in a table whose other rows may share parts of it."""
    parts = [case.split(",")[0] if len({case_name(r).split(",", 1)[1] for r in rows}) == 1 else case]
    if len({r["kernel"] for r in rows}) > 1:
        parts.insert(0, kernel)
    if with_near and len({r.get("near_kernel", "") for r in rows}) > 1:
        parts.append(f"near {near or '-'}")
    return ", ".join(parts)


def common_text(rows):
    """What every row of a table shares (method, near kernel, N, precision), for its heading."""
    return (f"`{distinct(rows, 'kernel')}` with near kernel {distinct(rows, 'near_kernel') or '-'}, N = "
            f"{distinct(rows, 'n')}, {distinct(rows, 'precision')}")


def levels_part(report, out):
    parts = []
    for m, all_rows in report.tables("fmm-levels"):
        rows = bench_rows(report, all_rows)
        if not rows:
            continue
        sweeps = level_sweep(report, rows)
        flags = Flags(report, rows, lambda r: f"{r['distribution']} p = {order_of(r)} level {r['level']}"
                                              + (" (auto)" if is_auto(r) else ""))
        levels = sorted({int(r["level"]) for r in rows if not is_auto(r)})
        body, hits, misses, figure, what = [], [], [], [], []
        for (kernel, case, near), cells in sorted(sweeps.items()):
            label = short_case(rows, case, kernel, near)
            for p, cell in sorted(cells.items()):
                lv_best, best = best_level(cell)
                auto = cell["auto"]
                ratio = num(auto, "median_ms") / num(best, "median_ms") if auto and best else math.nan
                if not math.isnan(ratio):
                    (hits if ratio <= AUTO_TARGET else misses).append((label, p, ratio, int(auto["level"]), lv_best))
                body.append([label, p] +
                            [fmt_ms(num(cell["levels"][lv], "median_ms")) + flags.mark(cell["levels"][lv])
                             if lv in cell["levels"] else "-" for lv in levels] +
                            [lv_best if best else "-",
                             f"{auto['level']} ({fmt_ms(num(auto, 'median_ms'))}){flags.mark(auto)}" if auto else "-",
                             f"{ratio:.2f}" + (" **(miss)**" if ratio > AUTO_TARGET else "")
                             if not math.isnan(ratio) else "-",
                             pct(share(best)) if best else "-",
                             fmt_ms(num(best, "lists_ms")) if best else "-"])
                if best is not None:
                    # What a faster near field would buy: the far-field stages as measured, the level chosen again.
                    t0 = num(best, "median_ms")
                    cols = []
                    for f in NEAR_FACTORS:
                        t, lv = what_if_faster_near(cell, f)
                        cols.append(f"{t0 / t:.2f}x" + (f" (level {lv})" if lv != lv_best else ""))
                    cols.append(f"{1 / (1 - share(best)):.2f}x")
                    what.append([label, p, lv_best, fmt_ms(t0), pct(share(best))] + cols)
            orders = sorted(cells)
            p_fig = FIGURE_ORDER if FIGURE_ORDER in cells else orders[len(orders) // 2]
            if cells[p_fig]["levels"]:
                figure.append((label, p_fig, cells[p_fig]))
        text = [f"**{m}**: {common_text(rows)}. `--level L` at each measured level, and `--level auto` (the level "
                f"the full-method rule of `methods/full_level_rule.h` chose, measured as a row of its own), per input "
                f"and order p; evaluation time in ms (median of {distinct(rows, 'reps')} timed runs; the largest "
                f"max-min spread of any row is {pct(spread(rows))} of its median). *auto / best*: the automatic "
                f"level's time over the best measured level's (target: at most {AUTO_TARGET:.2f}). *Near share*: "
                "near_ms / median_ms at the best level; *lists*: the interaction lists' build (ms) at the best "
                "level, apart from the evaluation.\n\n" + context_label(report, rows) + "\n\n" +
                table(["input", "p"] + [f"level {lv}" for lv in levels] +
                      ["best level", "auto level (ms)", "auto / best", "near share at best", "lists"], body) +
                flags.text()]
        n_auto = len(hits) + len(misses)
        if n_auto:
            verdict = (f"**The automatic level** is within {100 * (AUTO_TARGET - 1):.0f}% of the best measured level's "
                       f"time (the target) for {len(hits)} of {n_auto} inputs and orders")
            same = sum(1 for h in hits + misses if h[3] == h[4])
            verdict += f"; it is the best level itself in {same} of them"
            if misses:
                verdict += ("; it misses at " + join(f"{c} p = {p} (level {a} against {b}, {x:.2f}x)"
                                                     for c, p, x, a, b in misses))
            worst = max(hits + misses, key=lambda h: h[2])
            text.append(verdict + f". The largest ratio is {worst[2]:.2f} ({worst[0]}, p = {worst[1]}).")
            shares = [share(best_level(c)[1]) for cells in sweeps.values() for c in cells.values() if c["levels"]]
            out.summary.append(
                f"`--level auto` lands within {100 * (AUTO_TARGET - 1):.0f}% of the best measured level in {len(hits)} "
                f"of {n_auto} (input, order) pairs{on(report, 'fmm-levels', m)}" +
                (" (misses: " + join(f"{c} p = {p}, {x:.2f}x" for c, p, x, _, _ in misses) + ")" if misses else "") +
                f"; at the best level the near field takes {pct(min(shares))} to {pct(max(shares))} of the evaluation")
        coverage = coverage_text(rows)
        if coverage:
            text.append(coverage)
        if what:
            text.append("**What a faster near field would buy, from these rows**: the whole evaluation's speed-up over "
                        "its best level if the near field were k times faster and the far-field stages stayed as "
                        "measured, the level chosen again among the measured ones (the new level where it moves); "
                        "*no cost*: a near field of zero time at the best level, the bound at that level.\n\n" +
                        table(["input", "p", "best level", "ms", "near share"] +
                              [f"near {f}x faster" for f in NEAR_FACTORS] + ["near of no cost"], what))
        if figure:
            fig = f"fmm-levels-{m}.png"
            level_figure(figure, os.path.join(report.figdir, fig),
                         f"{distinct(rows, 'kernel')} on {machine(rows)}: stage shares against the leaf level, "
                         f"N = {distinct(rows, 'n')}")
            text.append(f"![fmm stage shares against the level](figures/{fig})\n\n_Per level, each stage's share of "
                        "the evaluation time, stacked; the evaluation time in ms above each bar. The interaction lists "
                        "are not in the evaluation and not drawn._")
        parts.append("\n\n".join(text))
    if not parts:
        out.missing.append(("results/fmm-levels/", "the level sweep with the automatic level", "levels"))
    return parts


# --- the stages and their rates ------------------------------------------------------------------
def rates(r):
    """(near pairs/s, M2L multiply-adds/s, passes multiply-adds/s); nan where the counts are not recorded."""
    near = per_s(num(r, "near_pairs"), num(r, "near_ms"))
    m2l = per_s(num(r, "m2l_madds"), num(r, "m2l_ms"))
    passes = per_s(num(r, "upward_madds") + num(r, "downward_madds"), num(r, "upward_ms") + num(r, "downward_ms"))
    return near, m2l, passes


def stages_part(report, out):
    parts = []
    for m, all_rows in report.tables("fmm"):
        rows = list(latest(bench_rows(report, all_rows),
                           lambda r: (r["kernel"], case_name(r), r.get("near_kernel", ""), r["level"], is_auto(r),
                                      r.get("order", ""), r.get("accuracy", ""))).values())
        if not rows:
            continue
        rows.sort(key=lambda r: (r["distribution"] != "uniform", case_name(r), is_auto(r), int(r["level"]),
                                 order_of(r) or 0, r.get("accuracy", "")))
        flags = Flags(report, rows, lambda r: f"{case_name(r)} level {r['level']} p = {order_of(r)}")
        body, m2l_pts = [], []
        for r in rows:
            near, m2l, passes = rates(r)
            peak = fp32_peak(r)
            if not math.isnan(m2l):
                m2l_pts.append((m2l / peak if not math.isnan(peak) else math.nan, m2l, r))
            order = str(order_of(r)) + (f" (auto, accuracy {r['accuracy']})" if r.get("order") == "auto" else "")
            body.append([short_case(rows, case_name(r), r["kernel"], r.get("near_kernel", "")),
                         r["level"] + (" (auto)" if is_auto(r) else ""), order,
                         fmt_ms(num(r, "median_ms")) + flags.mark(r),
                         f"{fmt_ms(num(r, 'near_ms'))} ({pct(share(r))})", fmt_ms(num(r, "m2l_ms")),
                         fmt_ms(num(r, "upward_ms")), fmt_ms(num(r, "downward_ms")), fmt_ms(num(r, "lists_ms")),
                         fmt_rate(near), fmt_rate(m2l / 1e12 if not math.isnan(m2l) else m2l),
                         pct(m2l / peak) if not math.isnan(m2l) and not math.isnan(peak) else "-",
                         fmt_rate(passes / 1e12 if not math.isnan(passes) else passes)])
        text = [f"**{m}**: {common_text(rows)}. Stage times in ms (median of {distinct(rows, 'reps')} timed runs) "
                "and each stage's rate, "
                "its operation count over its time: the near field in directed pair interactions per second "
                "(near_pairs / near_ms), M2L and the passes (upward P2M + M2M, downward L2L + L2P) in multiply-adds "
                "per second (m2l_madds / m2l_ms; (upward_madds + downward_madds) / (upward_ms + downward_ms)), "
                "as `farfield/op_counts.h` counts them.\n\n" + context_label(report, rows) + "\n\n" +
                table(["input", "level", "order p", "evaluation", "near (share)", "M2L", "upward", "downward",
                       "lists (apart)", "near pairs/s", "M2L TMAC/s", "M2L / FP32 peak", "passes TMAC/s"], body) +
                flags.text()]
        if m2l_pts:
            gpu_pts = [x for x in m2l_pts if not math.isnan(x[0])]
            if gpu_pts:
                r0 = gpu_pts[0][2]
                sms, assumed = sm_count(r0)
                lanes = FMA_PER_SM_CLOCK[r0["compute_capability"]]
                peak = fp32_peak(r0)
                lo, hi = min(gpu_pts, key=lambda x: x[0]), max(gpu_pts, key=lambda x: x[0])
                text.append(
                    f"**M2L against the FP32 peak.** The peak is {sms} SMs x {lanes} FP32 multiply-adds per SM and "
                    f"clock x the rows' SM clock of {distinct(rows, 'sm_clock_mhz')} MHz = {peak / 1e12:.1f} TMAC/s "
                    f"({2 * peak / 1e12:.1f} TFLOP/s)" +
                    (f"; the SM count is not in the CSV: {sms} is assumed from the device name "
                     f"({r0['device']})" if assumed else "") +
                    f". M2L reaches {lo[1] / 1e12:.2f} to {hi[1] / 1e12:.2f} TMAC/s, {pct(lo[0])} to {pct(hi[0])} of "
                    f"that peak (lowest at {lo[2]['distribution']} level {lo[2]['level']} p = {order_of(lo[2])}, highest at "
                    f"{hi[2]['distribution']} level {hi[2]['level']} p = {order_of(hi[2])}): it is "
                    f"{1 / hi[0]:.1f}x to {1 / lo[0]:.0f}x from the peak. Its count leaves out the derivative "
                    "tensors the GPU tabulates per level and offset and the padding of the operator tables "
                    "(docs/design.md §16), so the rate is that of useful multiply-adds.")
                out.summary.append(f"M2L runs at {hi[1] / 1e12:.2f} TMAC/s at best{on(report, 'fmm', m)} "
                                   f"({hi[2]['distribution']} level "
                                   f"{hi[2]['level']}, p = {order_of(hi[2])}), {pct(hi[0])} of the FP32 peak")
        if not m2l_pts:
            text.append("These rows carry no operation counts (written before the columns `upward_madds`, "
                        "`m2l_madds`, `downward_madds` and `near_pairs` existed): no rates, and M2L is not set against "
                        "the peak.")
        dominant = []
        for r in rows:
            stage = max(STAGES, key=lambda s: num(r, s[0]))
            dominant.append(stage[1])
        counts = {s: dominant.count(s) for s in sorted(set(dominant))}
        text.append("The largest stage per row: " + ", ".join(f"{s} in {n} of {len(rows)}" for s, n in counts.items())
                    + ".")
        coverage = coverage_text(rows)
        if coverage:
            text.append(coverage)
        parts.append("\n\n".join(text))
    if not parts:
        out.missing.append(("results/fmm/", "the stage times and rates", "stages"))
    return parts


# --- the near-field kernel inside the method ---------------------------------------------------
def near_part(report, out):
    parts = []
    for m, all_rows in report.tables("fmm-near"):
        rows = list(latest(bench_rows(report, all_rows),
                           lambda r: (r["kernel"], case_name(r), r["level"], order_of(r), r.get("near_kernel", ""))
                           ).values())
        if not rows:
            continue
        flags = Flags(report, rows, lambda r: f"{case_name(r)}, near {r.get('near_kernel')}")
        groups = defaultdict(list)
        for r in rows:
            groups[(r["kernel"], case_name(r), int(r["level"]), order_of(r))].append(r)
        body, answers = [], []
        for (kernel, case, level, p), rs in sorted(groups.items(), key=lambda x: (x[0][1].split()[0] != "uniform",
                                                                                    x[0])):
            rs.sort(key=lambda r: num(r, "median_ms"))
            fast = rs[0]
            label = short_case(rows, case, kernel, "", with_near=False)
            for r in rs:
                body.append([label, level, p, r.get("near_kernel") or "-", fmt_ms(num(r, "median_ms")) + flags.mark(r),
                             fmt_ms(num(r, "near_ms")), pct(share(r)), fmt_ms(num(r, "median_ms") - num(r, "near_ms")),
                             f"{num(r, 'median_ms') / num(fast, 'median_ms'):.2f}",
                             f"{num(r, 'near_ms') / num(fast, 'near_ms'):.2f}"])
            s = share(fast)
            line = f"*{label}, level {level}, p = {p}*: "
            if len(rs) > 1:
                slow = rs[-1]
                near_x = num(slow, "near_ms") / num(fast, "near_ms")
                total_x = num(slow, "median_ms") / num(fast, "median_ms")
                line += (f"{fast['near_kernel']} instead of {slow['near_kernel']} makes the near field {near_x:.2f}x "
                         f"faster and the whole evaluation {total_x:.2f}x faster. ")
            line += (f"With {fast.get('near_kernel') or 'its near kernel'} the near field is {pct(s)} of the "
                     f"evaluation: a near field twice as fast again would make the method "
                     f"{1 / (1 - s / 2):.2f}x faster, and one of no cost at all at most {1 / (1 - s):.2f}x.")
            answers.append(line)
            if len(rs) > 1:
                out.summary.append(f"the choice of near kernel changes the whole evaluation by up to {total_x:.2f}x on "
                                   f"{label} level {level}, p = {p} (near share {pct(s)} with the fastest, "
                                   f"{fast['near_kernel']}{on(report, 'fmm-near', m)})")
        text = [f"**{m}**: `{distinct(rows, 'kernel')} --near KERNEL`, N = {distinct(rows, 'n')}, "
                f"{distinct(rows, 'precision')}: the near field by each near-field kernel, the far field the same; "
                f"ms (median of {distinct(rows, 'reps')} timed runs). *Far*: evaluation - near. The last two "
                "columns set each row against the fastest near kernel of its input.\n\n" +
                context_label(report, rows) + "\n\n" +
                table(["input", "level", "p", "near kernel", "evaluation", "near", "near share", "far",
                       "evaluation / fastest", "near / fastest"], body) + flags.text(),
                "**How much does a faster near-field kernel buy the whole method?** " + " ".join(answers) +
                " These bounds hold the level fixed; a faster near field also moves the best level shallower, which "
                "the level sweep's table of a faster near field takes into account where it was measured."]
        parts.append("\n\n".join(text))
    if not parts:
        out.missing.append(("results/fmm-near/", "the near-field kernels inside fmm", "near"))
    return parts


# --- against N ---------------------------------------------------------------------------------
def scaling_figure(fmm, ap, path, title):
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for (kernel, dist), pts in sorted(fmm.items()):
        pts = sorted(pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=DIST_STYLE.get(dist, "black"),
                label=f"{kernel} (level auto), {dist}")
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


# --- the section -------------------------------------------------------------------------------
class Collected:
    """What the parts hand to the section: the results files they missed and their one-line findings."""

    def __init__(self):
        self.missing, self.summary = [], []


def fmm_hopper(report):
    out = Collected()
    gpu_full = sorted(report.kernels.where("gpu", "far-field"))
    intro = ((join(f"`{k}`" for k in gpu_full) or "The GPU full method") +
             " computes the full softened force on the GPU: a GPU near-field kernel (`--near`) on the leaf "
             "boxes, and a fast multipole method on the same Z-order tree for every other pair (P2M and M2M up, M2L "
             "from each box's interaction list, L2L and L2P down; Cartesian expansions of order p; docs/design.md "
             "§16). The paper's question of the near field becomes: how large is it inside the whole method, and how "
             "much does a faster near-field kernel buy? Tables are per results file (one machine each).")
    parts = [intro]
    for title, fn in (("The leaf level: near against far, and the automatic level", levels_part),
                      ("Stages and their rates", stages_part),
                      ("The near-field kernel inside the method", near_part),
                      ("Against N, beside all pairs", scaling_part),
                      ("Error against the order", accuracy_part)):
        got = fn(report, out)
        if got:
            parts.append(f"### {title}\n\n" + "\n\n".join(got))
    if out.summary:
        parts.insert(1, "**In short:**\n\n" + "\n".join(f"- {x[0].upper() + x[1:]}." for x in out.summary))
    if out.missing:
        parts.append("**Not measured yet:** " + join(f"{path} ({what})" for path, what, _ in out.missing) + ". To "
                     "produce them: " + HOW.format(", ".join(s for _, _, s in out.missing)) + ", then copy its results "
                     "into "
                     "results/.")
    return "\n\n".join(parts)
