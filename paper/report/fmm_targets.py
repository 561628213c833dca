"""Part of the fmm report section (fmm_hopper.py): the far field's speed targets (docs/design.md §16,
3D float) against the committed rows, per GPU: the fastest evaluation at the order the accuracy
model chose, and the fastest at an order whose error was measured at or below the accuracy."""
from collections import defaultdict

from .common import fmt_ms, gpu_name, is_gpu_row, join, num, table
from .fmm_common import bench_rows, is_auto

# The committed timings of the full methods; fmm-order-search's orders were measured on the input
# (--order-sample), its validate rows are errors.
TIME_FILES = ("fmm", "fmm-scaling", "fmm-adaptive", "fmm-order-search")
# Measured errors (relative L2 against float64, whole or sampled): matched to a timed row by kernel,
# input, N, dimension, precision and order; the largest of any match is taken.
ERROR_FILES = ("fmm-accuracy", "fmm-adaptive-accuracy", "fmm-m2l-orders", "fmm-depth-error", "fmm-order-search")
DEFAULT_ACCURACY = 1e-4  # the methods' default --accuracy
# (input, N, accuracy, at most ms): 3D, float.
SPEED = (("uniform", 1 << 24, 1e-4, 60.0), ("plummer", 1 << 24, 1e-4, 60.0), ("uniform", 1 << 24, 1e-3, 30.0))
ALL_PAIRS = ("allpairs-tiled", 1 << 20, 1e-4, 100.0)  # kernel, N, accuracy, at least this speed-up


def usable(r):
    """A row with the columns the targets read (older or partial rows are left out)."""
    return str(r.get("n", "")).isdigit() and all(r.get(c) for c in ("kernel", "distribution", "dim", "precision"))


def key(r):
    return (r["kernel"], r["distribution"], int(r["n"]), r["dim"], r["precision"], r.get("p", ""))


def measured_errors(report):
    errors = defaultdict(list)
    for name in ERROR_FILES:
        for r in report.rows(name):
            if usable(r) and r.get("rel_l2") and r.get("p"):
                errors[key(r)].append((num(r, "rel_l2"), f"results/{name}/{r['_file']}"))
    return {k: max(v) for k, v in errors.items()}


def asked_for(r, accuracy):
    """Whether the method chose the row's order for `accuracy` (not an order given): from the accuracy
    model, or measured on the input (--order-sample)."""
    if r.get("order") != "auto":
        return False
    asked = num(r, "accuracy") if r.get("accuracy") else DEFAULT_ACCURACY
    return abs(asked - accuracy) <= 1e-9 * accuracy


def fastest(rows):
    return min(rows, key=lambda r: num(r, "median_ms"), default=None)


def describe(r, err):
    where = f"leaf size {r['leaf_size']}" if r.get("leaf_size") else f"level {r.get('level', '?')}"
    e = f", error {err[0]:.2g}" if err else ", error not measured"
    how = f" measured at `--order-sample {r['order_sample']}`" if r.get("order_sample") else ""
    return (f"{fmt_ms(num(r, 'median_ms'))} ms ({r['kernel']}, {where}, p = {r.get('p', '?')}{how}{e}; "
            f"{r.get('git_commit', '')[:7]})")


def options(r):
    """The command-line choices that reproduce a row's order and tree: --order, and --leaf-size or
    --level where they were given rather than automatic."""
    given = f"--order {r.get('p', '?')}"
    if r.get("leaf_size") and r.get("leaf_rule") != "auto":
        given += f" --leaf-size {r['leaf_size']}"
    elif not r.get("leaf_size") and not is_auto(r):
        given += f" --level {r.get('level', '?')}"
    return given


def targets_part(report, out):
    gpu_full = report.kernels.where("gpu", "far-field")
    rows = [r for name in TIME_FILES for r in report.rows(name)]
    timed = [r for r in bench_rows(report, rows) if usable(r) and r["kernel"] in gpu_full and is_gpu_row(r) and
             r["dim"] == "3" and r["precision"] == "float"]
    if not timed:
        return []
    errors = measured_errors(report)
    devices = sorted({gpu_name([r]) for r in timed})
    body, verdicts = [], []
    for dist, n, accuracy, most in SPEED:
        for dev in devices:
            cand = [r for r in timed if gpu_name([r]) == dev and r["distribution"] == dist and int(r["n"]) == n]
            best_auto = fastest([r for r in cand if asked_for(r, accuracy)])
            best_shown = fastest([r for r in cand if key(r) in errors and errors[key(r)][0] <= accuracy])
            if not best_auto and not best_shown:
                continue
            t_auto = num(best_auto, "median_ms") if best_auto else None
            t_shown = num(best_shown, "median_ms") if best_shown else None
            auto_error = errors.get(key(best_auto)) if best_auto else None
            if t_auto is not None and t_auto <= most and (auto_error is None or auto_error[0] <= accuracy):
                verdict = "**met**"
            elif t_shown is not None and t_shown <= most:
                verdict = f"met at `{options(best_shown)}` only"
            else:
                verdict = "not met"
            got = fmt_ms(t_auto) + " ms" if t_auto is not None else "no automatic row"
            verdicts.append((f"{dist} 2^{n.bit_length() - 1} at {accuracy:.0e} in {most:g} ms", dev, got, verdict))
            body.append([f"{dist} 3D, N = {n}, <= {accuracy:.0e}, <= {most:g} ms", dev,
                         describe(best_auto, errors.get(key(best_auto))) if best_auto else "-",
                         describe(best_shown, errors[key(best_shown)]) if best_shown else "-", verdict])
    ap_kernel, ap_n, ap_accuracy, ap_least = ALL_PAIRS
    for dev in devices:
        for dist in sorted({r["distribution"] for r in timed}):
            f = fastest([r for r in timed if gpu_name([r]) == dev and r["distribution"] == dist and
                         int(r["n"]) == ap_n and asked_for(r, ap_accuracy)])
            a = fastest([r for r in rows if usable(r) and r["kernel"] == ap_kernel and gpu_name([r]) == dev and r["distribution"] == dist
                         and int(r["n"]) == ap_n and r["dim"] == "3" and r["precision"] == "float" and r.get("median_ms")])
            if not f or not a:
                continue
            x = num(a, "median_ms") / num(f, "median_ms")
            verdict = "**met**" if x >= ap_least else "not met"
            verdicts.append((f"{dist} 2^{ap_n.bit_length() - 1} at {ap_accuracy:.0e} {ap_least:g}x {ap_kernel}", dev,
                             f"{x:.0f}x", verdict))
            body.append([f"{dist} 3D, N = {ap_n}, <= {ap_accuracy:.0e}: at least {ap_least:g}x {ap_kernel}", dev,
                         describe(f, errors.get(key(f))) + f": {x:.0f}x {ap_kernel}'s {fmt_ms(num(a, 'median_ms'))} ms",
                         "-", verdict])
    if not body:
        return []
    met = sum(v[3] == "**met**" for v in verdicts)
    missed = [f"{v[0]} on the {v[1]} ({v[2]}{'; met at a lower measured order' if v[3].startswith('met at') else ''})"
              for v in verdicts if v[3] != "**met**"]
    out.summary.append(f"the far field's speed targets (3D float, committed rows): {met} of {len(verdicts)} (target, "
                       "GPU) pairs met at the automatic order" + (f"; missed: {join(missed)}" if missed else ""))
    return ["The speed targets of docs/design.md §16 (3D, float), from the committed rows of results/" +
            ", results/".join(TIME_FILES) + " (median of each row's timed runs). *Automatic order*: the fastest "
            "row whose order the method chose for that accuracy (`--accuracy`, or the default 1e-4) from the "
            "accuracy model or, with `--order-sample M`, by measuring it on the input (docs/design.md §16, \"The "
            "measured order\"), its error where one was measured at that order. *At a measured error*: the fastest row at an order whose "
            "relative L2 error on the same input and N was measured at or below the accuracy (the largest of the "
            "measurements in results/" + ", results/".join(ERROR_FILES) + ", whole or on a sample of targets). An "
            "error is matched by method, input, N, precision and order only: it may come from another level or leaf "
            "size, another GPU or an earlier commit than the row it stands beside. The "
            "stages against their bounds and the automatic level are checked in their own parts below.",
            table(["target", "GPU", "automatic order", "at a measured error", "verdict"], body)]
