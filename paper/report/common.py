"""What every section shares: the results and the nearfield binary (`Report`), reading rows,
formatting numbers and tables, and the context label and flags every table carries."""
import csv
import functools
import glob
import math
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict

from .kernels import Kernels

PAPER_DEVICE = "Tesla C1060"
PAPER_CPU = "Xeon E5506, serial"
FULL_LEVEL = 7  # the paper's Table III level (16384 boxes)
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # paper/, where make_report.py lives


# --- the data a report is made from --------------------------------------------------------------
class Report:
    """Results CSVs, the paper's reference figures and the nearfield binary, read on demand."""

    def __init__(self, results, paper, nearfield, sections=()):
        self.results, self.paper_dir, self.binary = results, paper, nearfield
        self.sections = sections  # [(heading, function)], in the order of the report
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
        """The kernel registry, `nearfield bench --list` (see kernels.py)."""
        return Kernels(self.nearfield("bench", "--list"))

    def section_no(self, fn):
        """The number of the section that `fn` writes (headed sections counted from 1)."""
        n = 0
        for heading, f in self.sections:
            n += heading is not None
            if f is fn:
                return n
        return "?"


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
        if report.kernels.single_threaded(k):
            threads["1"].append(k)
        elif report.kernels.openmp(k):
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
                if col == "threads" and not report.kernels.openmp(r["kernel"]):
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
