#!/usr/bin/env python3
"""Every repository path that the docs, the sources and the build files name exists.

A reader sent to a file that is not there is sent nowhere, so every path named in
  the Markdown files (README.md, docs/, paper/README.md and the rest),
  the build files (CMakeLists.txt, *.cmake),
  the sources and tests (src/, tests/: comments and strings alike),
  the scripts, the report generator and the experiment files (*.sh, *.py, *.ini)
must exist. Two kinds of names are checked:
  from the repository root: src/..., tests/..., scripts/..., docs/..., experiments/..., paper/...,
    cmake/... (a name ending in "/" is a folder);
  from src/: core/..., tree/..., nearfield/plan/work_list.cuh, (methods/registry.cc), ... naming a
    file with a source extension, in any of the files above.
A name with a placeholder (<device>, {a,b}, *, $VAR, or a word in capitals such as NAME.ini that
does not exist) is checked up to the folder before it.
Every missing path is printed with the files and lines that name it, and the test exits 1.

Usage: doc_paths_test.py REPOSITORY_ROOT
"""
import os
import re
import sys

ROOT_FOLDERS = ("src", "tests", "scripts", "docs", "experiments", "paper", "cmake", "fuzz", "examples")
SRC_FOLDERS = ("core", "physics", "io", "tree", "ic", "render", "allpairs", "nearfield", "methods", "measure",
               "distributed", "sim", "cli", "farfield", "python")
SOURCE_FILE = r"[A-Za-z0-9_.-]+\.(?:h|cc|cu|cuh|py|sh)"
# Not after a word character, a slash or a dot: "src/tree/tree.h" is one name, not also "tree/tree.h";
# "build/src/x" and "../src" are not repository names.
LEAD = r"(?<![\w/.~$-])"
ROOT_NAME = re.compile(LEAD + r"((?:" + "|".join(ROOT_FOLDERS) + r")/[A-Za-z0-9_./<>{}*$,+-]*)")
SRC_NAME = re.compile(LEAD + r"((?:" + "|".join(SRC_FOLDERS) + r")/(?:[A-Za-z0-9_-]+/)*" + SOURCE_FILE + r")(?![\w/])")
PLACEHOLDER = re.compile(r"[<>{}*$]")
CAPITALS = re.compile(r"^[A-Z][A-Z0-9_]+(\.[a-z]+)?$")  # NAME, NAME.ini, DIR
SCANNED_NAMES = ("CMakeLists.txt",)
SCANNED_EXTENSIONS = (".md", ".cmake", ".h", ".cc", ".cu", ".cuh", ".py", ".sh", ".ini")
SKIPPED_TOP = ("results",)  # measured data, not prose


def scanned_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames if not (d.startswith(".") or d.startswith("build") or
                                                        d == "__pycache__" or
                                                        (rel_dir == "." and d in SKIPPED_TOP)))
        for name in sorted(filenames):
            if name in SCANNED_NAMES or name.endswith(SCANNED_EXTENSIONS):
                yield os.path.join(dirpath, name)


def checked_part(name):
    """The part of a root-relative name that must exist: up to the folder before a placeholder,
    without the sentence's punctuation; None when only the top folder is left."""
    parts = name.split("/")
    kept = []
    for part in parts:
        if PLACEHOLDER.search(part):
            return "/".join(kept) + "/" if len(kept) > 1 else None
        kept.append(part)
    kept[-1] = kept[-1].split(",")[0].rstrip(".;:)+-")  # "(see docs/design.md).", "a.sh,b.sh"
    path = "/".join(kept)
    return None if path in (kept[0], kept[0] + "/") else path


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    missing = {}  # path -> [file:line, ...]
    names = 0
    for path in scanned_files(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for number, line in enumerate(lines, 1):
            found = []
            for m in ROOT_NAME.finditer(line):
                name = checked_part(m.group(1))
                if name:
                    found.append((name, name))
            for m in SRC_NAME.finditer(line):
                found.append((m.group(1), "src/" + m.group(1)))
            for shown, name in found:
                names += 1
                target = os.path.join(root, name)
                exists = os.path.isdir(target) if name.endswith("/") else os.path.exists(target)
                if not exists and any(CAPITALS.match(part) for part in name.split("/")):
                    parts = name.split("/")
                    folder = "/".join(parts[:next(i for i, p in enumerate(parts) if CAPITALS.match(p))])
                    exists = os.path.isdir(os.path.join(root, folder))
                if not exists:
                    missing.setdefault(shown, []).append(f"{rel}:{number}")
    for name in sorted(missing):
        print(f"missing: {name}, named in:")
        for where in missing[name]:
            print(f"  {where}")
    if missing:
        print(f"{len(missing)} named path(s) do not exist")
        return 1
    print(f"every repository path named exists ({names} names checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
