"""Section: what reproduces, what does not, and why: the headline, fixed costs, speedups, the
atomics, the tree build, tree depth and accuracy, each computed from the results."""
import functools
import math
import os
import tempfile

from .common import FULL_LEVEL, PAPER_DEVICE, fmt_ms, gpu_name, latest, num
from .depth import best_depths
from .facts import full_scale, model_table2, sass_facts, table3_tables, time_of, validation_rows
from .kernels import BPB, BPB_N3, CPU_SERIAL, ROUNDING_REFERENCE
from .table3 import table3
from .validation import validation


@functools.lru_cache(maxsize=None)
def input_rounding_effect(report, n=3000, level=3, eps="1e-4", seed=5):
    """Relative L2 change of float64 near-field forces when only the inputs are rounded to float32,
    measured with the project's commands: `forces --kernel ROUNDING_REFERENCE --mask near --precision
    double` with and without `--round-inputs` (box membership from the original coordinates), then
    `compare`. One 2D sample per distribution."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for dist in ("uniform", "plummer", "clusters"):
            p = os.path.join(tmp, f"{dist}.csv")
            report.nearfield("generate", "--dist", dist, "--dim", 2, "--n", n, "--seed", seed, "--output", p)
            files = []
            for extra in ([], ["--round-inputs"]):
                a = os.path.join(tmp, f"{dist}{len(files)}.acc.csv")
                report.nearfield("forces", "--input", p, "--kernel", ROUNDING_REFERENCE, "--mask", "near",
                                 "--level", level, "--precision", "double", "--softening", eps, "--output", a, *extra)
                files.append(a)
            values = dict(line.split(": ") for line in
                          report.nearfield("compare", "--reference", files[0], "--test", files[1]).splitlines())
            out[dist] = float(values["rel_l2"])
    return out, f"{n} points in 2D, level {level}, eps = {eps}"


def discussion(report):
    paper = report.paper
    lines = []
    for m, by in table3_tables(report):
        ps = [p for p in full_scale(by) if p in paper]
        if not ps:
            continue
        gpu = gpu_name(list(by.values()))
        big, small = ps[-1], ps[0]
        b, b3 = time_of(by, BPB, big), time_of(by, BPB_N3, big)
        pr = paper[big]["bpb_n3_ms"] / paper[big]["bpb_ms"]
        lines.append(f"- **The headline result ({gpu}).** On the {PAPER_DEVICE} the improved BPB took {pr:.2f}x the "
                     f"original's time at P = {big} ({paper[big]['bpb_n3_ms']:g} vs {paper[big]['bpb_ms']:g} ms). On the "
                     f"{gpu} it takes {b3 / b:.2f}x ({fmt_ms(b3)} vs {fmt_ms(b)} ms).")
        mid = [p for p in ps if p <= 4 * small]
        pairs = lambda p: float(report.model.get((2, FULL_LEVEL, p), {}).get("cp_bpb", "nan"))
        if len(mid) > 1 and not math.isnan(pairs(mid[-1])):
            grow_pairs = pairs(mid[-1]) / pairs(small)
            grow_paper = paper[mid[-1]]["bpb_ms"] / paper[small]["bpb_ms"]
            grow_ours = time_of(by, BPB, mid[-1]) / time_of(by, BPB, small)
            lines.append(
                f"- **Absolute times and fixed costs.** The original BPB at P = {big} runs in {fmt_ms(b)} ms against the "
                f"paper's {paper[big]['bpb_ms']:g} ms ({paper[big]['bpb_ms'] / b:.0f} times faster). From P = {small} to "
                f"{mid[-1]} the pair count grows {grow_pairs:.1f}x (`nearfield model`), the paper's BPB time "
                f"{grow_paper:.2f}x ({paper[small]['bpb_ms']:g} to {paper[mid[-1]]['bpb_ms']:g} ms) and ours "
                f"{grow_ours:.2f}x ({fmt_ms(time_of(by, BPB, small))} to {fmt_ms(time_of(by, BPB, mid[-1]))} ms): "
                + ("at small P both are dominated by costs that do not grow with the pairs."
                   if grow_paper < grow_pairs / 4 and grow_ours < grow_pairs / 4 else
                   "the times follow the pair count only loosely at small P."))
        if (CPU_SERIAL, FULL_LEVEL, big) in by:
            c = time_of(by, CPU_SERIAL, big)
            lines.append(f"- **Speedups over the serial CPU.** {CPU_SERIAL} takes {fmt_ms(c)} ms at P = {big} (the paper's "
                         f"CPU: {paper[big]['cpu_ms']:g} ms), so the speedups are {c / b:.0f} ({BPB}) and {c / b3:.0f} "
                         f"({BPB_N3}) against the paper's {paper[big]['bpb_speedup']:g} and "
                         f"{paper[big]['bpb_n3_speedup']:g}.")
        if b3 > b:
            t2 = model_table2(report).get(big, {})
            lines.append(
                "- **Why the atomics decide it.** The model of Tables I-II halves the pair computations "
                + (f"({t2['computation'][1]} fewer at P = {big}) " if t2 else "") +
                "and cuts shared- and global-memory traffic, so it predicts the improved kernel to approach half the "
                "original's time; measured, it takes more. The model counts every access alike: in steps 3-5 each "
                "thread adds its counterforce into B[j] with a shared-memory atomic, and in the neighbor phase all "
                "threads of a warp walk the same j at the same time, so the atomics of one instruction hit one address "
                "and are serialised. That is the trade-off the paper's Section V calls a transformation between data "
                "access and computation.")
            sass = sass_facts(report)
            if sass:
                lines.append(
                    f"- **What the compiler made of them.** In the machine code of bpb-n3 (2D, float32) the shared-memory "
                    f"float `atomicAdd`s are compare-and-swap loops ({sass['cas']} `ATOMS.CAS*` instructions, "
                    f"{sass['atoms_other']} native shared atomics), the global ones single `RED` instructions "
                    f"({sass['red']}); bpb has {sass['bpb_atoms']} atomics. At P = {big} the improved kernel reaches "
                    f"{num(by[(BPB_N3, FULL_LEVEL, big)], 'interactions_per_s'):.2g} interactions/s against the "
                    f"original's {num(by[(BPB, FULL_LEVEL, big)], 'interactions_per_s'):.2g}.")
        if any(r["_file"].endswith(f"-{CPU_SERIAL}.csv") for r in report.rows("table3") if r["_table"] == m):
            lines.append(f"- **How {CPU_SERIAL} was timed.** Its rows come from a separate file of the same machine "
                         f"(`results/table3/*-{CPU_SERIAL}.csv`): to fit a short GPU lease, the single-threaded column "
                         "ran on its own core while the GPU experiments ran (their host threads mostly wait); a quieter "
                         f"machine may time it slightly faster. Section {report.section_no(table3)} flags its rows that "
                         "differ from the rest.")
    perf = latest(report.rows("gpu-perf"), lambda r: (r["kernel"], r["dim"], r["n"]))
    for prefix, what in (("tree-gpu", "with the min/max reduction on the GPU"),
                         ("tree-gpu-domain-given", "when the domain is known beforehand")):
        tot = next((r for (k, d, n), r in perf.items() if k == f"{prefix}:total" and d == "2"), None)
        sort = next((r for (k, d, n), r in perf.items() if k == f"{prefix}:bare-sort" and d == "2"), None)
        if tot and sort:
            lines.append(f"- **The tree build** of {tot['n']} particles at level {tot['level']} (2D) takes "
                         f"{fmt_ms(num(tot, 'median_ms'))} ms on the GPU {what}, "
                         f"{num(tot, 'median_ms') / num(sort, 'median_ms'):.2f} times a bare radix sort of the same keys.")
    for m, k, lv, levels, n, mean_p in best_depths(report):
        if k == BPB and lv < levels[-1]:
            deeper = lv + 1
            lines.append(f"- **Tree depth ({m}).** At a fixed N = {n} the near-field work shrinks as the tree deepens, "
                         f"yet bpb is fastest at level {lv} (mean P = {mean_p[lv]:g}), not at the deepest level "
                         f"measured ({levels[-1]}). At level {deeper} a box holds {mean_p[deeper]:g} particles on average"
                         + (", fewer than the 32 threads of a warp, so most threads of each one-box block idle."
                            if mean_p[deeper] < 32 else "."))
    rounding, sample = input_rounding_effect(report)
    val = validation_rows(report)
    fails = [r for r in val if r["status"] != "PASS"]
    lines.append("- **Accuracy.** All comparisons use float64 references on the inputs the kernel saw, so they measure "
                 "the kernels' arithmetic. Rounding the float64 input positions and masses to float32 alone, with "
                 "everything else in float64, moves the near-field forces by " +
                 ", ".join(f"{v:.1e} relative L2 on a {k} sample" for k, v in rounding.items()) +
                 f" ({sample}; `nearfield forces --kernel {ROUNDING_REFERENCE} --mask near --precision double` with and "
                 "without "
                 f"`--round-inputs`, then `nearfield compare`), " +
                 (f"{min(rounding.values()) / 1e-5:.0f} to {max(rounding.values()) / 1e-5:.0f} times the float32 "
                  f"tolerance of 1e-5: a property of float32 inputs, not of any kernel. "
                  if min(rounding.values()) > 1e-5 else "a property of float32 inputs, not of any kernel. ") +
                 (f"{len(val) - len(fails)} of {len(val)} kernel checks pass; section {report.section_no(validation)} "
                  f"shows the {len(fails)} failing ones and what the data say about them." if fails else
                  f"All {len(val)} kernel checks pass." if val else ""))
    return "\n".join(lines)
