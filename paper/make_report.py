#!/usr/bin/env python3
"""Regenerates paper/README.md and its figures from results/ (written by `nearfield reproduce`).

Every number in the report comes from a results CSV, from the paper's reference data in
paper/reference/, or from a `nearfield` command this script runs (it holds no force law, box rule
or operation count of its own); every conclusion is computed from those numbers. Usage:
    python3 paper/make_report.py [--results results] [--paper paper] [--nearfield build/bin/nearfield]

Adding a section: write a function `my_section(report) -> str` (markdown, without its heading)
and add it to SECTIONS at the bottom; `report` gives the results (`report.rows(name)`,
`report.tables(name)`), the paper's figures, the helpers below and `report.nearfield(...)`.
Label every table with `context_label(report, rows)` and mark its unusual rows with `Flags`.
"""
import argparse
import csv
import functools
import glob
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # pragma: no cover - reported to the user
    sys.exit("make_report.py needs matplotlib: install the Debian package python3-matplotlib "
             "and run it with /usr/bin/python3")

PAPER_DEVICE = "Tesla C1060"
PAPER_CPU = "Xeon E5506, serial"
FULL_LEVEL = 7  # the paper's Table III level (16384 boxes)
HERE = os.path.dirname(os.path.abspath(__file__))


# --- the data a report is made from --------------------------------------------------------------
class Report:
    """Results CSVs, the paper's reference figures and the nearfield binary, read on demand."""

    def __init__(self, results, paper, nearfield):
        self.results, self.paper_dir, self.binary = results, paper, nearfield
        self.figdir = os.path.join(paper, "figures")
        os.makedirs(self.figdir, exist_ok=True)

    @functools.lru_cache(maxsize=None)
    def rows(self, name):
        """Every row of results/NAME/*.csv; `_file` is the file, `_table` its machine (see tables)."""
        rows = []
        for path in sorted(glob.glob(os.path.join(self.results, name, "*.csv"))):
            with open(path, newline="") as f:
                for row in csv.DictReader(f):
                    row["_file"] = os.path.basename(path)
                    rows.append(row)
        stems = sorted({os.path.splitext(r["_file"])[0] for r in rows}, key=len)
        for r in rows:
            stem = os.path.splitext(r["_file"])[0]
            # results/NAME/<device>-<part>.csv (a sweep split over runs) joins results/NAME/<device>.csv.
            r["_table"] = next((s for s in stems if stem == s or stem.startswith(s + "-")), stem)
        return rows

    def tables(self, name):
        """[(machine, rows)]: one table per machine (results file, with its split parts)."""
        groups = defaultdict(list)
        for r in self.rows(name):
            groups[r["_table"]].append(r)
        return sorted(groups.items())

    @functools.cached_property
    def paper(self):
        path = os.path.join(self.paper_dir, "reference", "shan_lei_2012_table3.csv")
        with open(path, newline="") as f:
            return {int(r["particles_per_box"]): {k: float(v) for k, v in r.items()} for r in csv.DictReader(f)}

    @functools.cached_property
    def model(self):
        """results/model/model.csv as {(dim, level, ppb): {key: value}}."""
        m = defaultdict(dict)
        path = os.path.join(self.results, "model", "model.csv")
        if os.path.exists(path):
            with open(path, newline="") as f:
                for r in csv.DictReader(f):
                    m[(int(r["dim"]), int(r["level"]), int(r["ppb"]))][r["key"]] = r["value"]
        return m

    def nearfield(self, *args):
        """Runs `nearfield ARGS` and returns its standard output."""
        out = subprocess.run([self.binary, *map(str, args)], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"make_report.py: `nearfield {' '.join(map(str, args))}` failed: {out.stderr.strip()}")
        return out.stdout

    @functools.cached_property
    def kernels(self):
        """`nearfield bench --list` as {kernel: traits} ("cpu, near-field, ..., OpenMP")."""
        lines = self.nearfield("bench", "--list").splitlines()
        header = lines[0]
        starts = [header.index(n) for n in ("kernel", "traits", "description")]
        return {line[:starts[1]].strip(): line[starts[1]:starts[2]].strip() for line in lines[1:] if line.strip()}

    def single_threaded(self, kernel):
        traits = self.kernels.get(kernel, "")
        return traits.startswith("cpu") and "OpenMP" not in traits

    def openmp(self, kernel):
        return "OpenMP" in self.kernels.get(kernel, "")


def find_nearfield(explicit):
    if explicit:
        return explicit
    root = os.path.dirname(HERE)
    for candidate in (os.environ.get("NEARFIELD"), os.path.join(root, "build", "bin", "nearfield"),
                      os.path.join(root, "build-cpu", "bin", "nearfield"), shutil.which("nearfield")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("make_report.py: no nearfield binary found (build it, or pass --nearfield PATH): the report runs "
             "`nearfield bench --list`, `forces` and `compare` for the numbers it computes")


# --- reading rows --------------------------------------------------------------------------------
def latest(rows, key):
    """One row per key (the most recent timestamp wins)."""
    best = {}
    for r in rows:
        k = key(r)
        if k not in best or r.get("timestamp", "") >= best[k].get("timestamp", ""):
            best[k] = r
    return best


def num(r, col):
    try:
        return float(r[col])
    except (KeyError, ValueError, TypeError):
        return math.nan


def ppb_of(r):
    return int(float(r["ppb"]))


def is_gpu_row(r):
    return bool(r.get("compute_capability"))


def gpu_name(rows):
    return next((r["device"] for r in rows if is_gpu_row(r)), None)


def machine(rows):
    return gpu_name(rows) or rows[0].get("host_cpu", "CPU")


# --- formatting ----------------------------------------------------------------------------------
def fmt_ms(v):
    if v is None or math.isnan(v):
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def ms(r):
    """median [min-max] in ms."""
    if r is None:
        return "-"
    return f"{fmt_ms(num(r, 'median_ms'))} [{fmt_ms(num(r, 'min_ms'))}-{fmt_ms(num(r, 'max_ms'))}]"


def fmt_x(v):
    return "-" if v is None or math.isnan(v) else (f"{v:.0f}" if v >= 100 else f"{v:.2f}" if v < 10 else f"{v:.1f}")


def rate(r):
    v = num(r, "interactions_per_s") if r else math.nan
    return "-" if math.isnan(v) else f"{v:.3g}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def join(items, last="and"):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {last} " + items[-1] if items else ""


# --- the context of a table ----------------------------------------------------------------------
def majority(values):
    c = Counter(values)
    return max(c, key=lambda v: (c[v], v)) if c else ""


def distinct(rows, col, count_missing=True):
    """'a' or 'a (3 rows), b (1 row)'; None when every row leaves the column empty. Rows that leave it
    empty are counted as "not recorded" unless `count_missing` is false."""
    c = Counter(r.get(col, "") or "" for r in rows)
    recorded = {v: n for v, n in c.items() if v}
    if not recorded:
        return None
    if len(recorded) == 1 and (not c.get("") or not count_missing):
        return next(iter(recorded))
    return ", ".join(f"{v} ({n} row{'s' if n > 1 else ''})" for v, n in sorted(recorded.items(), key=lambda x: -x[1])) + (
        f", not recorded ({c['']} rows)" if c.get("") and count_missing else "")


def context_label(report, rows):
    """One paragraph: where, how and from which source these rows were measured."""
    parts, missing = [], []

    def field(name, col, subset, unit=""):
        v = distinct(subset, col)
        if v is None:
            missing.append(name)
            return None
        return f"{name} {v}{unit}"

    gpu_rows = [r for r in rows if is_gpu_row(r)]
    if gpu_rows:
        g = [x for x in (field("compute capability", "compute_capability", gpu_rows),
                         field("SM clock", "sm_clock_mhz", gpu_rows, " MHz"),
                         field("memory clock", "mem_clock_mhz", gpu_rows, " MHz"),
                         field("GPU memory", "gpu_memory_gib", gpu_rows, " GiB"),
                         field("CUDA runtime", "cuda_runtime", gpu_rows), field("driver", "cuda_driver", gpu_rows),
                         field("CUDA compiler", "cuda_compiler", gpu_rows)) if x]
        parts.append(f"GPU {distinct(gpu_rows, 'device')}" + (f" ({', '.join(g)})" if g else ""))
    h = [x for x in (field("clock", "cpu_clock_mhz", rows, " MHz"), field("logical CPUs", "cpu_cores", rows),
                     field("memory", "memory_gib", rows, " GiB"), field("OS", "os", rows),
                     field("compiler", "compiler", rows)) if x]
    parts.append(f"host {distinct(rows, 'host_cpu') or 'not recorded'}" + (f" ({', '.join(h)})" if h else ""))
    commits = distinct(rows, "git_commit") or "not recorded"
    parts.append(f"commit {commits}" +
                 (" (**built from a working tree with uncommitted changes**: the exact source is not recoverable)"
                  if "-dirty" in commits else ""))
    by_kernel = defaultdict(list)
    for r in rows:
        by_kernel[r["kernel"]].append(r)
    reps = defaultdict(list)
    threads = defaultdict(list)
    for k, rs in sorted(by_kernel.items()):
        if any(r.get("reps") for r in rs):
            reps[majority(r.get("reps", "") for r in rs)].append(k)
        if report.single_threaded(k):
            threads["1"].append(k)
        elif report.openmp(k):
            threads[majority(r.get("threads", "") for r in rs) or "not recorded"].append(k)
    def names(kernels):  # "tree-gpu:sort, tree-gpu:keys" -> "tree-gpu:*"
        return ", ".join(sorted({k.split(":")[0] + ":*" if ":" in k else k for k in kernels}))

    if reps:
        parts.append("timed runs " + "; ".join(f"{n} ({names(ks)})" for n, ks in sorted(reps.items())))
    if threads:
        parts.append("CPU threads " + "; ".join(f"{n} ({names(ks)})" for n, ks in sorted(threads.items())))
    scale = distinct(rows, "scale")
    parts.append(f"scale {scale}" if scale else "scale not recorded")
    text = "_Measured on: " + "; ".join(parts) + "._"
    if missing:
        text += (f" _Not recorded in these rows (written before the columns existed): {', '.join(missing)}._")
    return text


class Flags:
    """Rows that differ from the rest of their kernel's rows in a table (another commit, number of
    timed runs or threads), marked in the table and explained below."""

    def __init__(self, report, rows, label, rate_col=None):
        self.label, self.notes, self.mark_of = label, [], {}
        by_kernel = defaultdict(list)
        for r in rows:
            by_kernel[r["kernel"]].append(r)
        grouped = defaultdict(list)  # difference -> row labels
        for r in rows:
            diffs = []
            same = by_kernel[r["kernel"]]
            # Kernels added later are measured by a later commit: compare a row with its own kernel's rows.
            commit = majority(x.get("git_commit", "") for x in same)
            if r.get("git_commit", "") != commit:
                diffs.append(f"commit {r.get('git_commit') or 'not recorded'} (other {r['kernel']} rows: {commit})")
            for col, what in (("reps", "timed runs"), ("threads", "threads")):
                if col == "threads" and not report.openmp(r["kernel"]):
                    continue
                usual = majority(x.get(col, "") for x in same)
                if r.get(col, "") != usual:
                    diffs.append(f"{r.get(col) or 'no'} {what} (other {r['kernel']} rows: {usual})")
            if rate_col and diffs:
                others = [num(x, rate_col) for x in same if x is not r and not math.isnan(num(x, rate_col))]
                if others:
                    diffs.append(f"{num(r, rate_col):.3g} interactions/s against {min(others):.3g}-{max(others):.3g} "
                                 f"for the other {r['kernel']} rows")
            if diffs:
                grouped["; ".join(diffs)].append(r)
        for i, (diff, rs) in enumerate(sorted(grouped.items()), 1):
            for r in rs:
                self.mark_of[id(r)] = f" ⚑{i}"
            self.notes.append(f"⚑{i} {', '.join(sorted({label(r) for r in rs}))}: {diff}.")

    def mark(self, r):
        return self.mark_of.get(id(r), "") if r is not None else ""

    def text(self):
        return ("\n\n**Rows unlike the rest of this table** (kept, but not comparable without this note):\n\n" +
                "\n".join(f"- {n}" for n in self.notes)) if self.notes else ""


# --- figures -------------------------------------------------------------------------------------
def fig8(report, by, ps, gpu, path):
    paper = report.paper
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    pp = sorted(paper)
    ax.plot(pp, [paper[p]["bpb_ms"] for p in pp], "o--", color="tab:blue", label=f"original BPB, paper ({PAPER_DEVICE})")
    ax.plot(pp, [paper[p]["bpb_n3_ms"] for p in pp], "s--", color="tab:red", label=f"improved BPB, paper ({PAPER_DEVICE})")
    best, _ = best_newton3(by, max(ps)) if ps else (None, None)
    curves = [("bpb", "tab:blue", "o", "original BPB (bpb)"), ("bpb-n3", "tab:red", "s", "improved BPB (bpb-n3)")]
    if best:
        curves.append((best, "tab:green", "D", f"best new Newton-3 kernel ({best})"))
    for k, color, marker, label in curves:
        pts = [(p, by[(k, FULL_LEVEL, p)]) for p in ps if (k, FULL_LEVEL, p) in by]
        if not pts:
            continue
        med = [num(r, "median_ms") for _, r in pts]
        err = [[m - num(r, "min_ms") for (_, r), m in zip(pts, med)], [num(r, "max_ms") - m for (_, r), m in zip(pts, med)]]
        ax.errorbar([p for p, _ in pts], med, yerr=err, fmt=marker + "-", color=color, label=f"{label}, ours ({gpu})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(f"particles per box P (level {FULL_LEVEL}, {4 ** FULL_LEVEL} boxes)")
    ax.set_ylabel("time of one evaluation (ms)")
    ax.set_title("Fig. 8 redrawn: original vs improved BPB" + (f", and {best}" if best else ""))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def sweep_figure(rows, xcol, groups, path, xlabel, title, group_label):
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    styles = {"ppt": ("tab:green", "^"), "bpb": ("tab:blue", "o"), "bpb-n3": ("tab:red", "s"),
              "cpu-omp": ("tab:gray", "v"), "cpu-omp-n3": ("tab:brown", "D")}
    dashes = ["-", "--", ":", "-."]
    for gi, g in enumerate(groups):
        for k in sorted({r["kernel"] for r in rows}):
            pts = sorted((float(r[xcol]), num(r, "median_ms")) for r in rows if r["kernel"] == k and g(r))
            if not pts:
                continue
            color, marker = styles.get(k, ("black", "x"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, linestyle=dashes[gi % 4], color=color,
                    label=f"{k} {group_label(gi)}".strip())
    ax.set_yscale("log")
    if xcol == "ppb":
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("time of one evaluation (ms)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- facts shared by several sections ------------------------------------------------------------
def table3_tables(report):
    """[(machine, by)] with by[(kernel, level, P)] = the latest float row of that machine."""
    return [(m, latest([r for r in rows if r.get("precision") == "float"],
                       lambda r: (r["kernel"], int(r["level"]), ppb_of(r))))
            for m, rows in report.tables("table3")]


def full_scale(by):
    """The P measured for both BPB kernels at the paper's level (empty: no full-scale GPU run)."""
    return sorted({k[2] for k in by if k[1] == FULL_LEVEL and k[0] == "bpb"} &
                  {k[2] for k in by if k[1] == FULL_LEVEL and k[0] == "bpb-n3"})


def time_of(by, kernel, p):
    r = by.get((kernel, FULL_LEVEL, p))
    return num(r, "median_ms") if r else math.nan


def validation_rows(report):
    return report.rows("validation") + report.rows("validation-large") + report.rows("validation-extreme")


def section_no(fn):
    """The number of the section that `fn` writes (SECTIONS, headed sections counted from 1)."""
    n = 0
    for heading, f in SECTIONS:
        n += heading is not None
        if f is fn:
            return n
    return "?"


def model_table2(report):
    """{P: {quantity: (printed, recomputed, matches)}} at 2D level 7."""
    out = {}
    for (dim, level, p), d in sorted(report.model.items()):
        if dim == 2 and level == FULL_LEVEL:
            out[p] = {q: (d[f"paper_table2.{q}.printed"], d[f"paper_table2.{q}.from_table1"],
                          d[f"paper_table2.{q}.matches"] == "yes") for q in ("computation", "register", "shared", "global")}
    return out


@functools.lru_cache(maxsize=None)
def input_rounding_effect(report, n=3000, level=3, eps="1e-4", seed=5):
    """Relative L2 change of float64 near-field forces when only the inputs are rounded to float32,
    measured with the project's commands: `forces --kernel cpu-allpairs --mask near --precision
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
                report.nearfield("forces", "--input", p, "--kernel", "cpu-allpairs", "--mask", "near", "--level", level,
                                 "--precision", "double", "--softening", eps, "--output", a, *extra)
                files.append(a)
            values = dict(line.split(": ") for line in
                          report.nearfield("compare", "--reference", files[0], "--test", files[1]).splitlines())
            out[dist] = float(values["rel_l2"])
    return out, f"{n} points in 2D, level {level}, eps = {eps}"


def sass_facts(report):
    """Instruction counts of bpb-n3 (2D float) from results/gpu-perf/sass-summary.txt."""
    path = os.path.join(report.results, "gpu-perf", "sass-summary.txt")
    if not os.path.exists(path):
        return None
    counts, fn = defaultdict(dict), None
    for line in open(path):
        if line.startswith("== "):
            fn = line.split()[1]
        elif fn and line.strip():
            parts = line.split()
            counts[fn][parts[0]] = int(parts[1])
    n3 = next((c for f, c in counts.items() if "bpb_n3_kernel" in f), None)
    bpb = next((c for f, c in counts.items() if "bpb_kernel" in f), None)
    if not n3:
        return None
    return {"cas": sum(v for k, v in n3.items() if k.startswith("ATOMS.CAS")),
            "atoms_other": sum(v for k, v in n3.items() if k.startswith("ATOMS") and not k.startswith("ATOMS.CAS")),
            "red": sum(v for k, v in n3.items() if k.startswith("RED")),
            "bpb_atoms": sum(v for k, v in (bpb or {}).items() if "ATOM" in k)}


def new_newton3(kernel):
    """The Newton-3 kernels added beside the paper's (names n3-*)."""
    return kernel.startswith("n3-")


def best_newton3(by, p, level=FULL_LEVEL):
    """(kernel, row): the fastest new Newton-3 kernel at (level, P) of a table3-like `by`."""
    cands = sorted((num(r, "median_ms"), k, id(r), r) for (k, lv, pp), r in by.items()
                   if lv == level and pp == p and new_newton3(k) and not math.isnan(num(r, "median_ms")))
    return (cands[0][1], cands[0][3]) if cands else (None, None)


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


def per_rsqrt(counts):
    """FP32 arithmetic (FFMA + FMUL + FADD) per MUFU.RSQ in a kernel's machine code: one RSQ per
    evaluated pair, so this is the arithmetic per interaction (one-sided kernels) or per pair
    (Newton-3 kernels) of the unrolled inner loops, which dominate the code."""
    rsq = counts.get("MUFU.RSQ", 0)
    fp = sum(counts.get(op, 0) for op in ("FFMA", "FMUL", "FADD"))
    return fp / rsq if rsq else math.nan


# --- sections ------------------------------------------------------------------------------------
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
        ours = {p: time_of(by, "bpb-n3", p) / time_of(by, "bpb", p) for p in ps}
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
        cpu = [p for p in ps if ("cpu-serial", FULL_LEVEL, p) in by]
        if cpu:
            sp = {p: time_of(by, "cpu-serial", p) / time_of(by, "bpb", p) for p in cpu}
            grows = all(sp[a] <= sp[b] for a, b in zip(cpu, cpu[1:]))
            paper_sp = {p: paper[p]["bpb_speedup"] for p in cpu}
            last = cpu[-1]
            status = ("**Reproduced and exceeded**" if sp[last] > paper_sp[last] else
                      "**Reproduced**" if sp[last] > 1 else "**Not reproduced**")
            lines.append(
                f"- {status} on the {gpu}: *the BPB kernel is much faster than one CPU core*. Speedup "
                f"of bpb over cpu-serial at P = {last}: {sp[last]:.0f} (paper: {paper_sp[last]:.0f}); it "
                + ("grows with P at every step, as in the paper." if grows else
                   f"does not grow monotonically with P ({', '.join(f'{sp[p]:.0f}' for p in cpu)} for P = "
                   f"{', '.join(map(str, cpu))}; see the flagged rows of section {section_no(table3)})."))
    if not lines:
        reduced = [m for m, by in table3_tables(report) if by]
        lines.append("- **Not tested**: the paper's GPU claims need a level-7 run of bpb and bpb-n3 on a GPU; "
                     + (f"results/table3 holds only CPU or reduced-scale rows ({', '.join(reduced)})." if reduced else
                        "results/table3 holds no rows yet."))
    for m, by in table3_tables(report):
        ps = sorted({k[2] for k in by if k[1] == FULL_LEVEL and k[0] == "bpb"})
        news = [p for p in ps if best_newton3(by, p)[0]]
        if not news:
            continue
        gpu = gpu_name(list(by.values()))
        big = news[-1]
        k, r = best_newton3(by, big)
        sp = {p: time_of(by, "bpb", p) / num(best_newton3(by, p)[1], "median_ms") for p in news}
        wins = [p for p in news if sp[p] >= 1]
        loses = [p for p in news if sp[p] < 1]
        lines.append(
            f"- **New here: Newton's third law that pays on the {gpu}.** The fastest of the new Newton-3 kernels at "
            f"P = {big}, `{k}`, takes {fmt_ms(num(r, 'median_ms'))} ms against bpb's {fmt_ms(time_of(by, 'bpb', big))} "
            f"ms: {sp[big]:.2f}x faster (the project's target 1.3x, its goal 1.5x). The best new kernel is at least as fast "
            f"as bpb at P = {join(map(str, wins)) or 'none'}" +
            (f" and slower at P = {join(map(str, loses))} ({join(f'{sp[p]:.2f}x' for p in loses)}; see the section on Newton's third law)."
             if loses else "."))
    lb = load_balance_verdict(report)
    if lb:
        lines.append(f"- **New here: load balance on clustered input** (section {section_no(nonuniform)}; targets: at "
                     "least ppt's speed, at least 70% of the kernel's uniform rate, within 5% of bpb on uniform boxes). "
                     + "; ".join(lb) + ".")
    t2 = model_table2(report)
    if t2:
        agree = sorted(q for q in ("computation", "register", "shared", "global") if all(v[q][2] for v in t2.values()))
        differ = sorted(q for q in ("computation", "register", "shared", "global") if not any(v[q][2] for v in t2.values()))
        lines.append(f"- **{'Reproduced' if not differ else 'Partly reproduced'}**: *Table II follows from Table I*. "
                     f"The {join(agree)} reductions agree at all {len(t2)} P; "
                     + (f"the printed {join(differ)} reduction does not (section {section_no(model)})." if differ else "all of them do."))
    val = validation_rows(report)
    if val:
        fails = [r for r in val if r["status"] != "PASS"]
        cases = sorted({(r["distribution"], r["dim"], r["level"], r["precision"]) for r in fails})
        lines.append(f"- **Correctness** (ours, not a claim of the paper): {len(val) - len(fails)} of {len(val)} "
                     f"kernel checks against the float64 ground truth pass" +
                     (f"; the {len(fails)} failures are float32 kernels at "
                      f"{join(f'{d} {dim}D level {lv}' for d, dim, lv, _ in cases)} (section {section_no(validation)})." if fails else "."))
    return "\n".join(lines)


def provenance(report):
    # The script's commit, "-dirty" when the script or the results differ from it (the report's
    # own outputs, which this run rewrites, do not count).
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=HERE).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--", os.path.abspath(__file__), report.results],
                                 capture_output=True, text=True, cwd=HERE).stdout.strip()
        if commit and changed:
            commit += "-dirty"
    except OSError:
        commit = ""
    names = sorted({os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(report.results, "*", "*.csv"))})
    commits = sorted({r.get("git_commit", "") for n in names for r in report.rows(n) if r.get("git_commit")})
    return (f"_This page is generated by `paper/make_report.py` from the CSV files in `results/` (written by "
            f"`nearfield reproduce`), the paper's published figures in `paper/reference/` and `nearfield` commands "
            f"the script runs. Do not edit it by hand. Report script at commit {commit or 'unknown'}; results from "
            f"commit(s) {', '.join(commits) or '-'}._")


def paper_brief(report):
    return f"""Shan & Lei (*A novel parallel algorithm for near-field computation in N-body problem on GPU*) compute
the near-field part of an N-body tree method on a GPU. Space is cut by a quadtree of level K into
4^K equal boxes numbered along the Z-order curve; each particle interacts directly with the particles
of its own box and of the (up to 8) boxes around it. Particles are sorted by box, `boxIdx` holds where
each box starts, and every box has a neighbor list. Their earlier *BPB* kernel (box per block) gives
each box a CUDA block and one thread per particle; the block stages its own box and then each
neighbor box in shared memory and every thread sums the forces on its particle. The *improved BPB*
uses Newton's third law: each pair is computed once, the box's own pairs triangularly and only
neighbors with a larger Z-order index (a half list), and the reaction on the other particle goes
into a shared array B with shared-memory atomics, then into global memory with atomics. Their Table
III times both on a {PAPER_DEVICE} for level {FULL_LEVEL} ({4 ** FULL_LEVEL} boxes) with {min(report.paper)} to
{max(report.paper)} particles per box; Tables I and II count computations and memory accesses; Fig. 8 plots
the two runtimes against P.

This repository implements both kernels exactly as described (`src/nearfield/bpb.cu`,
`src/nearfield/bpb_n3.cu`), the other two mappings of their earlier work (particle per thread `ppt`,
box per thread `bpt`), CPU versions, and an all-pairs ground truth, and reruns their experiments."""


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
                cpu, b, b3 = (by.get((k, FULL_LEVEL, p)) for k in ("cpu-serial", "bpb", "bpb-n3"))
                sp = lambda g: num(cpu, "median_ms") / num(g, "median_ms") if cpu and g else math.nan
                pr = paper.get(p)
                body.append([p, f"{pr['cpu_ms']:g}" if pr else "-", f"{pr['bpb_ms']:g}" if pr else "-",
                             f"{pr['bpb_n3_ms']:g}" if pr else "-", f"{pr['bpb_n3_ms'] / pr['bpb_ms']:.3f}" if pr else "-",
                             cell("cpu-serial", p), cell("bpb", p), cell("bpb-n3", p), fmt_x(sp(b)), fmt_x(sp(b3)),
                             f"{num(b3, 'median_ms') / num(b, 'median_ms'):.3f}"])
            parts.append(f"**{m}.** Level {FULL_LEVEL} ({4 ** FULL_LEVEL} boxes), N = {4 ** FULL_LEVEL} P, 2D, float32, one "
                         f"evaluation. Left: the paper ({PAPER_CPU} CPU, {PAPER_DEVICE}). Right: ours, cpu-serial on the "
                         f"host CPU and the kernels on the {gpu}; times in ms as median [min-max]; speedup = cpu-serial / "
                         f"kernel; ratio = improved / original time (below 1: the improved BPB is faster).\n\n" +
                         context_label(report, full) + "\n\n" +
                         table(["P", "paper CPU", "paper BPB", "paper improved", "paper ratio", "our cpu-serial", "our bpb",
                                "our bpb-n3", "speedup bpb", "speedup bpb-n3", "our ratio"], body))
            others = [k for k in sorted({k[0] for k in by if k[1] == FULL_LEVEL}) if k not in ("cpu-serial",)]
            extra = [[p] + [cell(k, p) for k in others] + [rate(by.get(("bpb", FULL_LEVEL, p))),
                                                           rate(by.get(("bpb-n3", FULL_LEVEL, p)))] for p in ps]
            parts.append("All kernels at the same points (interactions/s counts directed i<-j interactions, a Newton-3 "
                         "pair counting twice, so the rates compare):\n\n" +
                         table(["P"] + others + ["bpb interactions/s", "bpb-n3 interactions/s"], extra) + flags.text())
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


def newton3_hopper(report):
    """Why the paper's kernel loses on sm_90, what wins, by how much, per P; 3D and double."""
    parts = []
    for m, by in table3_tables(report):
        ps = sorted({k[2] for k in by if k[1] == FULL_LEVEL and k[0] == "bpb"})
        kernels = sorted({k[0] for k in by if k[1] == FULL_LEVEL and new_newton3(k[0])})
        if not ps or not kernels:
            continue
        rows = [r for (k, lv, _), r in by.items() if lv == FULL_LEVEL and (k in kernels or k in ("bpb", "bpb-n3"))]
        body = []
        for p in ps:
            b = time_of(by, "bpb", p)
            line = [p, ms(by.get(("bpb", FULL_LEVEL, p))), ms(by.get(("bpb-n3", FULL_LEVEL, p))),
                    fmt_x(b / time_of(by, "bpb-n3", p))]
            for k in kernels:
                line += [ms(by.get((k, FULL_LEVEL, p))), fmt_x(b / time_of(by, k, p))]
            body.append(line)
        hdr = ["P", "bpb", "bpb-n3", "speedup"] + [x for k in kernels for x in (k, "speedup")]
        best_p = {p: best_newton3(by, p) for p in ps}
        cross = [p for p in ps if best_p[p][0] and time_of(by, "bpb", p) / num(best_p[p][1], "median_ms") >= 1]
        slow = [p for p in ps if best_p[p][0] and p not in cross]
        parts.append(
            f"**{m}**, 2D float32, level {FULL_LEVEL}, `uniform-exact`: ms as median [min-max], speedup = bpb's time / "
            f"the kernel's (above 1: faster than bpb).\n\n" + context_label(report, rows) + "\n\n" + table(hdr, body) +
            (f"\n\nThe best new Newton-3 kernel is at least as fast as bpb at P = {join(map(str, cross))}"
             + (f" and slower at P = {join(map(str, slow))}" if slow else "") + ". "
             "Boxes under 32 particles are computed one particle per thread by `n3-shfl` and `n3-rotate` (their "
             "pairs in both directions, as ppt does), because a warp holding 32 R targets idles most of its lanes "
             "on them; from 32 particles on a box goes through the warp items, and at P = 32 one item per box pair "
             "is all there is, so the fixed costs of an item (loading the targets, one atomic add per particle and "
             "box pair) weigh most there." if cross else ""))
    # 3D and double precision
    for name, what in (("newton3", "2D, double precision"), ("newton3-3d", "3D, float32 and double")):
        for m, rows in report.tables(name):
            by = latest(rows, lambda r: (r["kernel"], r["dim"], int(r["level"]), ppb_of(r), r["precision"]))
            rows = list(by.values())
            kernels = [k for k in ("bpb", "bpb-n3") if any(r["kernel"] == k for r in rows)] + sorted(
                {r["kernel"] for r in rows if new_newton3(r["kernel"])})
            points = sorted({(r["dim"], int(r["level"]), ppb_of(r), r["precision"]) for r in rows})
            body = []
            for d, lv, p, prec in points:
                b = by.get(("bpb", d, lv, p, prec))
                line = [f"{d}D", lv, p, prec]
                for k in kernels:
                    r = by.get((k, d, lv, p, prec))
                    line.append(ms(r) + (f" ({fmt_x(num(b, 'median_ms') / num(r, 'median_ms'))}x)" if r and b and k != "bpb" else ""))
                body.append(line)
            parts.append(f"**{m}**, {what}: ms as median [min-max] and, in brackets, the speedup over bpb.\n\n" +
                         context_label(report, rows) + "\n\n" + table(["dim", "level", "P", "precision"] + kernels, body))
    # The instruction mix
    counts = sass_counts(report)
    find = lambda pat: next((c for f, c in counts.items() if pat in f), None)
    mix = [(label, find(pat)) for label, pat in (("bpb, per interaction", "bpb_kernelILi2Ef"),
                                                  ("bpb-n3, per pair", "bpb_n3_kernelILi2Ef"),
                                                  ("n3-shfl, per pair", "ShflAgentELi2EfLi16"),
                                                  ("n3-rotate, per pair", "RotateAgentELi2EfLi16"))]
    mix = [(label, c) for label, c in mix if c]
    if mix:
        body = [[label, f"{per_rsqrt(c):.1f}", c.get("MUFU.RSQ", 0),
                 sum(v for op, v in c.items() if op.startswith("SHFL")),
                 sum(v for op, v in c.items() if op.startswith("LDS")),
                 sum(v for op, v in c.items() if op.startswith("ATOMS")),
                 sum(v for op, v in c.items() if op.startswith("RED"))] for label, c in mix]
        text = ("The machine code (2D float32, unguarded, 16 targets per lane for the n3-* kernels; `cuobjdump -sass` on "
                "the GPU machine through `scripts/sass-summary.sh`, `results/gpu-perf/sass-summary-newton3.txt`): FP32 "
                "arithmetic instructions per `MUFU.RSQ` (one per evaluated pair), and the static counts of the other "
                "instructions that matter.\n\n" + table(["kernel", "FP32 per RSQ", "MUFU.RSQ", "SHFL", "LDS", "ATOMS",
                                                         "RED"], body))
        one = next((per_rsqrt(c) for label, c in mix if label.startswith("bpb,")), math.nan)
        best = min((per_rsqrt(c), label.split(",")[0]) for label, c in mix if label.startswith("n3-"))
        if not math.isnan(one):
            bound = 2 * (one + 1) / (best[0] + 1)
            text += (f"\n\nA pair costs bpb two interactions of {one:.0f} FP32 instructions and one RSQ each, "
                     f"{best[1]} one pair of {best[0]:.0f} and one RSQ: counting issue slots only, {bound:.2f}x is the most a "
                     f"Newton-3 kernel can gain at the same efficiency (bpb also pays one shared-memory load per "
                     f"interaction, the n3 kernels a shuffle or load per 16 pairs).")
            for m, by in table3_tables(report):
                big = max((k[2] for k in by if k[1] == FULL_LEVEL and k[0] == "bpb"), default=None)
                k, r = best_newton3(by, big) if big else (None, None)
                if k:
                    sp = time_of(by, "bpb", big) / num(r, "median_ms")
                    text += (f" Measured ({m}, P = {big}): {k} reaches {sp:.2f}x, {100 * sp / bound:.0f}% of that bound; "
                             "the rest goes to the atomic adds of targets and reactions into global memory (one per "
                             "particle and box pair), the triangular own-box items and the occupancy of a kernel that "
                             "keeps 16 targets per lane in registers.")
        parts.append(text)
    sass = sass_facts(report)
    if sass:
        parts.append(
            f"Why the paper's kernel loses here: its shared-memory float `atomicAdd`s compile to compare-and-swap loops "
            f"({sass['cas']} `ATOMS.CAS*` in bpb-n3's code), and in the neighbor phase all 32 lanes of a warp add into "
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
        pr = by.get(("ppt", dist, dim, lv, rule)) or by.get(("ppt", dist, dim, lv, ""))
        u, pu = uniform_rate(report, kernel, dim, num(r, "interactions") / (num(r, "n") * 3 ** int(dim)))
        out.append({"level": lv, "auto": bool(rule), "speed": num(pr, "median_ms") / num(r, "median_ms") if pr else None,
                    "rate": 100 * num(r, "interactions_per_s") / u if u else None, "p": pu})
    return out


def load_balance_verdict(report):
    """The issue's targets for bpb-lb, from the non-uniform runs and Table III."""
    lines = []
    for name, m, by in nonuniform_tables(report):
        inputs = [(d, dim) for d, dim in sorted({(k[1], k[2]) for k in by}) if d != "uniform"]
        pts = [(d, dim, c) for d, dim in inputs for c in against_ppt(report, by, "bpb-lb", d, dim)]
        speeds = [(c["speed"], d, dim, c["level"]) for d, dim, c in pts if c["speed"]]
        rates = [(c["rate"], d, dim, c["level"]) for d, dim, c in pts if c["rate"]]
        if not speeds:
            continue
        slow = [s for s in speeds if s[0] < 1]
        low = min(speeds)
        lines.append(f"{name} ({join(f'{d} {dim}D' for d, dim in inputs)}): bpb-lb at least as fast as ppt at "
                     f"{len(speeds) - len(slow)} of {len(speeds)} points (slowest {low[0]:.2f}x ppt's speed, {low[1]} "
                     f"{low[2]}D level {low[3]})" +
                     (f", its rate {min(rates)[0]:.0f}% to {max(rates)[0]:.0f}% of its uniform-exact rate" if rates else ""))
    for m, by in table3_tables(report):
        ps = [p for p in sorted({k[2] for k in by if k[1] == FULL_LEVEL and k[0] == "bpb"}) if ("bpb-lb", FULL_LEVEL, p) in by]
        if ps:
            worst = max((time_of(by, "bpb-lb", p) / time_of(by, "bpb", p), p) for p in ps)
            lines.append(f"on `uniform-exact` (level {FULL_LEVEL}, P = {ps[0]} to {ps[-1]}) at most "
                         f"{100 * (worst[0] - 1):.1f}% slower than bpb (P = {worst[1]})" if worst[0] > 1 else
                         f"on `uniform-exact` (level {FULL_LEVEL}) at least as fast as bpb at every P")
    return lines


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
                if d != "uniform":
                    for k in ("bpb-lb", "n3-rotate"):
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
                 "compute the giant boxes while the GPU idles. `--level auto` uses one rule for every kernel (the "
                 "occupancy at which bpb was fastest); the tables show where that is the fastest level and where a "
                 "kernel would rather go deeper or shallower.")
    return "\n\n".join(parts)


def gpu_perf(report):
    rows = report.rows("gpu-perf")
    if not rows:
        return "(no GPU build or all-pairs figures yet: scripts/gpu-perf.sh)"
    by_k = latest(rows, lambda r: (r["kernel"], r["dim"], r["level"], r["n"]))
    text = []
    tree_rows = [r for r in by_k.values() if r["kernel"].startswith("tree-")]
    configs = sorted({(r["kernel"].split(":")[0], r["dim"], r["level"], r["n"]) for r in tree_rows
                      if r["kernel"].startswith("tree-gpu")})
    if configs:
        body = []
        for prefix, dim, level, n in configs:
            get = lambda stage: by_k.get((f"{prefix}:{stage}", dim, level, n))
            tot, sort, cpu = get("total"), get("bare-sort"), by_k.get(("tree-cpu:total", dim, level, n))
            ratio = num(tot, "median_ms") / num(sort, "median_ms") if tot and sort else math.nan
            body.append([f"{dim}D", level, n, "given" if "domain-given" in prefix else "reduced on the GPU"] +
                        [fmt_ms(num(get(st), "median_ms")) for st in ("domain", "keys", "sort", "box_starts", "neighbors")] +
                        [ms(tot), fmt_ms(num(sort, "median_ms")), f"{ratio:.2f}", fmt_ms(num(cpu, "median_ms"))])
        reps = distinct([r for r in tree_rows if is_gpu_row(r)], "reps")
        text.append(f"GPU tree build (`nearfield bench --tree`, median of {reps} builds; ms). The sort is "
                    "`cub::DeviceRadixSort::SortPairs` over only the key's dim*K bits; *bare sort* is that call alone on "
                    "the same keys and indices; the CPU build (counting sort, one thread) for scale.\n\n" +
                    context_label(report, tree_rows) + "\n\n" +
                    table(["dim", "level", "N", "domain", "domain stage", "keys", "sort", "box starts", "neighbors",
                           "total", "bare sort", "total / bare sort", "CPU build"], body))
    ap = sorted((r for r in by_k.values() if r["kernel"].startswith("allpairs")), key=lambda r: (r["dim"], r["kernel"]))
    if ap:
        flags = Flags(report, ap, lambda r: f"{r['kernel']} {r['dim']}D")
        body = [[r["kernel"] + flags.mark(r), f"{r['dim']}D", r["n"], ms(r), rate(r), f"{num(r, 'gflops'):.0f}"] for r in ap]
        text.append("All-pairs kernels, float32, every pair (`--mask all`); GFLOP/s at 20 flops per 3D and 15 per 2D "
                    "interaction.\n\n" + context_label(report, ap) + "\n\n" +
                    table(["kernel", "dim", "N", "ms", "interactions/s", "GFLOP/s"], body) + flags.text())
        tiled2 = next((num(r, "interactions_per_s") for r in ap if r["kernel"] == "allpairs-tiled" and r["dim"] == "2"), None)
        for m, by in table3_tables(report):
            pts = [(p, num(by[("bpb", FULL_LEVEL, p)], "interactions_per_s")) for p in full_scale(by)]
            if tiled2 and pts and gpu_name(list(by.values())) == gpu_name(ap):
                text.append(f"The original BPB as a fraction of the 2D all-pairs rate on the same GPU (the same "
                            f"interaction and shared-memory staging, so the gap is the cost of boxes and neighbor lists): "
                            + ", ".join(f"P = {p}: {v / tiled2:.0%}" for p, v in pts) + ".")
    return "\n\n".join(text)


def model(report):
    m = report.model
    keys2 = sorted(k for k in m if k[0] == 2 and k[1] == FULL_LEVEL)
    if not keys2:
        return "(model not written yet: run `nearfield reproduce`)"
    text = [f"Per-procedure word counts of Table I, as `nearfield model --level {FULL_LEVEL} --ppb 64` computes them "
            "(2D: 3 words per particle, 2 per acceleration):\n"]
    p64 = m.get((2, FULL_LEVEL, 64)) or m[keys2[0]]
    rows = []
    for kernel, label in (("bpb", "original BPB"), ("bpb_n3", "improved BPB")):
        for kind in ("GR", "GW", "SR", "SW", "RR", "RW", "CP"):
            vals = [p64.get(f"{kernel}.{proc}.{kind}", "") for proc in ("father", "neighbor", "return")]
            if any(vals):
                rows.append([label, kind] + vals)
    text.append(table(["kernel", "count", "father box", "neighbor box", "return d_acc"], rows))
    d0 = m[keys2[0]]
    text.append(f"\nTable II as printed in the paper against the reduction recomputed from Table I (level {FULL_LEVEL}, "
                f"N = {d0['N']} at P = {keys2[0][2]}, B = {d0['B']}):\n")
    t2 = model_table2(report)
    rows = [[p, q, *(v[:2]), "yes" if v[2] else "no"] for p, d in sorted(t2.items()) for q, v in d.items()]
    text.append(table(["P", "quantity", "printed (formula = value)", "recomputed from Table I", "agrees"], rows))
    agree = sorted({r[1] for r in rows if r[4] == "yes"})
    disagree = sorted({r[1] for r in rows if r[4] == "no"})

    def quadratic(q):
        """reduction(P) = a P^2 + b P, fitted exactly through the model at the two smallest P."""
        (p1, r1), (p2, r2) = [(k[2], -float(m[k][f"table2.{q}"])) for k in keys2[:2]]
        a = (r2 / p2 - r1 / p1) / (p2 - p1)
        return a, r1 / p1 - a * p1

    if "shared" in disagree:
        a, b = quadratic("shared")
        ra, rb = quadratic("register")
        printed = d0["paper_table2.shared.printed"].split(" = ")[0]
        positive = [k[2] for k in keys2 if -float(m[k]["table2.shared"]) > 0]
        text.append(f"\nTable I yields the printed reductions of {join(agree)} at every P; it does not yield the "
                    f"printed {join(disagree)} value. For shared memory, Table I gives a reduction of "
                    f"P({a:.0f}P - {-b:.0f}) words at level {FULL_LEVEL}, while the paper prints {printed}, which also "
                    f"differs from its own symbolic row -N(P-1) - BP^2 (= P({ra:.0f}P - {-rb:.0f})). The model predicts "
                    f"fewer shared-memory accesses for the improved kernel at "
                    f"{'every P listed' if len(positive) == len(keys2) else 'P = ' + join(map(str, positive))}.")
    k3 = sorted(k for k in m if k[0] == 3)
    if k3:
        rows = [[k[2], m[k]["N"], m[k]["B"], m[k]["cp_bpb"], m[k]["cp_bpb_n3"], m[k]["table2.shared"], m[k]["table2.global"]]
                for k in k3]
        text.append(f"\nThe same model in 3D (level {k3[0][1]}):\n")
        text.append(table(["P", "N", "B", "cp bpb", "cp bpb-n3", "shared change", "global change"], rows))
    return "\n".join(text)


def best_depths(report):
    """[(machine, kernel, best level, levels, N, mean P by level)] from results/depth."""
    out = []
    for m, rows in report.tables("depth"):
        by = latest(rows, lambda r: (r["kernel"], int(r["level"]), r["n"]))
        for k in sorted({r["kernel"] for r in by.values()}):
            pts = sorted((num(r, "median_ms"), int(r["level"]), r["n"], num(r, "ppb")) for (kk, _, _), r in by.items() if kk == k)
            if pts:
                out.append((m, k, pts[0][1], sorted(p[1] for p in pts), pts[0][2], {p[1]: p[3] for p in pts}))
    return out


def depth(report):
    parts = []
    for m, rows in report.tables("depth"):
        by = latest(rows, lambda r: (r["kernel"], int(r["level"]), r["n"]))
        rows = list(by.values())
        flags = Flags(report, rows, lambda r: f"{r['kernel']}, level {r['level']}, N = {r['n']}", "interactions_per_s")
        for n in sorted({r["n"] for r in rows}, key=int):
            at = [r for r in rows if r["n"] == n]
            kernels = sorted({r["kernel"] for r in at})
            levels = sorted({int(r["level"]) for r in at})
            body = [[lv, next((r["ppb"] for r in at if int(r["level"]) == lv), "-")] +
                    [ms(by.get((k, lv, n))) + flags.mark(by.get((k, lv, n))) for k in kernels] for lv in levels]
            best = [f"{k}: level {lv} ({fmt_ms(num(by[(k, lv, n)], 'median_ms'))} ms)"
                    for mm, k, lv, _, nn, _ in best_depths(report) if mm == m and nn == n]
            dims = distinct(at, "dim")
            fig = f"depth-{m}.png"
            sweep_figure(at, "level", [lambda r: True], os.path.join(report.figdir, fig), "tree level K",
                         f"tree depth at fixed N = {n} ({dims}D), {machine(at)}", lambda gi: "")
            parts.append(f"**{m}**: N = {n} particles, {distinct(at, 'distribution')} in {dims}D, "
                         f"{distinct(at, 'precision')}; mean P = N / (boxes at the level). Times in ms, median "
                         f"[min-max].\n\n" + context_label(report, at) + "\n\n" +
                         table(["level", "mean P"] + kernels, body) + "\n\nFastest level per kernel: " + "; ".join(best) +
                         f".\n\n![depth sweep](figures/{fig})")
        parts[-1] += flags.text()
    return "\n\n".join(parts) or "(no depth results yet)"


def ppb(report):
    parts = []
    for m, rows in report.tables("ppb"):
        by = latest(rows, lambda r: (r["kernel"], int(r["level"]), ppb_of(r)))
        rows = list(by.values())
        flags = Flags(report, rows, lambda r: f"{r['kernel']}, level {r['level']}, P = {ppb_of(r)}", "interactions_per_s")
        levels = sorted({int(r["level"]) for r in rows})
        fig = f"ppb-{m}.png"
        sweep_figure(rows, "ppb", [lambda r, lv=lv: int(r["level"]) == lv for lv in levels], os.path.join(report.figdir, fig),
                     "particles per box P", f"particles per box at several depths, {machine(rows)}",
                     lambda gi: f"L{levels[gi]}")
        kernels = sorted({r["kernel"] for r in rows})
        body = [[lv, p] + [rate(by.get((k, lv, p))) + flags.mark(by.get((k, lv, p))) for k in kernels]
                for lv in levels for p in sorted({ppb_of(r) for r in rows if int(r["level"]) == lv})]
        parts.append(f"**{m}**: interactions per second (directed; Newton-3 pairs count twice) for "
                     f"{distinct(rows, 'distribution')} inputs in {distinct(rows, 'dim')}D:\n\n" +
                     context_label(report, rows) + "\n\n" + table(["level", "P"] + kernels, body) + flags.text() +
                     f"\n\n![particles per box](figures/{fig})")
    return "\n\n".join(parts) or "(no particles-per-box results yet)"


def validation(report):
    groups = defaultdict(list)
    for r in validation_rows(report):
        groups[r["_table"]].append(r)
    if not groups:
        return "(no validation results yet)"
    texts = []
    for m, rows in sorted(groups.items()):
        rows = list(latest(rows, lambda r: (r["kernel"], r["distribution"], r["dim"], r["level"], r["n"],
                                            r["precision"])).values())
        case = lambda r: (r["distribution"], int(r["dim"]), int(r["level"]), int(r["n"]), r["precision"])
        name = lambda c: f"{c[0]} {c[1]}D level {c[2]} N = {c[3]} {c[4]}"
        flags = Flags(report, rows, lambda r: name(case(r)))
        by_case = defaultdict(list)
        for r in rows:
            by_case[case(r)].append(r)
        body = []
        for c, rs in sorted(by_case.items()):
            worst = max(rs, key=lambda r: num(r, "rel_l2") if not math.isnan(num(r, "rel_l2")) else math.inf)
            bad = sorted(r["kernel"] for r in rs if r["status"] != "PASS")
            mark = "".join(sorted({flags.mark(r) for r in rs}))
            body.append([c[0], f"{c[1]}D", c[2], c[3], c[4], len(rs), f"{num(worst, 'rel_l2'):.2e} ({worst['kernel']})",
                         f"{max(num(r, 'max_rel') for r in rs):.2e}", f"{max(num(r, 'momentum') for r in rs):.1e}",
                         worst["tolerance"], ("PASS" if not bad else "FAIL: " + ", ".join(bad)) + mark])
        text = (f"**{m}**: every kernel against the float64 near-field ground truth, evaluated on exactly the inputs it "
                "saw (float32-rounded for float kernels). One row per input and precision, worst case over its "
                "kernels:\n\n" + context_label(report, rows) + "\n\n" +
                table(["distribution", "dim", "level", "N", "precision", "kernels", "worst rel. L2 (kernel)",
                       "worst max rel.", "worst momentum residual", "tolerance", "status"], body) + flags.text())
        per_kernel = defaultdict(list)
        for r in rows:
            per_kernel[(r["kernel"], r["precision"])].append(r)
        body = []
        for (k, prec), rs in sorted(per_kernel.items()):
            worst = max(rs, key=lambda r: num(r, "rel_l2") if not math.isnan(num(r, "rel_l2")) else math.inf)
            fails = [r for r in rs if r["status"] != "PASS"]
            body.append([k, prec, len(rs), f"{num(worst, 'rel_l2'):.2e} ({worst['distribution']} {worst['dim']}D)",
                         "PASS" if not fails else f"FAIL ({len(fails)} of {len(rs)})"])
        text += "\n\nThe same checks by kernel:\n\n" + table(["kernel", "precision", "inputs", "worst rel. L2 (input)",
                                                               "status"], body)
        text += "\n\nReferences used: " + "; ".join(sorted({r["reference"] for r in rows})) + "."
        text += failure_notes(rows, case, name)
        texts.append(text)
    return "\n\n".join(texts)


def failure_notes(rows, case, name):
    """What the data say about each failing input: which kernels fail there, and whether kernels that
    share no code with the tree kernels (all-pairs) and the float64 ones fail too."""
    text = ""
    at_case = defaultdict(list)
    for r in rows:
        at_case[case(r)].append(r)
    for c in sorted({case(r) for r in rows if r["status"] != "PASS"}):
        at = at_case[c]
        bad = sorted(r["kernel"] for r in at if r["status"] != "PASS")
        ok = sorted(r["kernel"] for r in at if r["status"] == "PASS")
        errs = [num(r, "rel_l2") for r in at if r["status"] != "PASS"]
        text += (f"\n\n**FAIL at {name(c)}:** {', '.join(bad)} (relative L2 {min(errs):.1e} to {max(errs):.1e} against "
                 f"the {num(at[0], 'tolerance'):.0e} tolerance).")
        allpairs_bad = [k for k in bad if "allpairs" in k]
        tree_bad = [k for k in bad if "allpairs" not in k]
        if allpairs_bad and tree_bad:
            text += (f" All-pairs kernels ({', '.join(allpairs_bad)}), which share no code with the tree kernels but "
                     f"the interaction, fail at the same input with errors of the same size: the failure follows the "
                     f"float32 sums, not a kernel.")
        double = sorted({(r["distribution"], r["dim"], r["level"], r["n"]) for r in rows if r["precision"] == "double"
                         and r["status"] == "PASS"})
        if (c[0], str(c[1]), str(c[2]), str(c[3])) in double:
            text += " The float64 kernels pass the same input."
        if ok:
            text += f" Passing here: {', '.join(ok)}."
    return text


def discussion(report):
    paper = report.paper
    lines = []
    for m, by in table3_tables(report):
        ps = [p for p in full_scale(by) if p in paper]
        if not ps:
            continue
        gpu = gpu_name(list(by.values()))
        big, small = ps[-1], ps[0]
        b, b3 = time_of(by, "bpb", big), time_of(by, "bpb-n3", big)
        pr = paper[big]["bpb_n3_ms"] / paper[big]["bpb_ms"]
        lines.append(f"- **The headline result ({gpu}).** On the {PAPER_DEVICE} the improved BPB took {pr:.2f} of the "
                     f"original's time at P = {big} ({paper[big]['bpb_n3_ms']:g} vs {paper[big]['bpb_ms']:g} ms). On the "
                     f"{gpu} it takes {b3 / b:.2f} of it ({fmt_ms(b3)} vs {fmt_ms(b)} ms).")
        mid = [p for p in ps if p <= 4 * small]
        pairs = lambda p: float(report.model.get((2, FULL_LEVEL, p), {}).get("cp_bpb", "nan"))
        if len(mid) > 1 and not math.isnan(pairs(mid[-1])):
            grow_pairs = pairs(mid[-1]) / pairs(small)
            grow_paper = paper[mid[-1]]["bpb_ms"] / paper[small]["bpb_ms"]
            grow_ours = time_of(by, "bpb", mid[-1]) / time_of(by, "bpb", small)
            lines.append(
                f"- **Absolute times and fixed costs.** The original BPB at P = {big} runs in {fmt_ms(b)} ms against the "
                f"paper's {paper[big]['bpb_ms']:g} ms ({paper[big]['bpb_ms'] / b:.0f} times faster). From P = {small} to "
                f"{mid[-1]} the pair count grows {grow_pairs:.1f}x (`nearfield model`), the paper's BPB time "
                f"{grow_paper:.2f}x ({paper[small]['bpb_ms']:g} to {paper[mid[-1]]['bpb_ms']:g} ms) and ours "
                f"{grow_ours:.2f}x ({fmt_ms(time_of(by, 'bpb', small))} to {fmt_ms(time_of(by, 'bpb', mid[-1]))} ms): "
                + ("at small P both are dominated by costs that do not grow with the pairs."
                   if grow_paper < grow_pairs / 4 and grow_ours < grow_pairs / 4 else
                   "the times follow the pair count only loosely at small P."))
        if ("cpu-serial", FULL_LEVEL, big) in by:
            c = time_of(by, "cpu-serial", big)
            lines.append(f"- **Speedups over the serial CPU.** cpu-serial takes {fmt_ms(c)} ms at P = {big} (the paper's "
                         f"CPU: {paper[big]['cpu_ms']:g} ms), so the speedups are {c / b:.0f} (bpb) and {c / b3:.0f} "
                         f"(bpb-n3) against the paper's {paper[big]['bpb_speedup']:g} and "
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
                    f"{num(by[('bpb-n3', FULL_LEVEL, big)], 'interactions_per_s'):.2g} interactions/s against the "
                    f"original's {num(by[('bpb', FULL_LEVEL, big)], 'interactions_per_s'):.2g}.")
        if any(r["_file"].endswith("-cpu-serial.csv") for r in report.rows("table3") if r["_table"] == m):
            lines.append("- **How cpu-serial was timed.** Its rows come from a separate file of the same machine "
                         "(`results/table3/*-cpu-serial.csv`): to fit a short GPU lease, the single-threaded column ran "
                         "on its own core while the GPU experiments ran (their host threads mostly wait); a quieter "
                         "machine may time it slightly faster. Section 3 flags its rows that differ from the rest.")
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
        if k == "bpb" and lv < levels[-1]:
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
                 f" ({sample}; `nearfield forces --kernel cpu-allpairs --mask near --precision double` with and without "
                 f"`--round-inputs`, then `nearfield compare`), " +
                 (f"{min(rounding.values()) / 1e-5:.0f} to {max(rounding.values()) / 1e-5:.0f} times the float32 "
                  f"tolerance of 1e-5: a property of float32 inputs, not of any kernel. "
                  if min(rounding.values()) > 1e-5 else "a property of float32 inputs, not of any kernel. ") +
                 (f"{len(val) - len(fails)} of {len(val)} kernel checks pass; section {section_no(validation)} shows the {len(fails)} failing "
                  f"ones and what the data say about them." if fails else f"All {len(val)} kernel checks pass."
                  if val else ""))
    return "\n".join(lines)


# --- simulations (nearfield simulate; scripts/simulate-gpu.sh) ----------------------------------------
ENERGY_TARGET = 5e-5  # the energy check's bound on |dE/E| (issue 10)
BEYOND_FORCES_TARGET = 0.10  # issue 10: everything beyond the force evaluation under 10% of a step


def read_energy(path):
    """energy.csv: its `#` lines and its rows (dicts)."""
    with open(path) as f:
        lines = f.read().splitlines()
    return ([l[2:] for l in lines if l.startswith("#")],
            list(csv.DictReader([l for l in lines if l and not l.startswith("#")])))


def read_ini(path):
    out = {}
    with open(path) as f:
        for line in f:
            if "=" in line and not line.lstrip().startswith("#"):
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip()
    return out


def simulation_runs(report, name):
    """[(machine, run, run.ini, energy comments, energy rows, frames)] from results/NAME/<machine>/<run>/."""
    runs = []
    for ini in sorted(glob.glob(os.path.join(report.results, name, "*", "*", "run.ini"))):
        d = os.path.dirname(ini)
        energy = os.path.join(d, "energy.csv")
        if not os.path.exists(energy):
            continue
        comments, rows = read_energy(energy)
        runs.append((os.path.basename(os.path.dirname(d)), os.path.basename(d), read_ini(ini), comments, rows,
                     sorted(glob.glob(os.path.join(d, "frame_*.png")))))
    return runs


def drift(rows):
    """(final, largest) |rel_energy_error| of energy rows."""
    errs = [abs(num(r, "rel_energy_error")) for r in rows]
    return (errs[-1], max(errs)) if errs else (math.nan, math.nan)


def frame_strip(frames, dt, path, title, count=6):
    """A row of `count` frames spread over the run, each labelled with its time."""
    import matplotlib.image as mpimg
    picks = [frames[round(i * (len(frames) - 1) / (count - 1))] for i in range(count)] if len(frames) > count else frames
    fig, axes = plt.subplots(1, len(picks), figsize=(2.1 * len(picks), 2.4))
    for ax, f in zip(axes if len(picks) > 1 else [axes], picks):
        step = int(os.path.basename(f)[6:12])
        ax.imshow(mpimg.imread(f))
        ax.set_axis_off()
        ax.set_title(f"t = {step * dt:g}", fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(fig)


def simulation(report):
    parts, missing = [], []
    how = "`scripts/simulate-gpu.sh OUTDIR build-device/bin` on a GPU machine, then copy OUTDIR/results into results/"
    parts.append("`nearfield simulate` integrates with leapfrog kick-drift-kick (velocity Verlet) in float64, forces from "
                 "any registered kernel; GPU kernels keep the particles on the GPU and rebuild the tree there every "
                 "step. All-pairs kernels give the exact softened dynamics; a near-field kernel only the near-field "
                 "part of the force, and its energy.csv says so.")

    # The energy check.
    ec = simulation_runs(report, "energy-check")
    if ec:
        body = []
        for m, run, ini, _, rows, _ in ec:
            final, worst = drift(rows)
            body.append([m, ini.get("kernel", run), ini.get("traits", "-").split(",")[0], ini.get("precision", "-"),
                         os.path.basename(ini.get("input", "-")), ini.get("n", "-"), ini.get("softening", "-"),
                         ini.get("dt", "-"), ini.get("steps", "-"), f"{final:.2e}", f"{worst:.2e}",
                         "yes" if worst <= ENERGY_TARGET else "**no**"])
        parts.append(f"**Energy check** (issue 10: a Plummer sphere, N = 1024, eps = 0.05, dt = 1/128, 128 steps, "
                     f"|dE/E| within {ENERGY_TARGET:g}; the runs below say what they used). |dE/E| = |E - E0| / |E0| "
                     "from energy.csv, whose potential is over every pair:\n\n" +
                     table(["results", "kernel", "device", "precision", "input", "N", "eps", "dt", "steps",
                            "\\|dE/E\\| at the end", "largest \\|dE/E\\|", f"within {ENERGY_TARGET:g}"], body))
    else:
        missing.append("results/energy-check/ (the energy check on the GPU)")

    # The cost of a step.
    for m, rows in report.tables("simulate"):
        by = latest(rows, lambda r: (r["kernel"], r["n"], r["level"]))
        rs = sorted(by.values(), key=lambda r: (r["kernel"], int(r["n"]), r["level"]))
        body, met, missed = [], [], []
        for r in rs:
            frac, frac_d = num(r, "beyond_forces_fraction"), num(r, "beyond_forces_with_diagnostics_fraction")
            label = f"{r['kernel']} N = {r['n']}" + (f" P = {fmt_x(num(r, 'ppb'))}" if r.get("ppb") else "")
            (met if frac < BEYOND_FORCES_TARGET else missed).append(label)
            body.append([r["kernel"], r["n"], r.get("level") or "-", fmt_x(num(r, "ppb")) if r.get("ppb") else "-",
                         r["steps"], f"{fmt_ms(num(r, 'step_median_ms'))} [{fmt_ms(num(r, 'step_min_ms'))}-"
                                     f"{fmt_ms(num(r, 'step_max_ms'))}]",
                         fmt_ms(num(r, "forces_median_ms")),
                         fmt_ms(num(r, "tree_median_ms") + num(r, "plan_median_ms")), fmt_ms(num(r, "transfer_median_ms")),
                         fmt_ms(num(r, "integrate_median_ms")), fmt_ms(num(r, "other_median_ms")),
                         f"{fmt_ms(num(r, 'diagnostics_median_ms'))} ({r.get('diagnostics_count', '-')})",
                         f"{frac:.1%}", f"{frac_d:.1%}"])
        verdict_text = (f"Everything beyond the force evaluation stays under {BEYOND_FORCES_TARGET:.0%} of the step for "
                        f"{join(met) or 'none of the runs'}" +
                        (f"; it does not for {join(missed)}." if missed else "."))
        parts.append(f"**Cost of a step** on {machine(rs)} (`simulate --timing`; {distinct(rs, 'precision')} forces, "
                     f"float64 integration; inputs: {distinct(rs, 'input')}; ms, median [min-max] over the steps; the "
                     "parts are medians of their own). "
                     "*Tree + plan*: the GPU tree rebuilt from the moved particles and the kernel's work lists; *in/out*: "
                     "for near-field kernels the particles' state (positions, masses, velocities, input rows) moved "
                     "into the new tree's order together with the kernel's bodies, and the accelerations widened to "
                     "float64 in that order (the state stays in tree order between snapshot steps); for all-pairs "
                     "kernels the bodies packed and the accelerations widened; "
                     "*other*: the rest of the step's wall time (launches, synchronisation). Diagnostics (potential, "
                     "kinetic energy, momentum, with the copy to the host) run only at snapshot steps: their time is "
                     "per evaluation (how many), and the last column spreads them over the steps of the run.\n\n" +
                     context_label(report, rs) + "\n\n" +
                     table(["kernel", "N", "level", "P", "steps", "step", "forces", "tree + plan", "in/out",
                            "integration", "other", "diagnostics (count)", "beyond forces",
                            "beyond forces, with diagnostics"], body) + "\n\n" + verdict_text)
    if not report.rows("simulate"):
        missing.append("results/simulate/ (the cost of a step)")

    # The galaxy collision.
    col = simulation_runs(report, "collision")
    timing = {(r["_table"], r["kernel"], r["subsample"]): r for r in report.rows("collision")}
    by_machine = defaultdict(list)
    for run in col:
        by_machine[run[0]].append(run)
    for m, runs in sorted(by_machine.items()):
        text = []
        exact = next((r for r in runs if r[2].get("forces") == "all-pairs"), None)
        if exact and exact[5]:
            fig = f"collision-{m}.png"
            frame_strip(exact[5], float(exact[2]["dt"]), os.path.join(report.figdir, fig),
                        f"{exact[2]['kernel']}, {exact[2]['n']} particles, {exact[2]['precision']}, {m}")
            text.append(f"![galaxy collision, {exact[2]['kernel']}](figures/{fig})")
        body = []
        for _, run, ini, _, rows, _ in runs:
            final, worst = drift(rows)
            t = timing.get((m, ini.get("kernel"), ini.get("subsample", "1")))
            ferr = [num(r, "force_rel_error") for r in rows if r.get("force_rel_error")]
            body.append([run, ini.get("forces_described", "-").split(":")[0], ini.get("precision", "-"),
                         ini.get("level", "-"), f"{final:.2e}", f"{worst:.2e}",
                         f"{statistics_median(ferr):.3f}" if ferr else "-",
                         fmt_ms(num(t, "step_median_ms")) if t else "-", fmt_ms(num(t, "forces_median_ms")) if t else "-"])
        if exact:
            final, worst = drift(exact[4])
            where = "GPU" if exact[2].get("traits", "").startswith("gpu") else "CPU"
            text.append(f"Energy drift of the {where} {exact[2].get('precision')} all-pairs run ({exact[2]['kernel']}, "
                        f"{exact[2]['n']} particles, {exact[2]['steps']} steps "
                        f"of dt = {exact[2]['dt']}, eps = {exact[2]['softening']}): |dE/E| = {final:.2e} at the end, at "
                        f"most {worst:.2e}.")
        sub = [r for r in runs if r[2].get("forces") == "subsampled"]
        if exact and sub:
            for _, run, ini, _, rows, _ in sub:
                ferr = [num(r, "force_rel_error") for r in rows if r.get("force_rel_error")]
                tx, ts = timing.get((m, exact[2]["kernel"], "1")), timing.get((m, ini["kernel"], ini["subsample"]))
                speed = (f", {num(tx, 'forces_median_ms') / num(ts, 'forces_median_ms'):.1f}x faster forces"
                         if tx and ts else "")
                text.append(f"Sub-sampling every {ini['subsample']}th source (001's approximation): relative L2 force "
                            f"error against every source {min(ferr):.3f} to {max(ferr):.3f} over the snapshot steps, "
                            f"largest |dE/E| {drift(rows)[1]:.2e} against {drift(exact[4])[1]:.2e} for the exact "
                            f"run{speed}.")
        near = [r for r in runs if r[2].get("forces") == "near-field"]
        if near:
            text.append("The near-field run is there for its cost only: it drops every pair beyond the adjacent "
                        "boxes, so the two galaxies do not attract each other, and its energy (over near pairs only, "
                        "which change as particles cross box faces) is not conserved.")
        text.append(table(["run", "forces", "precision", "level", "\\|dE/E\\| at the end", "largest \\|dE/E\\|",
                           "force error (median)", "step ms (median)", "forces ms (median)"], body))
        trows = [r for r in report.rows("collision") if r["_table"] == m]
        if trows:
            text.append(context_label(report, trows))
        parts.append(f"**Galaxy collision** (`generate --dist galaxies`, then `simulate` with frames every "
                     f"{runs[0][2].get('render_every', '?')} steps, window {runs[0][2].get('render_window', '-')}):\n\n" +
                     "\n\n".join(text))
    if not col:
        missing.append("results/collision/ (the galaxy collision)")
    if missing:
        parts.append("**Not measured yet:** " + join(missing) + ". To produce them: " + how + ".")
    return "\n\n".join(parts)


def statistics_median(values):
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2 if v else math.nan


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


# The report, in order: (heading, function). A heading of None puts the text before the numbered
# sections without a heading of its own.
SECTIONS = [
    (None, verdict),
    (None, provenance),
    ("The paper in brief", paper_brief),
    ("Setup", setup),
    ("Table III, original and ours", table3),
    ("Newton's third law on Hopper", newton3_hopper),
    ("The GPU tree build and the all-pairs ground truth", gpu_perf),
    ("Tables I and II recomputed", model),
    ("Tree depth", depth),
    ("Particles per box at several depths", ppb),
    ("Validation against all-pairs", validation),
    ("Non-uniform inputs: load balance and the automatic level", nonuniform),
    ("Simulation: energy, cost of a step, a galaxy collision", simulation),
    ("Several GPUs", multigpu),
    ("What reproduces, what does not, and why", discussion),
]
TITLE = "Reproducing Shan & Lei: near-field BPB and its Newton's-third-law improvement on the GPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default="results")
    ap.add_argument("--paper", default="paper")
    ap.add_argument("--nearfield", help="the nearfield binary (default: build/bin/nearfield, build-cpu/bin/nearfield, "
                                        "$NEARFIELD, then PATH)")
    args = ap.parse_args()
    report = Report(args.results, args.paper, find_nearfield(args.nearfield))
    for old in glob.glob(os.path.join(report.figdir, "*.png")):
        os.remove(old)  # every figure is redrawn; a machine gone from results/ takes its figures along
    parts, number = [f"# {TITLE}"], 0
    for heading, section in SECTIONS:
        if heading is None:
            parts.append(section(report))
        else:
            number += 1
            parts.append(f"## {number}. {heading}\n\n{section(report)}")
    path = os.path.join(args.paper, "README.md")
    with open(path, "w") as f:
        f.write("\n\n".join(parts) + "\n")
    print(f"wrote {path} and figures in {report.figdir}")


if __name__ == "__main__":
    main()
