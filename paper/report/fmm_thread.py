"""Part of the fmm report section (fmm_hopper.py): M2L a thread per target at low orders (docs/design.md
§16, "M2L at low orders") against the sibling-group kernel, and the sibling groups on the tensor cores
("M2L on tensor cores") against the same, each pair alternated in one call on one machine
(results/fmm-m2l-thread and results/fmm-m2l-tensor: <device>-<variant>.csv, made by scripts/m2l-compare.sh)."""
import os
import statistics

from .common import fmt_ms, num, table
from .fmm_common import fp32_peak, order_of

# scripts/m2l-compare.sh reads its generated inputs from files; the rows name the file.
INPUTS = {"u3": "uniform", "u3s": "uniform", "p3": "plummer", "c2": "clusters"}


def input_name(r):
    d = r.get("distribution", "")
    base = os.path.splitext(os.path.basename(d))[0]
    return INPUTS.get(base, base) if os.sep in d else d


def compare_rows(report, folder, a, b):
    """The m2l-compare.sh rows of `folder` (<device>-<a>.csv against <device>-<b>.csv): a table body
    (machine, input, level, p, M2L ms a -> b, evaluation ms, b's M2L TFLOP/s) and the ratios b / a
    with their keys."""
    rows = report.rows(folder)
    groups = {r["_file"][:-len(f"-{a}.csv")] for r in rows if r["_file"].endswith(f"-{a}.csv")}
    cells = {}
    for r in rows:
        for variant in (a, b):
            stem = r["_file"][:-len(f"-{variant}.csv")] if r["_file"].endswith(f"-{variant}.csv") else None
            if stem in groups and r.get("median_ms"):
                key = (stem, r["dim"], input_name(r), r["n"], r["level"], r["precision"], order_of(r))
                cells.setdefault(key, {}).setdefault(variant, []).append(r)
    body, ratios = [], []
    for key in sorted(cells, key=lambda k: (k[0], k[1], k[2], int(k[3]), int(k[4]), k[5], k[6] or 0)):
        g, t = cells[key].get(a), cells[key].get(b)
        if not g or not t:
            continue
        med = lambda rs, c: statistics.median(num(r, c) for r in rs)
        gm, tm = med(g, "m2l_ms"), med(t, "m2l_ms")
        rate = num(t[0], "m2l_madds") / (tm * 1e-3)  # multiply-adds per second, as fp32_peak counts
        peak = fp32_peak(t[0]) if key[5] == "float" else float("nan")  # the FP32 peak: float rows only
        ratios.append((tm / gm, key))
        body.append([key[0], f"{key[2]} {key[1]}D, N = {key[3]}, {key[5]}", key[4], str(key[6]),
                     f"{fmt_ms(gm)} -> {fmt_ms(tm)} ({gm / tm:.2f}x)",
                     f"{fmt_ms(med(g, 'median_ms'))} -> {fmt_ms(med(t, 'median_ms'))}",
                     f"{2 * rate / 1e12:.1f} ({peak / rate:.1f}x from peak)" if peak == peak else f"{2 * rate / 1e12:.1f}"])
    return body, ratios


def thread_part(report, out):
    body, ratios = compare_rows(report, "fmm-m2l-thread", "group", "thread")
    if not body:
        out.missing.append(("results/fmm-m2l-thread/", "M2L a thread per target", "(scripts/m2l-compare.sh)"))
        return []
    lo, hi = min(ratios), max(ratios)
    out.summary.append(f"at low orders M2L runs a thread per target: {1 / hi[0]:.1f}x to {1 / lo[0]:.1f}x faster "
                       f"than the sibling-group kernel ({lo[1][2]} {lo[1][1]}D, p = {lo[1][6]} the most), on {lo[1][0]}")
    return ["Up to 3D float p = 6 (2D float 12, 3D double 4, 2D double 8) a thread owns one target's locals in "
            "registers and walks its own interaction list, the offset's derivatives in registers too. Its wide "
            "variant (3D float p = 7 and 8, double p = 5 and 6) keeps only the locals and reads the derivatives a "
            "row at a time from the L1. At 3D float p = 8 both kernels take the orders per offset (shorter sums "
            "at the farther offsets): the wide variant walks each list an order at a time, the lists grouped by "
            "order first. Above, the sibling-group kernel. Both alternated twice in one call (`scripts/m2l-compare.sh`), medians of the "
            "two medians in ms; the rate is the thread kernel's useful multiply-adds (2 flops each), in float rows "
            "against the FP32 peak of the row's device and clock:\n\n" +
            table(["machine", "input", "level", "p", "M2L ms, group -> thread (speed-up)", "evaluation ms",
                   "thread M2L TFLOP/s"], body)]


def tensor_part(report, out):
    """M2L's sibling groups on the tensor cores against the FP32 sibling-group kernel
    (results/fmm-m2l-tensor, M2L_CASES=high VARIANTS="group tensor" scripts/m2l-compare.sh)."""
    body, ratios = compare_rows(report, "fmm-m2l-tensor", "group", "tensor")
    if not body:
        out.missing.append(("results/fmm-m2l-tensor/", "M2L on tensor cores", "(scripts/m2l-compare.sh)"))
        return []
    faster = [(r, k) for r, k in ratios if r < 1]
    if faster:
        lo = min(faster)
        out.summary.append(f"M2L on the tensor cores (TF32 in three parts): at best {1 / lo[0]:.2f}x the FP32 "
                           f"sibling-group kernel's speed ({lo[1][2]} {lo[1][1]}D, level {lo[1][4]}, p = {lo[1][6]}), "
                           f"faster in {len(faster)} of {len(ratios)} rows, on {lo[1][0]}")
    return ["The same sibling groups with each offset's product on the tensor cores (`mma.sync` m16n8k8 TF32, "
            "every float split into two TF32 parts and three products summed, so float's precision; the operator's "
            "entries read through an index map from the offset's derivatives, no operator table). Both alternated "
            "twice in one call (`M2L_CASES=high VARIANTS=\"group tensor\" scripts/m2l-compare.sh`), medians of the "
            "two medians in ms; the rate is the tensor kernel's useful multiply-adds (2 flops each) against the FP32 "
            "peak. A speed-up above 1 is where the tensor cores win; the method takes them by default at 3D float "
            "p = 13..16 (`farfield/m2l_group_plan.h`: tensor_by_default):\n\n" +
            table(["machine", "input", "level", "p", "M2L ms, group -> tensor (speed-up)", "evaluation ms",
                   "tensor M2L TFLOP/s"], body)]
