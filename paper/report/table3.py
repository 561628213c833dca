"""Section: Table III, the paper's numbers beside ours, every kernel at the same points, Fig. 8."""
import math
import os

from .common import (FULL_LEVEL, PAPER_CPU, PAPER_DEVICE, Flags, context_label, fmt_x, gpu_name, ms, num, ppb_of,
                     rate, table)
from .facts import full_scale, table3_tables
from .figures import fig8
from .kernels import BPB, BPB_N3, CPU_SERIAL


def honest_speedups(by, ps, gpu):
    """bpb and the fastest GPU kernel against the fastest CPU kernel measured on the same machine
    (vectorized and multi-threaded where measured), beside the paper's serial-CPU speedup."""
    body = []
    for p in ps:
        at = {k: r for (k, lv, pp), r in by.items() if lv == FULL_LEVEL and pp == p}
        cpu = {k: r for k, r in at.items() if k.startswith("cpu-") and not math.isnan(num(r, "median_ms"))}
        gpu_rows = {k: r for k, r in at.items() if not k.startswith("cpu-") and not math.isnan(num(r, "median_ms"))}
        if not cpu or not gpu_rows or CPU_SERIAL not in cpu:
            continue
        best_cpu = min(cpu, key=lambda k: num(cpu[k], "median_ms"))
        best_gpu = min(gpu_rows, key=lambda k: num(gpu_rows[k], "median_ms"))
        t = lambda r: num(r, "median_ms")
        threads = cpu[best_cpu].get("threads") or "?"
        b = gpu_rows.get(BPB)
        body.append([p, f"{best_cpu} ({threads} threads): {ms(cpu[best_cpu])}",
                     fmt_x(t(cpu[CPU_SERIAL]) / t(cpu[best_cpu])),
                     fmt_x(t(cpu[CPU_SERIAL]) / t(b)) if b else "-", fmt_x(t(cpu[best_cpu]) / t(b)) if b else "-",
                     f"{best_gpu}: {fmt_x(t(cpu[best_cpu]) / t(gpu_rows[best_gpu]))}"])
    if not body:
        return ""
    return (f"The speedups a reviewer asks for: the GPU against the fastest CPU kernel measured on the same "
            f"machine (the {gpu}'s host; SIMD and all its cores where those kernels were run), beside the paper's "
            f"{CPU_SERIAL} speedup:\n\n" +
            table(["P", "fastest CPU kernel, ms", f"its speedup over {CPU_SERIAL}", f"{BPB} over {CPU_SERIAL}",
                   f"{BPB} over fastest CPU", "fastest GPU kernel over fastest CPU"], body))


def table3(report):
    paper = report.paper
    parts = []
    for m, by in table3_tables(report):
        rows = list(by.values())
        ps = full_scale(by)
        label = lambda r: f"{r['kernel']}, level {r['level']}, P = {ppb_of(r)}"
        if ps:
            full = [r for r in rows if int(r["level"]) == FULL_LEVEL]
            flags = Flags(report, full, label, rate_col="interactions_per_s")
            gpu = gpu_name(full)
            cell = lambda k, p: ms(by.get((k, FULL_LEVEL, p))) + flags.mark(by.get((k, FULL_LEVEL, p)))
            body = []
            for p in ps:
                cpu, b, b3 = (by.get((k, FULL_LEVEL, p)) for k in (CPU_SERIAL, BPB, BPB_N3))
                sp = lambda g: num(cpu, "median_ms") / num(g, "median_ms") if cpu and g else math.nan
                pr = paper.get(p)
                body.append([p, f"{pr['cpu_ms']:g}" if pr else "-", f"{pr['bpb_ms']:g}" if pr else "-",
                             f"{pr['bpb_n3_ms']:g}" if pr else "-", f"{pr['bpb_n3_ms'] / pr['bpb_ms']:.3f}" if pr else "-",
                             cell(CPU_SERIAL, p), cell(BPB, p), cell(BPB_N3, p), fmt_x(sp(b)), fmt_x(sp(b3)),
                             f"{num(b3, 'median_ms') / num(b, 'median_ms'):.3f}"])
            parts.append(f"**{m}.** Level {FULL_LEVEL} ({4 ** FULL_LEVEL} boxes), N = {4 ** FULL_LEVEL} P, 2D, float32, one "
                         f"evaluation. Left: the paper ({PAPER_CPU} CPU, {PAPER_DEVICE}). Right: ours, {CPU_SERIAL} on the "
                         f"host CPU and the kernels on the {gpu}; times in ms as median [min-max]; speedup = {CPU_SERIAL} / "
                         f"kernel; ratio = improved / original time (below 1: the improved BPB is faster).\n\n" +
                         context_label(report, full) + "\n\n" +
                         table(["P", "paper CPU", "paper BPB", "paper improved", "paper ratio", f"our {CPU_SERIAL}",
                                f"our {BPB}", f"our {BPB_N3}", f"speedup {BPB}", f"speedup {BPB_N3}", "our ratio"], body))
            others = [k for k in sorted({k[0] for k in by if k[1] == FULL_LEVEL}) if k != CPU_SERIAL]
            extra = [[p] + [cell(k, p) for k in others] + [rate(by.get((BPB, FULL_LEVEL, p))),
                                                           rate(by.get((BPB_N3, FULL_LEVEL, p)))] for p in ps]
            parts.append("All kernels at the same points (interactions/s counts directed i<-j interactions, a Newton-3 "
                         "pair counting twice, so the rates compare):\n\n" +
                         table(["P"] + others + [f"{BPB} interactions/s", f"{BPB_N3} interactions/s"], extra) + flags.text())
            parts.append(honest_speedups(by, ps, gpu))
            fig = f"fig8-{m}.png"
            fig8(report, by, ps, gpu, os.path.join(report.figdir, fig))
            parts.append(f"![Fig. 8 redrawn, {gpu}](figures/{fig})")
        for lv in sorted({k[1] for k in by if k[1] != FULL_LEVEL or not ps}, reverse=True):
            at = [r for r in rows if int(r["level"]) == lv]
            kernels = sorted({r["kernel"] for r in at})
            pl = sorted({ppb_of(r) for r in at})
            flags = Flags(report, at, label, rate_col="interactions_per_s")
            parts.append(f"**{m}**, level {lv} ({4 ** lv} boxes), ms as median [min-max]:\n\n" + context_label(report, at) +
                         "\n\n" + table(["P"] + kernels, [[p] + [ms(by.get((k, lv, p))) + flags.mark(by.get((k, lv, p)))
                                                               for k in kernels] for p in pl]) + flags.text())
    return "\n\n".join(parts) or "(no table3 results yet: run `nearfield reproduce`)"
