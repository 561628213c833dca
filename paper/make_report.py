#!/usr/bin/env python3
"""Regenerates paper/README.md and its figures from results/ (written by `nearfield reproduce`).

Every number in the report comes from a results CSV, from the paper's reference data in
paper/reference/, or from a `nearfield` command this script runs (it holds no force law, box rule
or operation count of its own); every conclusion is computed from those numbers. Usage:
    python3 paper/make_report.py [--results results] [--paper paper] [--nearfield build/bin/nearfield]

The code is the package paper/report/, one module per section. Adding a section: write a module
with a function `my_section(report) -> str` (markdown, without its heading) and add it to SECTIONS
in report/main.py; `report` gives the results (`report.rows(name)`, `report.tables(name)`), the
paper's figures, the kernel registry (`report.kernels`, from `nearfield bench --list`), the helpers
of report/common.py and `report.nearfield(...)`. Label every table with `context_label(report,
rows)` and mark its unusual rows with `Flags`. Name a kernel only through report/kernels.py: its
role constants, or a set derived from the traits.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report.main import main  # noqa: E402  (the package lives next to this script)

if __name__ == "__main__":
    main(__doc__)
