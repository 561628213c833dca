#!/usr/bin/env python3
"""No source file grows past its size limit without saying why.

C++ and CUDA files (.h, .cc, .cu, .cuh) under src/ and tests/ may have at most 450 lines, Python
files anywhere in the repository at most 600, unless one of the file's first 15 lines is a
comment whose text starts with "Long file:" and gives the reason, e.g.
    // Long file: the table of every kernel's registration is one list.
    # Long file: one generated section per experiment.
Every offender is printed with its line count and the test exits 1.

Usage: file_size_test.py REPOSITORY_ROOT
"""
import os
import re
import sys

CPP_EXTENSIONS = (".h", ".cc", ".cu", ".cuh")
CPP_LIMIT = 450
PY_LIMIT = 600
HEAD_LINES = 15
# A comment marker (//, //!, ///, #, /*, /**, or a block comment's leading *), then "Long file:"
# and a reason.
EXEMPTION = re.compile(r"^\s*(//[/!]?|#|/\*+!?|\*)\s*Long file:\s*\S")
SKIPPED_DIRS = {"__pycache__", "node_modules"}


def skipped(name):
    return name.startswith(".") or name.startswith("build") or name in SKIPPED_DIRS


def exempt(lines):
    return any(EXEMPTION.match(line) for line in lines[:HEAD_LINES])


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    offenders = []
    checked = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not skipped(d))
        rel_dir = os.path.relpath(dirpath, root)
        top = rel_dir.split(os.sep)[0]
        for name in sorted(filenames):
            if name.endswith(".py"):
                limit = PY_LIMIT
            elif name.endswith(CPP_EXTENSIONS) and top in ("src", "tests"):
                limit = CPP_LIMIT
            else:
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
            checked += 1
            if len(lines) > limit and not exempt(lines):
                offenders.append((os.path.relpath(path, root), len(lines), limit))
    for path, count, limit in offenders:
        print(f"{path}: {count} lines (limit {limit}; split it, or say why in a \"Long file:\" comment in its "
              f"first {HEAD_LINES} lines)")
    if offenders:
        print(f"{len(offenders)} file(s) over their size limit")
        return 1
    print(f"{checked} files within their size limits ({CPP_LIMIT} lines C++/CUDA in src/ and tests/, "
          f"{PY_LIMIT} lines Python)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
