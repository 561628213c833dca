"""Part of the fmm report section (fmm_hopper.py): M2L's orders per offset and its balanced warp plan
(docs/design.md §16, "Orders per offset") against the kernel before them, measured in one call on one
machine (results/fmm-m2l-orders: <device>-final.csv and <device>-final-before.csv)."""
from .common import fmt_ms, num, table
from .fmm_common import bench_rows, case_name, order_of


def orders_part(report, out):
    rows = bench_rows(report, report.rows("fmm-m2l-orders"))
    after = [r for r in rows if r["_file"].endswith("-final.csv")]
    before = {(r["_file"][:-len("-final-before.csv")], r["kernel"], case_name(r), r["level"], order_of(r)): r
              for r in rows if r["_file"].endswith("-final-before.csv")}
    body, gains = [], []
    for r in sorted(after, key=lambda r: (r["_file"], r["kernel"], case_name(r), int(order_of(r) or 0))):
        b = before.get((r["_file"][:-len("-final.csv")], r["kernel"], case_name(r), r["level"], order_of(r)))
        if b is None:
            continue
        m2l = num(b, "m2l_ms") / num(r, "m2l_ms")
        gains.append((m2l, order_of(r), case_name(r)))
        body.append([r["kernel"], case_name(r), r["level"], str(order_of(r)),
                     f"{fmt_ms(num(b, 'm2l_ms'))} -> {fmt_ms(num(r, 'm2l_ms'))} ({m2l:.2f}x)",
                     f"{fmt_ms(num(b, 'median_ms'))} -> {fmt_ms(num(r, 'median_ms'))} "
                     f"({num(b, 'median_ms') / num(r, 'median_ms'):.2f}x)",
                     f"{b.get('git_commit', '')[:7]} -> {r.get('git_commit', '')[:7]}"])
    if not body:
        out.missing.append(("results/fmm-m2l-orders/", "M2L's orders per offset", "(see its README)"))
        return []
    best = max(gains)
    out.summary.append(f"M2L's orders per offset (3D from p = 8) made M2L up to {best[0]:.2f}x faster "
                       f"({best[2]}, p = {best[1]}), the same machine running both builds")
    return ["A translation across a farther offset keeps fewer terms (the orders per offset: the error "
            "of the farther offsets falls faster with the order), with a warp plan balanced for every order, "
            "from 3000 multiply-adds a translation on (3D p >= 8, 2D p >= 14); below that order p stays "
            "everywhere and the rows show the kernel's remaining bookkeeping. Before and after on one machine "
            "in one call, medians in ms:\n\n" +
            table(["kernel", "input", "level", "p", "M2L ms (speed-up)", "evaluation ms (speed-up)", "commits"], body)]
