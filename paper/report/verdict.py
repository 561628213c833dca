"""The opening lines: what of the paper reproduced and what did not, with numbers, from the data."""
from .common import FULL_LEVEL, PAPER_DEVICE, fmt_ms, gpu_name, join, num
from .facts import best_newton3, bpb_points, full_scale, model_table2, table3_tables, time_of, validation_rows
from .kernels import BPB, BPB_N3, CPU_SERIAL
from .model import model
from .nonuniform import load_balance_verdict, nonuniform
from .table3 import table3
from .validation import validation


def verdict(report):
    """What of the paper reproduced and what did not, with numbers, from the data."""
    paper = report.paper
    lines = []
    for m, by in table3_tables(report):
        ps = [p for p in full_scale(by) if p in paper]
        gpu = gpu_name(list(by.values()))
        if not ps:
            continue
        big = ps[-1]
        ours = {p: time_of(by, BPB_N3, p) / time_of(by, BPB, p) for p in ps}
        theirs = {p: paper[p]["bpb_n3_ms"] / paper[p]["bpb_ms"] for p in ps}
        faster = [p for p in ps if ours[p] < 1]
        paper_faster = [p for p in ps if theirs[p] < 1]
        status = ("**Reproduced**" if set(faster) >= set(paper_faster) and faster else
                  "**Partly reproduced**" if faster else "**Not reproduced**")
        lines.append(
            f"- {status} on the {gpu}: *the improved BPB (Newton's third law) is faster than the original BPB*. "
            f"Paper ({PAPER_DEVICE}): {theirs[big]:.2f}x the original's time at P = {big}, faster at "
            f"{len(paper_faster)} of {len(ps)} P. Ours: {ours[big]:.2f}x at P = {big}; " +
            (f"faster at P = {join(map(str, faster))}." if faster else
             f"slower at every P from {ps[0]} to {big} ({min(ours.values()):.2f}x to {max(ours.values()):.2f}x)."))
        cpu = [p for p in ps if (CPU_SERIAL, FULL_LEVEL, p) in by]
        if cpu:
            sp = {p: time_of(by, CPU_SERIAL, p) / time_of(by, BPB, p) for p in cpu}
            grows = all(sp[a] <= sp[b] for a, b in zip(cpu, cpu[1:]))
            paper_sp = {p: paper[p]["bpb_speedup"] for p in cpu}
            last = cpu[-1]
            status = ("**Reproduced and exceeded**" if sp[last] > paper_sp[last] else
                      "**Reproduced**" if sp[last] > 1 else "**Not reproduced**")
            lines.append(
                f"- {status} on the {gpu}: *the BPB kernel is much faster than one CPU core*. Speedup "
                f"of {BPB} over {CPU_SERIAL} at P = {last}: {sp[last]:.0f} (paper: {paper_sp[last]:.0f}); it "
                + ("grows with P at every step, as in the paper." if grows else
                   f"does not grow monotonically with P ({', '.join(f'{sp[p]:.0f}' for p in cpu)} for P = "
                   f"{', '.join(map(str, cpu))}; see the flagged rows of section {report.section_no(table3)})."))
    if not lines:
        reduced = [m for m, by in table3_tables(report) if by]
        lines.append(f"- **Not tested**: the paper's GPU claims need a level-{FULL_LEVEL} run of {BPB} and {BPB_N3} on a "
                     "GPU; " + (f"results/table3 holds only CPU or reduced-scale rows ({', '.join(reduced)})." if reduced
                                else "results/table3 holds no rows yet."))
    for m, by in table3_tables(report):
        news = [p for p in bpb_points(by) if best_newton3(report, by, p)[0]]
        if not news:
            continue
        gpu = gpu_name(list(by.values()))
        big = news[-1]
        k, r = best_newton3(report, by, big)
        sp = {p: time_of(by, BPB, p) / num(best_newton3(report, by, p)[1], "median_ms") for p in news}
        wins = [p for p in news if sp[p] >= 1]
        loses = [p for p in news if sp[p] < 1]
        lines.append(
            f"- **New here: Newton's third law that pays on the {gpu}.** The fastest of the new Newton-3 kernels at "
            f"P = {big}, `{k}`, takes {fmt_ms(num(r, 'median_ms'))} ms against {BPB}'s {fmt_ms(time_of(by, BPB, big))} "
            f"ms: {sp[big]:.2f}x faster (the project's target 1.3x, its goal 1.5x). The best new kernel is at least as fast "
            f"as {BPB} at P = {join(map(str, wins)) or 'none'}" +
            (f" and slower at P = {join(map(str, loses))} ({join(f'{sp[p]:.2f}x' for p in loses)}; see the section on "
             "Newton's third law)." if loses else "."))
    lb = load_balance_verdict(report)
    if lb:
        lines.append(f"- **New here: load balance on clustered input** (section {report.section_no(nonuniform)}; targets: "
                     "at least ppt's speed, at least 70% of the kernel's uniform rate, within 5% of bpb on uniform "
                     "boxes). " + "; ".join(lb) + ".")
    t2 = model_table2(report)
    if t2:
        quantities = ("computation", "register", "shared", "global")
        agree = sorted(q for q in quantities if all(v[q][2] for v in t2.values()))
        differ = sorted(q for q in quantities if not any(v[q][2] for v in t2.values()))
        lines.append(f"- **{'Reproduced' if not differ else 'Partly reproduced'}**: *Table II follows from Table I*. "
                     f"The {join(agree)} reductions agree at all {len(t2)} P; "
                     + (f"the printed {join(differ)} reduction does not (section {report.section_no(model)})." if differ
                        else "all of them do."))
    val = validation_rows(report)
    if val:
        fails = [r for r in val if r["status"] != "PASS"]
        cases = sorted({(r["distribution"], r["dim"], r["level"], r["precision"]) for r in fails})
        lines.append(f"- **Correctness** (ours, not a claim of the paper): {len(val) - len(fails)} of {len(val)} "
                     f"kernel checks against the float64 ground truth pass" +
                     (f"; the {len(fails)} failures are float32 kernels at "
                      f"{join(f'{d} {dim}D level {lv}' for d, dim, lv, _ in cases)} (section "
                      f"{report.section_no(validation)})." if fails else "."))
    return "\n".join(lines)
