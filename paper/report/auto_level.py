"""Section: the automatic level per kernel (experiments/auto-level.ini): each GPU near-field
kernel's time at levels 7..11 and at its automatic level, against its fastest measured level."""
from collections import defaultdict

from .common import fmt_ms, latest, machine, num, table


def auto_level(report):
    out = []
    for name, rows in report.tables("auto-level"):
        rows = [r for r in rows if r.get("precision") == "float"]
        if not rows:
            continue
        best = latest(rows, lambda r: (r["distribution"], r["kernel"], r["level"], r.get("level_rule", "")))
        cells = defaultdict(dict)
        for (dist, kernel, level, rule), r in best.items():
            cells[(dist, kernel)]["auto" if rule == "auto" else int(level)] = r
        levels = sorted({k for c in cells.values() for k in c if k != "auto"})
        body, deepest_wins, total = [], 0, 0
        for (dist, kernel), c in sorted(cells.items()):
            fixed = {k: num(r, "median_ms") for k, r in c.items() if k != "auto"}
            fastest = min(fixed, key=fixed.get)
            total += 1
            deepest_wins += fastest == max(fixed)
            a = c.get("auto")
            auto_ms = num(a, "median_ms") if a else float("nan")
            body.append([dist, f"`{kernel}`"] + [fmt_ms(fixed.get(k)) for k in levels] +
                        [f"{a['level']}: {fmt_ms(auto_ms)}" if a else "-", f"{fastest}: {fmt_ms(fixed[fastest])}",
                         f"{auto_ms / fixed[fastest]:.2f}" if a else "-"])
        n = rows[0]["n"]
        out.append(f"**{machine(rows)}**, 3D, N = {n}, float, median ms of each point "
                   f"(results/auto-level/{name}.csv); the fastest measured level is the deepest measured in "
                   f"{deepest_wins} of {total} cells:\n\n" +
                   table(["input", "kernel"] + [f"level {k}" for k in levels] + ["auto: level, ms", "fastest", "auto / fastest"],
                         body))
    if not out:
        return "No `auto-level` results yet (`scripts/auto-level-bench.sh` on a GPU machine)."
    return ("Each GPU near-field kernel gets a level of its own (docs/design.md §11): the operation count of "
            "the generic rule priced in the kernel's measured time per pair, plus its measured time per box "
            "and per box link (`src/methods/level_costs.cc`, fitted by `scripts/fit-level-costs.py`), within its "
            "own depth limit. The near-field time alone keeps falling as the level deepens (fewer pairs, and "
            "these kernels pay little per box), down to about one particle per box, where the far field would do "
            "all the work; the rule keeps the tree method's price of a box, which is what stops it short of "
            "that, and so it is not the fastest near-field level where the measured levels reach that deep.\n\n" +
            "\n\n".join(out))
