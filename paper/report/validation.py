"""Section: every kernel against the float64 ground truth, by input and by kernel, and what the
data say about each failing input."""
import math
from collections import defaultdict

from .common import Flags, context_label, latest, num, table
from .facts import validation_rows


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
        text += failure_notes(rows, case, name, report.kernels.all_pairs)
        texts.append(text)
    return "\n\n".join(texts)


def failure_notes(rows, case, name, all_pairs):
    """What the data say about each failing input: which kernels fail there, and whether kernels that
    share no code with the tree kernels (`all_pairs`, from their traits) and the float64 ones fail too."""
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
        allpairs_bad = [k for k in bad if k in all_pairs]
        tree_bad = [k for k in bad if k not in all_pairs]
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
