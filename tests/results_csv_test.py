#!/usr/bin/env python3
"""Every committed results file is a well-formed table.

Each CSV under results/ (lines starting with '#' are comments, as in energy.csv) has a header
and rows with exactly the header's number of fields, and no column name twice. A row appended
from a file with another header (a column added since) shifts every value after the new column
and the report then reads wrong context; nearfield's own writer migrates old files
(src/measure/results.h), so a mismatch means a file was put together by hand or by a script.
Every offender is printed with its line number and field counts, and the test exits 1.

Usage: results_csv_test.py REPOSITORY_ROOT
"""
import csv
import os
import sys


def check(path):
    problems = []
    with open(path, newline="") as f:
        lines = [(n, line) for n, line in enumerate(f, 1) if not line.startswith("#") and line.strip()]
    if not lines:
        return problems
    numbers = [n for n, _ in lines]
    rows = list(csv.reader(line for _, line in lines))
    header = rows[0]
    if len(set(header)) != len(header):
        problems.append(f"line {numbers[0]}: a column name appears twice in the header")
    for n, row in zip(numbers[1:], rows[1:]):
        if len(row) != len(header):
            problems.append(f"line {n}: {len(row)} fields, the header has {len(header)}")
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    checked = 0
    bad = 0
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "results")):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".csv"):
                continue
            path = os.path.join(dirpath, name)
            checked += 1
            for p in check(path):
                print(f"{os.path.relpath(path, root)}: {p}")
                bad += 1
    print(f"{checked} results files checked, {bad} problems")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
