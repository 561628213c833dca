"""Part of the fmm report section (fmm_hopper.py): the adaptive tree (fmm-adaptive; docs/design.md §16
"Adaptive tree") against the uniform tree's best level on the same inputs (results/fmm-adaptive,
results/fmm-adaptive-accuracy, results/fmm)."""
import math
import os
import re

from .common import Flags, context_label, distinct, fmt_ms, latest, num, table
from .fmm_common import bench_rows, on, order_of, share, pct, case_name


def adaptive_part(report, out):
    parts = []
    uniform = {}  # (device, case, p) -> the uniform tree's fastest fmm row on that device
    for m, all_rows in report.tables("fmm"):
        for r in bench_rows(report, all_rows):
            if r["kernel"] != "fmm":
                continue
            key = (m, case_name(r), order_of(r))
            if key not in uniform or num(r, "median_ms") < num(uniform[key], "median_ms"):
                uniform[key] = r
    errors = {}  # (case, leaf size, p) -> rel_l2 on the sample
    for _, all_rows in report.tables("fmm-adaptive-accuracy"):
        for r in all_rows:
            errors[(case_name(r), r.get("leaf_rule", ""), r.get("leaf_size", ""), order_of(r))] = r
    for m, all_rows in report.tables("fmm-adaptive"):
        rows = list(latest(bench_rows(report, all_rows),
                           lambda r: (case_name(r), r.get("leaf_rule", ""), r.get("leaf_size", ""),
                                      order_of(r))).values())
        if not rows:
            continue
        rows.sort(key=lambda r: (r["distribution"] != "plummer", case_name(r), order_of(r) or 0, int(r["leaf_size"])))
        flags = Flags(report, rows, lambda r: f"{case_name(r)} leaf size {r['leaf_size']} p = {order_of(r)}")
        body, best = [], {}
        for r in rows:
            u = uniform.get((m, case_name(r), order_of(r)))
            e = errors.get((case_name(r), r.get("leaf_rule", ""), r.get("leaf_size", ""), order_of(r)))
            size = r["leaf_size"] + (" (auto)" if r.get("leaf_rule", "") == "auto" else "")
            body.append([case_name(r), size, r["level"], str(order_of(r)),
                         fmt_ms(num(r, "median_ms")) + flags.mark(r),
                         f"{fmt_ms(num(r, 'near_ms'))} ({pct(share(r))})", fmt_ms(num(r, "m2l_ms")),
                         fmt_ms(num(r, "upward_ms") + num(r, "downward_ms")), r.get("m2l_translations", "-"),
                         f"{fmt_ms(num(u, 'median_ms'))} (level {u['level']})" if u else "-",
                         f"{num(u, 'median_ms') / num(r, 'median_ms'):.2f}x" if u else "-",
                         f"{num(e, 'rel_l2'):.2e}" if e else "-"])
            k = (case_name(r), order_of(r))
            if k not in best or num(r, "median_ms") < num(best[k], "median_ms"):
                best[k] = r
        text = [f"**{m}**: `fmm-adaptive` (leaves at the level their density asks for, each split while it holds more "
                f"than the leaf size) against `fmm` on a uniform level, same inputs and order. Times in ms, median of "
                f"{distinct(rows, 'reps')} timed runs; level is the deepest (`--level auto`: the shallowest level "
                "where no box holds more than the leaf size); a leaf size marked (auto) is the automatic one (without "
                "`--leaf-size`). The error is the relative L2 of the accelerations on "
                "a sample of 1000 targets summed directly in float64 (`validate --sample`).\n\n" +
                context_label(report, rows) + "\n\n" +
                table(["input", "leaf size", "level", "p", "evaluation", "near (share)", "M2L", "passes",
                       "translations", "uniform fmm, best level", "speedup", "rel L2"], body) + flags.text()]
        for (case, p), r in sorted(best.items()):
            u = uniform.get((m, case, p))
            if u and r["distribution"] == "plummer":
                out.summary.append(
                    f"on {case} at p = {p} the adaptive tree takes {fmt_ms(num(r, 'median_ms'))} ms (leaf size "
                    f"{r['leaf_size']}), {num(u, 'median_ms') / num(r, 'median_ms'):.2f}x faster than the uniform "
                    f"tree's best measured level ({u['level']}: {fmt_ms(num(u, 'median_ms'))} ms){on(report, 'fmm-adaptive', m)}")
        parts.append("\n\n".join(text))
    if not parts:
        out.missing.append(("results/fmm-adaptive/", "the adaptive tree", "adaptive"))
    return parts


# The leaf-size sweeps: (results directory, what it is, its fmm-bench.sh sections).
LEAF_SWEEPS = (("fmm-adaptive-leaf", "the leaf-size sweep", "adaptive-leaf"),
               ("fmm-adaptive-leaf-high", "the sweep at p = 10 to 16 since M2L's levels run at once",
                "adaptive-leaf-high adaptive-leaf-check adaptive-leaf-tensor adaptive-leaf-tensor-wide "
                "adaptive-leaf-tensor-check"))


def leaf_part(report, out):
    """fmm-adaptive against its leaf size (results/fmm-adaptive-leaf and results/fmm-adaptive-leaf-high):
    per input and order, the time at each measured size against the best one, and where the automatic
    size (leaf_rule = auto) lands. Where an input and order has automatic rows of several sizes (the
    rule was refitted between the sweep and its check), only the newest counts."""
    parts = []
    for name, what, sections in LEAF_SWEEPS:
        parts += leaf_sweep(report, out, name, what, sections)
    return parts


def leaf_sweep(report, out, name, what, sections):
    parts = []
    for m, all_rows in report.tables(name):
        rows = list(latest(bench_rows(report, all_rows),
                           lambda r: (case_name(r), r.get("leaf_rule", ""), r.get("leaf_size", ""),
                                      order_of(r))).values())
        newest = latest((r for r in rows if r.get("leaf_rule", "") == "auto"), lambda r: (case_name(r), order_of(r)))
        rows = [r for r in rows if r.get("leaf_rule", "") != "auto" or newest[(case_name(r), order_of(r))] is r]
        if not rows:
            continue
        groups = {}
        for r in rows:
            groups.setdefault((r["dim"], case_name(r), order_of(r) or 0), []).append(r)
        flags = Flags(report, rows, lambda r: f"{case_name(r)} leaf size {r['leaf_size']} p = {order_of(r)}")
        body, ratios = [], []
        for (_, case, p), g in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
            given = sorted((r for r in g if r.get("leaf_rule", "") != "auto"), key=lambda r: int(r["leaf_size"]))
            auto = [r for r in g if r.get("leaf_rule", "") == "auto"]
            if not given:
                continue
            best = min(given, key=lambda r: num(r, "median_ms"))
            cells = [f"{r['leaf_size']}: {fmt_ms(num(r, 'median_ms'))}{flags.mark(r)} "
                     f"({num(r, 'median_ms') / num(best, 'median_ms'):.2f}x)" for r in given]
            a = auto[0] if auto else None
            ratio = num(a, "median_ms") / num(best, "median_ms") if a else None
            if ratio is not None:
                ratios.append((ratio, case, p, a, best))
            body.append([case, str(p), "; ".join(cells), best["leaf_size"],
                         f"{a['leaf_size']} (level {a['level']}): {fmt_ms(num(a, 'median_ms'))}{flags.mark(a)}" if a else "-",
                         f"{ratio:.2f}x" if ratio is not None else "-"])
        text = ("**" + m + "**, " + what + f" (results/{name}): `fmm-adaptive` against its leaf size S (`--leaf-size`; `--level auto` splits "
                "down to it). Times in ms, median of " + str(distinct(rows, "reps")) + " timed runs, each "
                "size's time against the best measured size in brackets. The automatic size (without `--leaf-size`: "
                "S = c sqrt(t_translation / t_pair) from the order and the device, `methods/full_level_rule.h`) "
                "is its own row; its ratio is against the best of the sizes measured beside it.\n\n" +
                context_label(report, rows) + "\n\n" +
                table(["input", "p", "S: time (against best)", "best S", "automatic S: time", "automatic / best"],
                      body) + flags.text())
        parts.append(text)
        if ratios:
            worst = max(ratios, key=lambda x: x[0])
            out.summary.append(
                f"the automatic leaf size of `fmm-adaptive` is within {worst[0]:.2f}x of the best measured size on "
                f"all {len(ratios)} inputs and orders of {what} (worst: {worst[1]} at p = {worst[2]}, "
                f"S = {worst[3]['leaf_size']} against {worst[4]['leaf_size']}){on(report, name, m)}")
    if not parts:
        out.missing.append((f"results/{name}/", f"the leaf size of the adaptive tree ({what})", sections))
    return parts


def depth_error_part(report, out):
    """The 3D error over the error model's table against the input and the tree's depth
    (results/fmm-depth-error; farfield/order.h's kAdaptiveMargin3 is the largest fmm-adaptive ratio
    there, rounded up)."""
    path = os.path.join(os.path.dirname(os.path.abspath(report.paper_dir)), "src", "farfield", "order.h")
    try:
        text = open(path).read()
    except OSError:
        return []
    found = re.search(r"k3\[kMaxOrder\]\s*=\s*\{([^}]*)\}", text)
    margin = re.search(r"kAdaptiveMargin3\s*=\s*([0-9.eE+-]+)\s*;", text)
    default = re.search(r"kDefaultAccuracy\s*=\s*([0-9.eE+-]+)\s*;", text)
    if not found:
        return []
    k3 = [float(v) for v in found.group(1).replace("\n", " ").split(",") if v.strip()]
    parts = []
    for m, all_rows in report.tables("fmm-depth-error"):
        groups = {}
        for r in all_rows:
            if r.get("dim") != "3" or not r.get("p") or not r.get("rel_l2"):
                continue
            key = (r["kernel"], r["distribution"], r["n"], r["precision"], r.get("leaf_size", ""), int(r["level"]))
            groups.setdefault(key, {})[int(r["p"])] = float(r["rel_l2"]) / k3[int(r["p"]) - 1]
        if not groups:
            continue
        orders = sorted({p for g in groups.values() for p in g})
        levels = sorted({key[5] for key in groups})
        body, worst, where = [], {}, {}
        for key, g in sorted(groups.items(), key=lambda kv: (kv[0][0] != "fmm-adaptive", kv[0][1], int(kv[0][2]),
                                                              kv[0][3], kv[0][5])):
            kernel, dist, n, precision, size, level = key
            body.append([kernel, f"{dist} 3D, N = {n}, {precision}", size or "-", str(level)] +
                        [f"{g[p]:.2f}" if p in g else "" for p in orders])
            if kernel == "fmm-adaptive":
                for p, v in g.items():
                    if v > worst.get(p, 0.0):
                        worst[p], where[p] = v, (dist, level)
        if not worst:
            continue
        body.append(["fmm-adaptive", "largest", "", ""] + [f"**{worst[p]:.2f}**" if p in worst else "" for p in orders])
        top = max(worst, key=worst.get)
        parts.append(
            f"**{m}**: the relative L2 error over the error model's table at each order (`farfield/order.h`, measured "
            f"on uniform trees), on a sample of 1000 targets, for trees of {levels[0]} to {levels[-1]} levels (level: the "
            "deepest). Most inputs stay flat with the depth; the largest `fmm-adaptive` ratio over every row, rounded "
            "up, is the one margin the adaptive methods take in 3D without `--order` (`kAdaptiveMargin3`"
            + (f" = {margin.group(1)}" if margin else "") + "; `scripts/fmm-bench.sh depth-error`).\n\n" +
            context_label(report, all_rows) + "\n\n" +
            table(["kernel", "input", "leaf size", "level"] + [f"p = {p}" for p in orders], body))
        if margin and default:
            kept, accuracy = float(margin.group(1)), float(default.group(1))
            p = next((q for q in range(1, len(k3) + 1) if k3[q - 1] * kept <= accuracy), None)
            if p:
                out.summary.append(
                    f"on adaptive trees in 3D the error over the model's table reaches {worst[top]:.2f}x ({where[top][0]} "
                    f"at level {where[top][1]}, p = {top}; levels {levels[0]} to {levels[-1]} measured), so "
                    f"`fmm-adaptive` takes p = {p} at the default {accuracy:.0e} at any depth (the table times "
                    f"{kept:.2f}){on(report, 'fmm-depth-error', m)}")
    return parts
