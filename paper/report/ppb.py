"""Section: particles per box at several depths, as interactions per second."""
import os

from .common import Flags, context_label, distinct, latest, machine, ppb_of, rate, table
from .figures import sweep_figure


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
