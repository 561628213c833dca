"""Section: the machines the results come from, and how every kernel is timed."""
from collections import defaultdict

from .common import distinct, is_gpu_row, table


def setup(report):
    rows = [r for n in ("table3", "depth", "ppb", "validation", "validation-large", "gpu-perf") for r in report.rows(n)]
    if not rows:
        return "(no results yet: run `nearfield reproduce`)"
    machines = defaultdict(list)
    for r in rows:
        machines[r["_table"]].append(r)
    body = []
    for name, rs in sorted(machines.items()):
        def v(col, subset=rs, unit=""):
            d = distinct(subset, col, count_missing=False)
            return f"{d}{unit}" if d else "not recorded"
        g = [r for r in rs if is_gpu_row(r)]
        body.append([name, v("host_cpu"), v("cpu_clock_mhz", unit=" MHz"), v("cpu_cores"), v("memory_gib", unit=" GiB"),
                     v("os"), v("compiler"),
                     f"{v('device', g)}, compute capability {v('compute_capability', g)}, max SM/memory clock "
                     f"{v('sm_clock_mhz', g)}/{v('mem_clock_mhz', g)} MHz, memory {v('gpu_memory_gib', g, ' GiB')}"
                     if g else "none used",
                     f"runtime {v('cuda_runtime', g)}, driver {v('cuda_driver', g)}, compiler {v('cuda_compiler', g)}"
                     if g else "-", len(rs)])
    return (table(["results", "host CPU", "clock", "logical CPUs", "memory", "OS", "compiler", "GPU", "CUDA", "rows"], body)
            + "\n\nOne line per machine (`results/*/<machine>.csv`); \"not recorded\": its rows were written before these "
            "columns existed. Every table below names the context of its own rows.\n\n"
            "Method: softened gravity with G = 1 and eps = 1e-4 (the paper does not state its softening); one force "
            "evaluation timed with CUDA events around the kernel launch (for `bpb-n3` the zeroing of the output, which "
            "its atomics need, is inside the timed region), after warm-up runs, repeated, reported as median "
            "[min-max]; the tree is built beforehand and timed separately. CPU kernels are timed with the steady "
            "clock. Inputs are `uniform-exact`: exactly P random points in every box, rows shuffled. Float32 "
            "arithmetic as in the paper.")
