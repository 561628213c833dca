"""Section: several GPUs: strong scaling, cross pairs once or twice, `validate --gpus 2` and capacity."""
import math
import os
from collections import defaultdict

from .common import Flags, context_label, distinct, fmt_ms, fmt_x, join, latest, machine, ms, num, rate, table
from .figures import plt

SCALING_TARGET = 1.8   # issue 12: 2 GPUs over 1, 2D uniform, N = 5e8, level 11
CAPACITY_TARGET = 1.5e9  # issue 12: 2D particles over 2 GPUs in one evaluation


def multigpu_figure(rows, one, path, title):
    """Left: speed-up over one GPU against GPUs (ideal dashed). Right: each run's time split into the
    slowest GPU's kernel and the rest (communication and waiting)."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2))
    series = defaultdict(list)
    for r in rows:
        base = one.get((r["kernel"], r["n"], r["level"], r["dim"], r["precision"]))
        if base is not None:
            label = r["kernel"] + (f" ({r['cross_pairs']})" if r.get("cross_pairs") else "")
            series[label].append((int(r["gpus"]), num(base, "median_ms") / num(r, "median_ms")))
    top = 1
    for label, pts in sorted(series.items()):
        pts = sorted(set(pts) | {(1, 1.0)})
        top = max(top, max(g for g, _ in pts))
        ax.plot([g for g, _ in pts], [v for _, v in pts], marker="o", label=label)
    ax.plot([1, top], [1, top], "k--", alpha=0.5, label="ideal")
    ax.set_xlabel("GPUs")
    ax.set_ylabel("speed-up over one GPU")
    ax.set_xticks(range(1, top + 1))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    runs = sorted(rows, key=lambda r: (r["kernel"], int(r["gpus"]), r.get("cross_pairs", "")))
    names = [f"{r['kernel']}\n{r['gpus']} GPU" + (f"\n{r['cross_pairs']}" if r.get("cross_pairs") else "") for r in runs]
    kern = [num(r, "kernel_max_ms") if int(r["gpus"]) > 1 else num(r, "median_ms") for r in runs]
    comm = [num(r, "comm_ms") if int(r["gpus"]) > 1 else 0.0 for r in runs]
    xs = range(len(runs))
    bx.bar(xs, kern, label="kernel (slowest GPU)", color="tab:blue")
    bx.bar(xs, comm, bottom=kern, label="communication and waiting", color="tab:orange")
    bx.set_xticks(list(xs))
    bx.set_xticklabels(names, fontsize=6)
    bx.set_ylabel("time of one evaluation (ms)")
    bx.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def multigpu(report):
    if not any(report.rows(name) for name in ("multigpu", "multigpu-capacity", "validation-multigpu")):
        return ("Not measured yet: results/multigpu/ and results/multigpu-capacity/ hold no rows. "
                "`scripts/multigpu-bench.sh` runs both experiments (experiments/multigpu.ini, "
                "experiments/multigpu-capacity.ini) on a machine with two GPUs; the README's \"Several GPUs\" "
                "says how the work is split.")
    key = lambda r: (r["kernel"], r.get("gpus") or "1", r.get("cross_pairs", ""), r["n"], r["level"], r["dim"],
                     r["precision"])
    parts = []
    for m, rows in report.tables("multigpu"):
        by = latest(rows, key)
        rows = list(by.values())
        one = {(r["kernel"], r["n"], r["level"], r["dim"], r["precision"]): r for r in rows if (r.get("gpus") or "1") == "1"}
        multi = [r for r in rows if (r.get("gpus") or "1") != "1"]
        flags = Flags(report, rows, lambda r: f"{r['kernel']} on {r.get('gpus') or 1} GPU", "interactions_per_s")
        body = []
        for r in sorted(rows, key=lambda r: (int(r["n"]), r["kernel"], int(r.get("gpus") or 1), r.get("cross_pairs", ""))):
            base = one.get((r["kernel"], r["n"], r["level"], r["dim"], r["precision"]))
            g = int(r.get("gpus") or 1)
            speed = num(base, "median_ms") / num(r, "median_ms") if base is not None else math.nan
            body.append([r["kernel"] + flags.mark(r), g, r.get("cross_pairs") or "-", f"{float(r['n']):.3g}", r["level"],
                         ms(r), fmt_x(speed) if g > 1 else "1", rate(r),
                         f"{100 * num(r, 'comm_share'):.1f}%" if g > 1 else "-",
                         fmt_ms(num(r, "comm_ms")) if g > 1 else "-",
                         f"{num(r, 'kernel_imbalance'):.3f}" if g > 1 else "-",
                         f"{float(r['halo_bodies']):.3g}" if g > 1 and r.get("halo_bodies") else "-"])
        fig = f"multigpu-{m}.png"
        multigpu_figure(rows, one, os.path.join(report.figdir, fig), f"strong scaling, {machine(rows)}")
        verdicts = []
        for r in multi:
            base = one.get((r["kernel"], r["n"], r["level"], r["dim"], r["precision"]))
            if base is None or int(r["gpus"]) != 2:
                continue
            speed = num(base, "median_ms") / num(r, "median_ms")
            verdicts.append(f"{r['kernel']}" + (f" (cross pairs {r['cross_pairs']})" if r.get("cross_pairs") else "") +
                            f": {speed:.2f}x on 2 GPUs ({'meets' if speed >= SCALING_TARGET else 'misses'} the "
                            f"{SCALING_TARGET}x target), communication {100 * num(r, 'comm_share'):.1f}% of the time")
        once_twice = defaultdict(dict)
        for r in multi:
            once_twice[(r["kernel"], r["n"], r["gpus"])][r.get("cross_pairs", "")] = r
        compare = [f"{k} on {g} GPUs: once {fmt_ms(num(d['once'], 'median_ms'))} ms against twice "
                   f"{fmt_ms(num(d['twice'], 'median_ms'))} ms (halo {float(d['once']['halo_bodies']):.3g} against "
                   f"{float(d['twice']['halo_bodies']):.3g} bodies moved)"
                   for (k, n, g), d in sorted(once_twice.items()) if "once" in d and "twice" in d]
        parts.append(
            f"**{m}**: one process drives the GPUs; each holds a Z-order range of boxes balanced by pair count, plus "
            "its halo; times span every GPU (GPU 0 starts the clock, waits for the others, stops it). *comm* is the "
            "time outside the slowest GPU's kernel: halo exchange, counterforces, packing and the waiting at them; "
            "*imbalance* the slowest GPU's kernel over the mean. Speed-up against the same kernel on one GPU of the "
            "same machine.\n\n" + context_label(report, rows) + "\n\n" +
            table(["kernel", "GPUs", "cross pairs", "N", "level", "ms", "speed-up", "interactions/s", "comm", "comm ms",
                   "imbalance", "halo bodies"], body) + flags.text() +
            ("\n\n" + "; ".join(verdicts) + "." if verdicts else "") +
            ("\n\nCross pairs computed once (counterforces sent back) or twice (both sides): " + "; ".join(compare) + "."
             if compare else "") + f"\n\n![multi-GPU scaling](figures/{fig})")
    for m, rows in report.tables("validation-multigpu"):
        rows = list(latest(rows, lambda r: (r["kernel"], r["dim"], r["distribution"], r["precision"], r["gpus"],
                                            r.get("cross_pairs", ""))).values())
        passed = [r for r in rows if r["status"] == "PASS"]
        bitwise = sorted({r["kernel"] for r in rows if r.get("one_gpu") == "bitwise"})
        differs = sorted({r["kernel"] for r in rows if r.get("one_gpu") == "DIFFERS"})
        worst = max(rows, key=lambda r: num(r, "rel_l2") / num(r, "tolerance"))
        parts.append(f"**`validate --gpus 2`, {m}**: {len(passed)} of {len(rows)} kernel checks pass against the float64 "
                     f"ground truth ({distinct(rows, 'distribution')}; {distinct(rows, 'dim')}D; "
                     f"{distinct(rows, 'precision')}; N = {distinct(rows, 'n')}); the largest error relative to its "
                     f"tolerance is {worst['kernel']} {worst['precision']} {worst['dim']}D "
                     f"({num(worst, 'rel_l2'):.2g} against {num(worst, 'tolerance'):.0e}). Equal to the one-GPU output "
                     f"bit for bit: {join(bitwise) or 'none checked'}" +
                     (f"; **differs from one GPU: {join(differs)}**" if differs else "") + ".\n\n" +
                     context_label(report, rows))
    for m, rows in report.tables("multigpu-capacity"):
        by = latest(rows, key)
        rows = sorted(by.values(), key=lambda r: -float(r["n"]))
        body = [[r["kernel"], r.get("gpus") or 1, f"{float(r['n']):.3g}", r["level"], r["dim"], ms(r), rate(r),
                 f"{100 * num(r, 'comm_share'):.1f}%" if (r.get("gpus") or "1") != "1" else "-"] for r in rows]
        best = max((float(r["n"]) for r in rows if r["dim"] == "2"), default=0)
        parts.append(f"**Capacity, {m}**: the largest inputs evaluated in one evaluation.\n\n" + context_label(report, rows) +
                     "\n\n" + table(["kernel", "GPUs", "N", "level", "dim", "ms", "interactions/s", "comm"], body) +
                     f"\n\nLargest 2D input: {best:.3g} particles ({'meets' if best >= CAPACITY_TARGET else 'below'} "
                     f"the target of {CAPACITY_TARGET:.2g}).")
    return "\n\n".join(parts)
