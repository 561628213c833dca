"""Section: non-uniform (clustered) inputs: time and rate against the tree level per kernel, the
automatic level, and the load-balance targets against ppt."""
import math
import os
import tempfile

from .common import FULL_LEVEL, context_label, distinct, fmt_ms, join, latest, machine, ms, num, ppb_of, rate, table
from .facts import best_newton3, bpb_points, table3_tables, time_of
from .figures import sweep_figure
from .kernels import BPB, PPT


def input_pictures(report, specs, size=360):
    """Renders a sample of each input with `nearfield generate` and `render` (figures/input-*.png)."""
    shown = []
    with tempfile.TemporaryDirectory() as tmp:
        for dist, dim, n in specs:
            f = os.path.join(tmp, f"{dist}{dim}.bin")
            png = f"input-{dist}-{dim}d.png"
            try:
                report.nearfield("generate", "--dist", dist, "--dim", dim, "--n", n, "--seed", 1, "--output", f)
                report.nearfield("render", "--input", f, "--output", os.path.join(report.figdir, png), "--size", size)
            except SystemExit:
                continue
            shown.append(f"![{dist} {dim}D, {n} particles, surface density (xy)](figures/{png})")
    return " ".join(shown)


def uniform_rate(report, kernel, dim, p_eff):
    """The kernel's float32 rate on `uniform-exact` boxes of the measured P nearest (in log scale)
    to p_eff, from every bench experiment: (rate, P), or (None, None)."""
    best = None
    for name in ("table3", "ppb", "newton3-3d"):
        for r in report.rows(name):
            if (r["kernel"] == kernel and r["dim"] == str(dim) and r.get("precision") == "float"
                    and r.get("distribution") == "uniform-exact" and p_eff > 0):
                d = abs(math.log(ppb_of(r) / p_eff))
                if best is None or d < best[0] or (d == best[0] and r.get("timestamp", "") > best[2].get("timestamp", "")):
                    best = (d, ppb_of(r), r)
    return (num(best[2], "interactions_per_s"), best[1]) if best else (None, None)


def nonuniform_tables(report):
    """Per non-uniform experiment and machine: its rows, latest per (kernel, distribution, dim,
    level, level rule)."""
    for name in ("nonuniform", "nonuniform-2d"):
        for m, rows in report.tables(name):
            yield name, m, latest(rows, lambda r: (r["kernel"], r["distribution"], r["dim"], int(r["level"]),
                                                   r.get("level_rule", "")))


def against_ppt(report, by, kernel, dist, dim):
    """The kernel at each level of one input against ppt at the same level (ppt's own auto row,
    else its row at that level), and its rate against its own uniform-exact rate at the nearest
    P: dicts with level, auto, speed (ppt's time / the kernel's, None without a ppt row), rate
    (percent, None without a uniform row) and p."""
    out = []
    for lv, rule in sorted({(k[3], k[4]) for k in by if k[1:3] == (dist, dim)}):
        r = by.get((kernel, dist, dim, lv, rule))
        if r is None:
            continue
        pr = by.get((PPT, dist, dim, lv, rule)) or by.get((PPT, dist, dim, lv, ""))
        u, pu = uniform_rate(report, kernel, dim, num(r, "interactions") / (num(r, "n") * 3 ** int(dim)))
        out.append({"level": lv, "auto": bool(rule), "speed": num(pr, "median_ms") / num(r, "median_ms") if pr else None,
                    "rate": 100 * num(r, "interactions_per_s") / u if u else None, "p": pu})
    return out


def load_balance_verdict(report):
    """The issue's targets for the new one-sided kernels (bpb-lb), from the non-uniform runs and Table III."""
    lines = []
    kernels = sorted(report.kernels.new_one_sided)
    for name, m, by in nonuniform_tables(report):
        inputs = [(d, dim) for d, dim in sorted({(k[1], k[2]) for k in by}) if d != "uniform"]
        for kernel in kernels:
            pts = [(d, dim, c) for d, dim in inputs for c in against_ppt(report, by, kernel, d, dim)]
            speeds = [(c["speed"], d, dim, c["level"]) for d, dim, c in pts if c["speed"]]
            rates = [(c["rate"], d, dim, c["level"]) for d, dim, c in pts if c["rate"]]
            if not speeds:
                continue
            slow = [s for s in speeds if s[0] < 1]
            low = min(speeds)
            lines.append(f"{name} ({join(f'{d} {dim}D' for d, dim in inputs)}): {kernel} at least as fast as {PPT} at "
                         f"{len(speeds) - len(slow)} of {len(speeds)} points (slowest {low[0]:.2f}x {PPT}'s speed, "
                         f"{low[1]} {low[2]}D level {low[3]})" +
                         (f", its rate {min(rates)[0]:.0f}% to {max(rates)[0]:.0f}% of its uniform-exact rate"
                          if rates else ""))
    for m, by in table3_tables(report):
        for kernel in kernels:
            ps = [p for p in bpb_points(by) if (kernel, FULL_LEVEL, p) in by]
            if ps:
                who = f"{kernel} " if len(kernels) > 1 else ""
                worst = max((time_of(by, kernel, p) / time_of(by, BPB, p), p) for p in ps)
                lines.append(f"{who}on `uniform-exact` (level {FULL_LEVEL}, P = {ps[0]} to {ps[-1]}) at most "
                             f"{100 * (worst[0] - 1):.1f}% slower than {BPB} (P = {worst[1]})" if worst[0] > 1 else
                             f"{who}on `uniform-exact` (level {FULL_LEVEL}) at least as fast as {BPB} at every P")
    return lines


def compared_with_ppt(report):
    """The kernels each clustered input sets against ppt: the new one-sided kernels (written for load
    balance) and the fastest new Newton-3 kernel of Table III at its largest P (every new Newton-3
    kernel where Table III has none)."""
    best = []
    for m, by in table3_tables(report):
        big = max(bpb_points(by), default=None)
        k = best_newton3(report, by, big)[0] if big else None
        if k and k not in best:
            best.append(k)
    return sorted(report.kernels.new_one_sided) + (best or sorted(report.kernels.new_newton3))


def nonuniform(report):
    """Clustered inputs: time and rate against level per kernel, the automatic level, the targets."""
    parts = []
    names = [n for n in ("nonuniform", "nonuniform-2d") if report.rows(n)]
    if not names:
        return "(no non-uniform results yet: run `nearfield reproduce`)"
    specs = sorted({(r["distribution"], r["dim"]) for n in names for r in report.rows(n)})
    parts.append("The inputs (samples of 100000 particles drawn by `nearfield generate` and `nearfield render`, "
                 "log surface density):\n\n" + input_pictures(report, [(d, dim, 100000) for d, dim in specs]))
    for name in names:
        for m, rows in report.tables(name):
            key = lambda r: (r["kernel"], r["distribution"], r["dim"], int(r["level"]), r.get("level_rule", ""))
            by = latest(rows, key)
            rows = list(by.values())
            kernels = sorted({r["kernel"] for r in rows})
            dists = sorted({(r["distribution"], r["dim"]) for r in rows}, key=lambda x: (x[0] == "uniform", x))
            text = [f"**{m}**, N = {distinct(rows, 'n')}, float32: ms as median [min-max], and interactions/s "
                    f"(directed, Newton-3 pairs twice). Rows marked *auto* are the level `--level auto` chose.\n\n"
                    + context_label(report, rows)]
            fig = f"{name}-{m}.png"
            fig_rows = [r for r in rows if not r.get("level_rule")]
            groups = [lambda r, d=d: (r["distribution"], r["dim"]) == d for d in dists]
            sweep_figure(fig_rows, "level", groups, os.path.join(report.figdir, fig), "tree level K",
                         f"non-uniform inputs, {machine(rows)}", lambda gi: dists[gi][0])
            for d, dim in dists:
                at = [r for r in rows if (r["distribution"], r["dim"]) == (d, dim)]
                levels = sorted({(int(r["level"]), r.get("level_rule", "")) for r in at})
                body = []
                for lv, rule in levels:
                    line = [f"{lv} (auto)" if rule else lv]
                    for k in kernels:
                        r = by.get((k, d, dim, lv, rule))
                        line.append(f"{ms(r)}, {rate(r)}" if r else "-")
                    body.append(line)
                text.append(f"*{d}, {dim}D*\n\n" + table(["level"] + kernels, body))
                notes = []
                for k in kernels:
                    pts = sorted((num(r, "median_ms"), lv) for (lv, rule) in levels for r in [by.get((k, d, dim, lv, rule))] if r)
                    auto = next(((lv, by[(k, d, dim, lv, "auto")]) for lv, rule in levels
                                 if rule and (k, d, dim, lv, "auto") in by), None)
                    if pts and auto:
                        t = num(auto[1], "median_ms")
                        notes.append(f"{k}: fastest at level {pts[0][1]} ({fmt_ms(pts[0][0])} ms); auto chose {auto[0]} "
                                     + ("(the fastest)" if auto[0] == pts[0][1] else
                                        f"({fmt_ms(t)} ms, {t / pts[0][0]:.2f}x the fastest's time)"))
                if notes:
                    text.append("The automatic level against the measured ones: " + "; ".join(notes) + ".")
                honest = []
                for lv, rule in levels:
                    at_lv = {k: by[(k, d, dim, lv, rule)] for k in kernels if (k, d, dim, lv, rule) in by}
                    cpu = {k: num(r, "median_ms") for k, r in at_lv.items() if k.startswith("cpu-")}
                    gpu = {k: num(r, "median_ms") for k, r in at_lv.items() if not k.startswith("cpu-")}
                    if cpu and gpu:
                        c, g = min(cpu, key=cpu.get), min(gpu, key=gpu.get)
                        threads = at_lv[c].get("threads") or "?"
                        honest.append(f"level {lv}{' (auto)' if rule else ''}: {g} {cpu[c] / gpu[g]:.0f}x {c} "
                                      f"({threads} threads)")
                if honest:
                    text.append("The fastest GPU kernel against the fastest CPU kernel on the same machine: " +
                                "; ".join(honest) + ".")
                if d != "uniform":
                    for k in compared_with_ppt(report):
                        cmp = [f"level {c['level']}{' (auto)' if c['auto'] else ''}: "
                               + (f"{c['speed']:.2f}x ppt's speed" if c["speed"] else "no ppt row")
                               + (f", {c['rate']:.0f}% of its uniform-exact rate at P = {c['p']}" if c["rate"] else "")
                               for c in against_ppt(report, by, k, d, dim)]
                        if cmp:
                            text.append(f"`{k}` on {d} {dim}D: " + "; ".join(cmp) + ".")
            text.append(f"![non-uniform inputs](figures/{fig})")
            parts.append("\n\n".join(text))
    parts.append("The targets: a load-balanced kernel at least as fast as `ppt` at every point (\"x ppt's speed\" of at "
                 "least 1.00), at an interaction rate of at least 70% of its own rate on uniform boxes of the same mean "
                 "occupancy. The occupancy of a clustered input is taken as its near-field interactions per particle "
                 "over 3^d (the P of uniform boxes with as many interactions), and compared with the kernel's measured "
                 "`uniform-exact` rate at the nearest P (Table III and the particles-per-box sweep in 2D, the 3D "
                 "Newton-3 runs). `bpb` keeps one block per box as the paper does, so on clustered input a few blocks "
                 "compute the giant boxes while the GPU idles. `--level auto` gives each GPU kernel a level of its own "
                 "(section \"A level per kernel\"; rows measured before that carry the common rule's level); the "
                 "tables show where that is the fastest level and where a kernel would rather go deeper or shallower.")
    return "\n\n".join(parts)
