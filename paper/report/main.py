"""The report, in order (SECTIONS), and the command line that writes it."""
import argparse
import glob
import os

from .common import Report, find_nearfield
from .auto_level import auto_level
from .depth import depth
from .discussion import discussion
from .experiment_setup import setup
from .fmm_hopper import fmm_hopper
from .gpu_perf import gpu_perf
from .model import model
from .multigpu import multigpu
from .newton3_hopper import newton3_hopper
from .nonuniform import nonuniform
from .paper_brief import paper_brief
from .ppb import ppb
from .provenance import provenance
from .simulation import simulation
from .table3 import table3
from .validation import validation
from .verdict import verdict

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
    ("A level per kernel", auto_level),
    ("Simulation: energy, cost of a step, a galaxy collision", simulation),
    ("Several GPUs", multigpu),
    ("The near field inside a full FMM on Hopper", fmm_hopper),
    ("What reproduces, what does not, and why", discussion),
]
TITLE = "Reproducing Shan & Lei: near-field BPB and its Newton's-third-law improvement on the GPU"


def main(description=None, argv=None):
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default="results")
    ap.add_argument("--paper", default="paper")
    ap.add_argument("--nearfield", help="the nearfield binary (default: build/bin/nearfield, build-cpu/bin/nearfield, "
                                        "$NEARFIELD, then PATH)")
    args = ap.parse_args(argv)
    report = Report(args.results, args.paper, find_nearfield(args.nearfield), SECTIONS)
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
