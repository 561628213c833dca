"""Kernel names and traits: the few kernels the report names for their role, and every other set of
kernels derived from the traits `nearfield bench --list` prints.

The traits relied on: cpu / gpu, near-field / all-pairs, Newton-3, atomics, deterministic / not
deterministic, dense tree, OpenMP. Others may come and go. A kernel found in results but not in
the list (removed since its rows were written) has no traits: its rows stay in the tables they
make, and it belongs to no derived set.
"""
import re

# --- kernels named for their role (the only kernel names the report's logic types) --------------
BPB = "bpb"                # the paper's original kernel (box per block): Table III's BPB column, Fig. 8
BPB_N3 = "bpb-n3"          # the paper's improved kernel (Newton's third law): Table III's improved column
PAPER_GPU = (BPB, BPB_N3)  # the paper's two GPU kernels, the subject of every claim it makes
CPU_SERIAL = "cpu-serial"  # the paper's CPU column: one thread, the numerator of its speedups
PPT = "ppt"                # particle per thread: the baseline the load-balance targets are measured against
BPT = "bpt"                # box per thread: with ppt, the mappings of the paper's earlier work
BASELINES = (PPT, BPT)     # GPU near-field kernels that are not new here (nor the paper's)
GROUND_TRUTH = "allpairs-tiled"  # the GPU all-pairs ground truth, whose rate the original BPB is set against
ROUNDING_REFERENCE = "cpu-allpairs"  # float64 with --mask near and --round-inputs: the input-rounding check runs it

# The machine code names a kernel by its C++ symbol, which `--list` does not give: the 2D float32
# instantiations (scripts/sass-summary.sh output) whose instruction mix the Newton-3 section
# compares, in the order of its table.
SASS_SYMBOLS = {BPB: "bpb_kernelILi2Ef", BPB_N3: "bpb_n3_kernelILi2Ef", "n3-shfl": "ShflAgentELi2EfLi16",
                "n3-rotate": "RotateAgentELi2EfLi16"}

# Colour and marker of a kernel in the sweep figures (the paper's two kernels as in Fig. 8: blue and
# red); fixed so that a kernel keeps its look from one figure and one regeneration to the next. A
# kernel not listed is drawn black with crosses.
FIGURE_STYLES = {PPT: ("tab:green", "^"), BPB: ("tab:blue", "o"), BPB_N3: ("tab:red", "s"),
                 "cpu-omp": ("tab:gray", "v"), "cpu-omp-n3": ("tab:brown", "D")}


def parse_list(text):
    """`nearfield bench --list` as {kernel: {column: value}}, the traits column as a frozenset.
    The first line names the columns (kernel, traits, description); columns are padded with spaces,
    so a run of two or more spaces separates them."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return {}
    columns = re.split(r" {2,}", lines[0].strip())
    out = {}
    for line in lines[1:]:
        row = dict(zip(columns, re.split(r" {2,}", line.strip(), maxsplit=len(columns) - 1)))
        row["traits"] = frozenset(t.strip() for t in row.get("traits", "").split(",") if t.strip())
        out[row[columns[0]]] = row
    return out


class Kernels:
    """The registry of kernels, and the sets of kernels the report speaks of, from their traits."""

    def __init__(self, listing):
        self.rows = parse_list(listing)

    def traits(self, kernel):
        return self.rows.get(kernel, {}).get("traits", frozenset())

    def has(self, kernel, *traits):
        return all(t in self.traits(kernel) for t in traits)

    def where(self, *traits):
        """The listed kernels that have every one of `traits`."""
        return {k for k in self.rows if self.has(k, *traits)}

    def single_threaded(self, kernel):
        return self.has(kernel, "cpu") and not self.has(kernel, "OpenMP")

    def openmp(self, kernel):
        return self.has(kernel, "OpenMP")

    def newton3(self, kernel):
        return self.has(kernel, "Newton-3")

    @property
    def all_pairs(self):
        """Every all-pairs kernel (CPU and GPU): they share no code with the tree kernels."""
        return self.where("all-pairs")

    @property
    def newton3_gpu(self):
        """The GPU kernels that use Newton's third law (the paper's bpb-n3 among them)."""
        return self.where("gpu", "Newton-3")

    @property
    def new(self):
        """The GPU near-field kernels added here: neither the paper's two nor the baselines."""
        return self.where("gpu", "near-field") - set(PAPER_GPU) - set(BASELINES)

    @property
    def new_newton3(self):
        """The new kernels that use Newton's third law (beside the paper's bpb-n3)."""
        return {k for k in self.new if self.newton3(k)}

    @property
    def new_one_sided(self):
        """The new kernels without Newton's third law: written for load balance (the issue's targets)."""
        return self.new - self.new_newton3
