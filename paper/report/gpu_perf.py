"""Section: the GPU tree build against a bare radix sort, and the all-pairs kernels (the ground truth)."""
import math

from .common import FULL_LEVEL, Flags, context_label, distinct, fmt_ms, gpu_name, is_gpu_row, latest, ms, num, rate, table
from .facts import full_scale, table3_tables
from .kernels import BPB, GROUND_TRUTH


def tree_build(report, by_k):
    """`nearfield bench --tree` rows (kernel `tree-gpu[-domain-given]:<stage>`, `tree-cpu:total`)."""
    tree_rows = [r for r in by_k.values() if r["kernel"].startswith("tree-")]
    configs = sorted({(r["kernel"].split(":")[0], r["dim"], r["level"], r["n"]) for r in tree_rows
                      if r["kernel"].startswith("tree-gpu")})
    if not configs:
        return None
    body = []
    for prefix, dim, level, n in configs:
        get = lambda stage: by_k.get((f"{prefix}:{stage}", dim, level, n))
        tot, sort, cpu = get("total"), get("bare-sort"), by_k.get(("tree-cpu:total", dim, level, n))
        ratio = num(tot, "median_ms") / num(sort, "median_ms") if tot and sort else math.nan
        body.append([f"{dim}D", level, n, "given" if "domain-given" in prefix else "reduced on the GPU"] +
                    [fmt_ms(num(get(st), "median_ms")) for st in ("domain", "keys", "sort", "box_starts", "neighbors")] +
                    [ms(tot), fmt_ms(num(sort, "median_ms")), f"{ratio:.2f}", fmt_ms(num(cpu, "median_ms"))])
    reps = distinct([r for r in tree_rows if is_gpu_row(r)], "reps")
    return (f"GPU tree build (`nearfield bench --tree`, median of {reps} builds; ms). The sort is "
            "`cub::DeviceRadixSort::SortPairs` over only the key's dim*K bits; *bare sort* is that call alone on "
            "the same keys and indices; the CPU build (counting sort, one thread) for scale.\n\n" +
            context_label(report, tree_rows) + "\n\n" +
            table(["dim", "level", "N", "domain", "domain stage", "keys", "sort", "box starts", "neighbors",
                   "total", "bare sort", "total / bare sort", "CPU build"], body))


def gpu_perf(report):
    rows = report.rows("gpu-perf")
    if not rows:
        return "(no GPU build or all-pairs figures yet: scripts/gpu-perf.sh)"
    by_k = latest(rows, lambda r: (r["kernel"], r["dim"], r["level"], r["n"]))
    text = [t for t in [tree_build(report, by_k)] if t]
    all_pairs = report.kernels.all_pairs
    ap = sorted((r for r in by_k.values() if r["kernel"] in all_pairs), key=lambda r: (r["dim"], r["kernel"]))
    if ap:
        flags = Flags(report, ap, lambda r: f"{r['kernel']} {r['dim']}D")
        body = [[r["kernel"] + flags.mark(r), f"{r['dim']}D", r["n"], ms(r), rate(r), f"{num(r, 'gflops'):.0f}"] for r in ap]
        text.append("All-pairs kernels, float32, every pair (`--mask all`); GFLOP/s at 20 flops per 3D and 15 per 2D "
                    "interaction.\n\n" + context_label(report, ap) + "\n\n" +
                    table(["kernel", "dim", "N", "ms", "interactions/s", "GFLOP/s"], body) + flags.text())
        tiled2 = next((num(r, "interactions_per_s") for r in ap if r["kernel"] == GROUND_TRUTH and r["dim"] == "2"), None)
        for m, by in table3_tables(report):
            pts = [(p, num(by[(BPB, FULL_LEVEL, p)], "interactions_per_s")) for p in full_scale(by)]
            if tiled2 and pts and gpu_name(list(by.values())) == gpu_name(ap):
                text.append("The original BPB as a fraction of the 2D all-pairs rate on the same GPU (the same "
                            "interaction and shared-memory staging, so the gap is the cost of boxes and neighbor lists): "
                            + ", ".join(f"P = {p}: {v / tiled2:.0%}" for p, v in pts) + ".")
    return "\n\n".join(text)
