"""Part of the fmm section: where one evaluation's time goes, kernel by kernel (results/fmm-profile:
Nsight Compute logs of scripts/fmm-profile.sh, gzipped ncu CSVs, one per case and machine). The
kernels are summed by stage from their CUDA function names (STAGE_OF below: implementation names,
not registry kernels); a kernel no pattern matches counts as "other" (the tree's, the lists' and the
plan's kernels, which the evaluation's time leaves out, and any new kernel until it is named here)."""
import csv
import gzip
import io
import os
import re
from collections import defaultdict

from .common import join, table

# (pattern on the demangled kernel name, stage), first match wins.
STAGE_OF = (
    (r"farfield::<unnamed>::(group_kernel|tensor_kernel|thread_kernel|m2l_kernel)", "M2L"),
    (r"warp_pairs::item_kernel|small_boxes|bpb|ppt|allpairs", "near: the near kernel's pairs"),
    (r"farfield::<unnamed>::item_kernel", "near: one-sided items"),
    (r"p2m", "P2M"),
    (r"m2m", "M2M"),
    (r"l2l", "L2L"),
    (r"l2p", "L2P"),
)
COLUMNS = ("M2L", "near: the near kernel's pairs", "near: one-sided items", "P2M", "M2M", "L2L", "L2P", "other")
ISSUE = "smsp__issue_active.avg.pct_of_peak_sustained_active"
WARPS = "sm__warps_active.avg.pct_of_peak_sustained_active"
CASES = {"uniform-p10": "fmm, uniform 3D, N = 16777216, level 6, p = 10",
         "adaptive-p12": "fmm-adaptive, plummer 3D, N = 16777216, automatic leaf size, p = 12 (the default at 1e-4)",
         "adaptive-p10": "fmm-adaptive, plummer 3D, N = 16777216, automatic leaf size, p = 10"}


def number(text):
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return 0.0


def stage_of(name):
    return next((stage for pattern, stage in STAGE_OF if re.search(pattern, name)), "other")


def launches(path):
    """{launch id: {"name": kernel name, metric: value}} of one ncu CSV (gzipped where it ends in .gz;
    scripts/ncu-summary.py reads its logs through this too)."""
    with (gzip.open(path, "rt", newline="") if path.endswith(".gz") else open(path, newline="")) as f:
        rows = [r for r in csv.reader(io.StringIO(f.read())) if len(r) > 10]  # ncu's own notes have fewer fields
    if not rows:
        return {}
    head, rows = rows[0], rows[1:]
    at = {c: head.index(c) for c in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
    out = {}
    for r in rows:
        out.setdefault(r[at["ID"]], {"name": r[at["Kernel Name"]]})[r[at["Metric Name"]]] = r[at["Metric Value"]]
    return out


def summary(path):
    """Per stage: ms (ncu's durations summed), and duration-weighted issue and warps percentages."""
    ms, issue, warps = defaultdict(float), defaultdict(float), defaultdict(float)
    for launch in launches(path).values():
        stage = stage_of(launch["name"])
        t = number(launch.get("gpu__time_duration.sum")) / 1e6
        ms[stage] += t
        issue[stage] += t * number(launch.get(ISSUE))
        warps[stage] += t * number(launch.get(WARPS))
    return {s: (ms[s], issue[s] / ms[s] if ms[s] else 0.0, warps[s] / ms[s] if ms[s] else 0.0) for s in ms}


def profile_part(report, out):
    folder = os.path.join(report.results, "fmm-profile")
    files = sorted(f for f in os.listdir(folder) if f.endswith(".csv.gz")) if os.path.isdir(folder) else []
    if not files:
        return ["Not measured yet: results/fmm-profile/ (`scripts/fmm-profile.sh BIN_DIR` on a GPU machine with "
                "Nsight Compute, then its CSVs gzipped into results/fmm-profile/<machine>-<case>.csv.gz)."]
    by_machine = defaultdict(list)
    for f in files:
        stem = f[: -len(".csv.gz")]
        case = next((c for c in CASES if stem.endswith("-" + c)), None)
        if case:
            by_machine[stem[: -len(case) - 1]].append((case, summary(os.path.join(folder, f))))
    parts, shares = [], []
    for machine_name, cases in sorted(by_machine.items()):
        rows, busy = [], []
        for case, s in sorted(cases, key=lambda c: list(CASES).index(c[0])):
            rows.append([CASES[case]] + [f"{s[c][0]:.2f}" if c in s else "-" for c in COLUMNS])
            evaluation = sum(v[0] for k, v in s.items() if k != "other")
            if evaluation > 0:
                shares.append(sum(v[0] for k, v in s.items() if k == "M2L" or k.startswith("near")) / evaluation)
            for stage in ("M2L", "near: the near kernel's pairs", "near: one-sided items"):
                if stage in s:
                    busy.append((stage, s[stage][1], s[stage][2]))
        text = [f"**{machine_name}**: one evaluation under Nsight Compute (`scripts/fmm-profile.sh`), its kernels "
                "summed by stage, in ms. ncu times each kernel alone, with the clocks as they are, so the sums are "
                "close to, not equal to, the stage times of an unprofiled run; \"other\" holds the tree's, the lists' "
                "and the plan's kernels, which the evaluation's time leaves out (results/fmm-profile/README.md names the "
                "commit of the binaries).",
                table(["case"] + list(COLUMNS), rows)]
        for stage in ("M2L", "near: the near kernel's pairs", "near: one-sided items"):
            got = [(i, w) for s_, i, w in busy if s_ == stage]
            if got:
                lo, hi = min(i for i, _ in got), max(i for i, _ in got)
                wlo, whi = min(w for _, w in got), max(w for _, w in got)
                text.append(f"- {stage}: issue slots {lo:.0f}%" + (f"-{hi:.0f}%" if round(hi) != round(lo) else "") +
                            f" busy, warps resident {wlo:.0f}%" + (f"-{whi:.0f}%" if round(whi) != round(wlo) else "") +
                            " of the SM's (weighted by duration over the cases).")
        parts.append("\n\n".join(text[:2]) + "\n\n" + "\n".join(text[2:]))
    if shares:
        lo, hi = min(shares), max(shares)
        span = f"{100 * lo:.0f}%" + (f" to {100 * hi:.0f}%" if round(100 * hi) != round(100 * lo) else "")
        parts.append(f"M2L and the near field hold {span} of the evaluation's kernel time in these profiles; the "
                     "passes (P2M, M2M, L2L, L2P) the rest.")
        out.summary.append(f"kernel by kernel ({join(sorted(by_machine))}), M2L and the near field hold {span} of an "
                           "evaluation's kernel time")
    return parts
