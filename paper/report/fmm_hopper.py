"""Section: the near field inside a full fast multipole method on the GPU (docs/design.md §16, README
"The far field"). Where the near and the far field balance against the leaf level and where `--level
auto` lands (results/fmm-levels), the time and rate of every stage (results/fmm) and of every kernel
(results/fmm-profile), what a faster
near-field kernel buys the whole method (results/fmm-near), the method against N beside all pairs
(results/fmm-scaling), and its error against the order (results/fmm-accuracy). A part whose results
are missing says so and how to measure them; the rest of the section is written regardless."""
import math
import os
from collections import defaultdict

from .common import Flags, context_label, distinct, fmt_ms, join, latest, machine, num, table
from .figures import plt
from .fmm_common import AUTO_TARGET, FIGURE_ORDER, NEAR_FACTORS, FMA_PER_SM_CLOCK, STAGES, HOW, on, bench_rows, order_of, is_auto, share, per_s, fmt_rate, pct, sm_count, fp32_peak, memory_bandwidth, case_name, spread, coverage_text
from .fmm_growth import scaling_part, accuracy_part
from .fmm_adaptive import adaptive_part, depth_error_part, leaf_part
from .fmm_orders import orders_part
from .fmm_profile import profile_part
from .fmm_thread import tensor_part, thread_part
from .fmm_targets import targets_part



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


def ratio(a, b):
    """a / b, nan where either is unknown or b is not positive."""
    return a / b if b > 0 and not math.isnan(a) else math.nan


def bounds(r, best_near):
    """Each stage's time over its bound (nan where unknown): the near field against its kernel's best
    pair rate in these rows; M2L against the FP32 peak; the passes against the larger of their
    multiply-adds at that peak and their particle traffic at the nominal memory bandwidth."""
    peak, bw = fp32_peak(r), memory_bandwidth(r)
    size = 8 if r.get("precision") == "double" else 4
    near = best_near.get((r.get("near_kernel", ""), r["dim"], r["precision"]), math.nan)
    near_bound = ratio(num(r, "near_pairs"), near) * 1e3
    m2l_bound = ratio(num(r, "m2l_madds"), peak) * 1e3
    # P2M and L2P read each particle's 4 values; L2P reads and writes its 4 accumulators.
    traffic = ratio(16 * size * num(r, "n"), bw) * 1e3
    compute = ratio(num(r, "upward_madds") + num(r, "downward_madds"), peak) * 1e3
    passes_bound = math.nan if math.isnan(traffic) or math.isnan(compute) else max(compute, traffic)
    return (ratio(num(r, "near_ms"), near_bound), ratio(num(r, "m2l_ms"), m2l_bound),
            ratio(num(r, "upward_ms") + num(r, "downward_ms"), passes_bound))


def bounds_text(rows):
    """The bound table, for rows of a known device (fp32_peak and memory_bandwidth not nan)."""
    best_near = {}
    for r in rows:
        key = (r.get("near_kernel", ""), r["dim"], r["precision"])
        rate = rates(r)[0]
        if not math.isnan(rate):
            best_near[key] = max(best_near.get(key, 0.0), rate)
    body, within = [], [0, 0, 0]
    for r in rows:
        x = bounds(r, best_near)
        for i, v in enumerate(x):
            within[i] += v <= 2
        order = str(order_of(r)) + (" (auto)" if r.get("order") == "auto" else "")
        body.append([short_case(rows, case_name(r), r["kernel"], r.get("near_kernel", "")),
                     r["level"] + (" (auto)" if is_auto(r) else ""), order] +
                    ["-" if math.isnan(v) else f"{v:.1f}x" for v in x])
    r0 = rows[0]
    return ("**Each stage against its bound** (the issue's target: within 2x). The near field against the best "
            "pair rate its kernel reached in these rows (the same kernel, dimension and precision: "
            + ", ".join(f"{k[0]} {k[1]}D {k[2]} {v:.3g} pairs/s" for k, v in sorted(best_near.items())) +
            "; a measured rate, not a hardware limit: the best row is 1.0x by construction); M2L against the FP32 "
            "peak above; the passes (upward + downward) against the larger of their multiply-adds at that peak and "
            "their particle traffic (P2M and L2P read each particle, L2P reads and writes its accumulators: 16 "
            f"values a particle) at the nominal memory bandwidth, {memory_bandwidth(r0) / 1e12:.2f} TB/s from the "
            f"rows' memory clock of {distinct(rows, 'mem_clock_mhz')} MHz and the bus of the device name "
            f"({r0['device']}). The passes' bound leaves out the expansions' own traffic, so it is a lower bound. "
            "Time over bound (-: a count missing from the row):\n\n" +
            table(["input", "level", "order p", "near field", "M2L", "passes"], body) +
            f"\n\nWithin 2x of its bound: the near field in {within[0]} of {len(rows)} rows, M2L in {within[1]}, the "
            f"passes in {within[2]}.")


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
        known = [r for r in rows if not math.isnan(fp32_peak(r)) and not math.isnan(memory_bandwidth(r))]
        if m2l_pts and known:
            text.append(bounds_text(known))
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
    for title, fn in (("The speed targets", targets_part),
                      ("The leaf level: near against far, and the automatic level", levels_part),
                      ("Stages and their rates", stages_part),
                      ("Kernel by kernel", profile_part),
                      ("M2L's orders per offset", orders_part),
                      ("M2L at low orders: a thread per target", thread_part),
                      ("M2L on tensor cores", tensor_part),
                      ("The near-field kernel inside the method", near_part),
                      ("Against N, beside all pairs", scaling_part),
                      ("Error against the order", accuracy_part),
                      ("The adaptive tree", adaptive_part),
                      ("The adaptive tree's leaf size", leaf_part),
                      ("The adaptive tree's error against the depth", depth_error_part)):
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
