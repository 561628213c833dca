"""Section: Newton's third law on Hopper: why the paper's kernel loses on sm_90, which new Newton-3
kernels win, by how much, per P; 3D and double precision; the machine code behind it."""
import math

from .common import FULL_LEVEL, context_label, fmt_x, join, latest, ms, num, ppb_of, table
from .facts import best_newton3, bpb_points, sass_counts, sass_facts, sass_of, table3_tables, time_of
from .kernels import BPB, BPB_N3, PAPER_GPU, SASS_SYMBOLS


def per_rsqrt(counts):
    """FP32 arithmetic (FFMA + FMUL + FADD) per MUFU.RSQ in a kernel's machine code: one RSQ per
    evaluated pair, so this is the arithmetic per interaction (one-sided kernels) or per pair
    (Newton-3 kernels) of the unrolled inner loops, which dominate the code."""
    rsq = counts.get("MUFU.RSQ", 0)
    fp = sum(counts.get(op, 0) for op in ("FFMA", "FMUL", "FADD"))
    return fp / rsq if rsq else math.nan


def level7_table(report, m, by):
    """The new Newton-3 kernels against both of the paper's at level 7, 2D float32, or None."""
    ps = bpb_points(by)
    kernels = sorted({k[0] for k in by if k[1] == FULL_LEVEL and k[0] in report.kernels.new_newton3})
    if not ps or not kernels:
        return None
    rows = [r for (k, lv, _), r in by.items() if lv == FULL_LEVEL and (k in kernels or k in PAPER_GPU)]
    body = []
    for p in ps:
        b = time_of(by, BPB, p)
        line = [p, ms(by.get((BPB, FULL_LEVEL, p))), ms(by.get((BPB_N3, FULL_LEVEL, p))), fmt_x(b / time_of(by, BPB_N3, p))]
        for k in kernels:
            line += [ms(by.get((k, FULL_LEVEL, p))), fmt_x(b / time_of(by, k, p))]
        body.append(line)
    hdr = ["P", BPB, BPB_N3, "speedup"] + [x for k in kernels for x in (k, "speedup")]
    best_p = {p: best_newton3(report, by, p) for p in ps}
    cross = [p for p in ps if best_p[p][0] and time_of(by, BPB, p) / num(best_p[p][1], "median_ms") >= 1]
    slow = [p for p in ps if best_p[p][0] and p not in cross]
    return (f"**{m}**, 2D float32, level {FULL_LEVEL}, `uniform-exact`: ms as median [min-max], speedup = {BPB}'s time / "
            f"the kernel's (above 1: faster than {BPB}).\n\n" + context_label(report, rows) + "\n\n" + table(hdr, body) +
            (f"\n\nThe best new Newton-3 kernel is at least as fast as {BPB} at P = {join(map(str, cross))}"
             + (f" and slower at P = {join(map(str, slow))}" if slow else "") + ". "
             "Boxes under 32 particles are computed one particle per thread by `n3-shfl` and `n3-rotate` (their "
             "pairs in both directions, as ppt does), because a warp holding 32 R targets idles most of its lanes "
             "on them; from 32 particles on a box goes through the warp items, and at P = 32 one item per box pair "
             "is all there is, so the fixed costs of an item (loading the targets, one atomic add per particle and "
             "box pair) weigh most there." if cross else ""))


PRECISION_NAMES = {"float": "float32", "double": "double"}


def other_precisions(report):
    """results/newton3 (2D double) and results/newton3-3d: every kernel of the rows (the paper's GPU
    kernels, the new Newton-3 kernels, then the others, such as the CPU kernels of a reduced run),
    with the speedup over bpb where bpb was measured; the caption names what the rows hold."""
    parts = []
    for name in ("newton3", "newton3-3d"):
        for m, rows in report.tables(name):
            by = latest(rows, lambda r: (r["kernel"], r["dim"], int(r["level"]), ppb_of(r), r["precision"]))
            rows = list(by.values())
            present = {r["kernel"] for r in rows}
            new = sorted(present & report.kernels.new_newton3)
            kernels = [k for k in PAPER_GPU if k in present] + new
            kernels += sorted(present - set(kernels))
            points = sorted({(r["dim"], int(r["level"]), ppb_of(r), r["precision"]) for r in rows})
            body = []
            for d, lv, p, prec in points:
                b = by.get((BPB, d, lv, p, prec))
                line = [f"{d}D", lv, p, prec]
                for k in kernels:
                    r = by.get((k, d, lv, p, prec))
                    line.append(ms(r) + (f" ({fmt_x(num(b, 'median_ms') / num(r, 'median_ms'))}x)"
                                         if r and b and k != BPB else ""))
                body.append(line)
            dims = join(f"{d}D" for d in sorted({r["dim"] for r in rows}))
            precisions = join(PRECISION_NAMES.get(x, x) for x in sorted({r["precision"] for r in rows}, reverse=True))
            levels = sorted({int(r["level"]) for r in rows})
            speedup = (f" and, in brackets, the speedup over {BPB}" if BPB in present else
                       f" ({BPB} not measured here, so no speedups)")
            parts.append(f"**{m}**, {dims}, {precisions}, level {join(map(str, levels))}, P = "
                         f"{join(map(str, sorted({p for _, _, p, _ in points})))}: ms as median [min-max]{speedup}.\n\n" +
                         context_label(report, rows) + "\n\n" + table(["dim", "level", "P", "precision"] + kernels, body))
    return parts


def instruction_mix(report):
    """FP32 instructions per pair in the machine code, and the bound on a Newton-3 kernel's gain."""
    counts = sass_counts(report)
    mix = [(k, sass_of(counts, k)) for k in SASS_SYMBOLS]
    mix = [(k, f"{k}, per pair" if report.kernels.newton3(k) else f"{k}, per interaction", c) for k, c in mix if c]
    if not mix:
        return None
    body = [[label, f"{per_rsqrt(c):.1f}", c.get("MUFU.RSQ", 0),
             sum(v for op, v in c.items() if op.startswith("SHFL")),
             sum(v for op, v in c.items() if op.startswith("LDS")),
             sum(v for op, v in c.items() if op.startswith("ATOMS")),
             sum(v for op, v in c.items() if op.startswith("RED"))] for _, label, c in mix]
    text = ("The machine code (2D float32, unguarded, 16 targets per lane for the n3-* kernels; `cuobjdump -sass` on "
            "the GPU machine through `scripts/sass-summary.sh`, `results/gpu-perf/sass-summary-newton3.txt`): FP32 "
            "arithmetic instructions per `MUFU.RSQ` (one per evaluated pair), and the static counts of the other "
            "instructions that matter.\n\n" + table(["kernel", "FP32 per RSQ", "MUFU.RSQ", "SHFL", "LDS", "ATOMS",
                                                     "RED"], body))
    one = next((per_rsqrt(c) for k, _, c in mix if k == BPB), math.nan)
    best = min(((per_rsqrt(c), k) for k, _, c in mix if k in report.kernels.new_newton3), default=None)
    if not math.isnan(one) and best:
        bound = 2 * (one + 1) / (best[0] + 1)
        text += (f"\n\nA pair costs {BPB} two interactions of {one:.0f} FP32 instructions and one RSQ each, "
                 f"{best[1]} one pair of {best[0]:.0f} and one RSQ: counting issue slots only, {bound:.2f}x is the most a "
                 f"Newton-3 kernel can gain at the same efficiency ({BPB} also pays one shared-memory load per "
                 f"interaction, the n3 kernels a shuffle or load per 16 pairs).")
        for m, by in table3_tables(report):
            big = max(bpb_points(by), default=None)
            k, r = best_newton3(report, by, big) if big else (None, None)
            if k:
                sp = time_of(by, BPB, big) / num(r, "median_ms")
                text += (f" Measured ({m}, P = {big}): {k} reaches {sp:.2f}x, {100 * sp / bound:.0f}% of that bound; "
                         "the rest goes to the atomic adds of targets and reactions into global memory (one per "
                         "particle and box pair), the triangular own-box items and the occupancy of a kernel that "
                         "keeps 16 targets per lane in registers.")
    return text


def newton3_hopper(report):
    parts = [t for m, by in table3_tables(report) for t in [level7_table(report, m, by)] if t]
    parts += other_precisions(report)
    mix = instruction_mix(report)
    if mix:
        parts.append(mix)
    sass = sass_facts(report)
    if sass:
        parts.append(
            f"Why the paper's kernel loses here: its shared-memory float `atomicAdd`s compile to compare-and-swap loops "
            f"({sass['cas']} `ATOMS.CAS*` in {BPB_N3}'s code), and in the neighbor phase all 32 lanes of a warp add into "
            f"the same B[j] at the same time, so each counterforce component is serialised up to 32 times. The new "
            f"kernels keep the pair count halved without that traffic: `n3-shfl` sums the reaction on a source in "
            f"registers over the lane's 16 targets and reduces it across the warp with shuffles (register "
            f"j-accumulation), `n3-rotate` hands each source's accumulator from lane to lane so that no two lanes ever "
            f"touch one source (lane rotation), and both add to global memory with one native `RED` per particle and "
            f"work item (distinct addresses). `n3-colour` runs lane rotation over whole box pairs in a conflict-free "
            f"colouring of the links (9 colours in 2D, 27 in 3D), with plain loads and stores: no atomics at all, "
            f"bitwise repeatable, at the price of one launch per colour and of load balance (a box pair is one warp's "
            f"work, so on clustered input its giant boxes serialise; see the section on non-uniform inputs).")
    return "\n\n".join(parts) or "(no results of the new Newton-3 kernels yet: run `nearfield reproduce`)"
