"""Facts several sections draw on: Table III per machine, the best new Newton-3 kernel, the
validation rows, Table II recomputed and the atomics in the machine code."""
import math
import os
from collections import defaultdict

from .common import FULL_LEVEL, latest, num, ppb_of
from .kernels import BPB, BPB_N3, SASS_SYMBOLS


def table3_tables(report):
    """[(machine, by)] with by[(kernel, level, P)] = the latest float row of that machine."""
    return [(m, latest([r for r in rows if r.get("precision") == "float"],
                       lambda r: (r["kernel"], int(r["level"]), ppb_of(r))))
            for m, rows in report.tables("table3")]


def full_scale(by):
    """The P measured for both BPB kernels at the paper's level (empty: no full-scale GPU run)."""
    return sorted({k[2] for k in by if k[1] == FULL_LEVEL and k[0] == BPB} &
                  {k[2] for k in by if k[1] == FULL_LEVEL and k[0] == BPB_N3})


def bpb_points(by):
    """The P measured for the original BPB at the paper's level."""
    return sorted({k[2] for k in by if k[1] == FULL_LEVEL and k[0] == BPB})


def time_of(by, kernel, p):
    r = by.get((kernel, FULL_LEVEL, p))
    return num(r, "median_ms") if r else math.nan


def best_newton3(report, by, p, level=FULL_LEVEL):
    """(kernel, row): the fastest new Newton-3 kernel at (level, P) of a table3-like `by`."""
    new = report.kernels.new_newton3
    cands = sorted((num(r, "median_ms"), k, id(r), r) for (k, lv, pp), r in by.items()
                   if lv == level and pp == p and k in new and not math.isnan(num(r, "median_ms")))
    return (cands[0][1], cands[0][3]) if cands else (None, None)


def validation_rows(report):
    return report.rows("validation") + report.rows("validation-large") + report.rows("validation-extreme")


def model_table2(report):
    """{P: {quantity: (printed, recomputed, matches)}} at 2D level 7."""
    out = {}
    for (dim, level, p), d in sorted(report.model.items()):
        if dim == 2 and level == FULL_LEVEL:
            out[p] = {q: (d[f"paper_table2.{q}.printed"], d[f"paper_table2.{q}.from_table1"],
                          d[f"paper_table2.{q}.matches"] == "yes") for q in ("computation", "register", "shared", "global")}
    return out


def sass_counts(report, name="sass-summary-newton3.txt"):
    """{function: {opcode: count}} from results/gpu-perf/NAME (scripts/sass-summary.sh output)."""
    path = os.path.join(report.results, "gpu-perf", name)
    if not os.path.exists(path):
        return {}
    counts, fn = defaultdict(dict), None
    for line in open(path):
        if line.startswith("== "):
            fn = line.split()[1]
        elif fn and line.strip() and not line.startswith("#"):
            parts = line.split()
            counts[fn][parts[0]] = int(parts[1])
    return counts


def sass_of(counts, kernel):
    """The opcode counts of a kernel's function (SASS_SYMBOLS), or None."""
    symbol = SASS_SYMBOLS.get(kernel)
    return next((c for f, c in counts.items() if symbol and symbol in f), None)


def sass_facts(report):
    """The atomics of bpb-n3 (2D float) against bpb's, from results/gpu-perf/sass-summary.txt."""
    counts = sass_counts(report, "sass-summary.txt")
    n3, bpb = sass_of(counts, BPB_N3), sass_of(counts, BPB)
    if not n3:
        return None
    return {"cas": sum(v for k, v in n3.items() if k.startswith("ATOMS.CAS")),
            "atoms_other": sum(v for k, v in n3.items() if k.startswith("ATOMS") and not k.startswith("ATOMS.CAS")),
            "red": sum(v for k, v in n3.items() if k.startswith("RED")),
            "bpb_atoms": sum(v for k, v in (bpb or {}).items() if "ATOM" in k)}
