#!/usr/bin/env python3
"""The include graph of src/ has no upward edge (docs/design.md §17).

The folders of src/ form layers, top (lowest) first: a file in folder F may include "G/..." only
when G comes before F in LAYERS (or is F). Every violation is printed as file:line: the include,
and the test exits 1. A folder of src/ that is not in LAYERS is a violation too (a new folder
takes its place in the order on purpose), and so is a §17 table that lists the folders in
another order than LAYERS.

Usage: layering_test.py REPOSITORY_ROOT
"""
import os
import re
import sys

LAYERS = ["core", "physics", "io", "tree", "ic", "render", "allpairs", "nearfield", "farfield", "methods", "measure",
          "distributed", "sim", "python", "cli"]
SOURCE_EXTENSIONS = (".h", ".cc", ".cu", ".cuh", ".hpp", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def included_folder(path, including_dir, src):
    """The src/ folder an include names, or None when it names no file of src/."""
    # An include relative to the including file ("../tree/x.h", "agent.cuh").
    local = os.path.normpath(os.path.join(including_dir, path))
    if os.path.isfile(local) and local.startswith(src + os.sep):
        return os.path.relpath(local, src).split(os.sep)[0]
    first = path.split("/")[0]
    if "/" in path and os.path.isdir(os.path.join(src, first)):
        return first
    return None


def design_order(root):
    """The folders of the table in docs/design.md §17, in its order."""
    path = os.path.join(root, "docs", "design.md")
    if not os.path.isfile(path):
        return None
    text = open(path, encoding="utf-8").read()
    start = text.find("## 17.")
    if start < 0:
        return None
    section = text[start:]
    return re.findall(r"^\| `([a-z0-9_]+)/` \|", section, flags=re.M)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    src = os.path.join(root, "src")
    rank = {folder: i for i, folder in enumerate(LAYERS)}
    violations = []
    for folder in sorted(os.listdir(src)):
        if os.path.isdir(os.path.join(src, folder)) and folder not in rank:
            violations.append(f"src/{folder}/: a folder that is not in the layer order {', '.join(LAYERS)} "
                              "(add it to LAYERS in tests/layering_test.py and to docs/design.md §17)")
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, src)
        if rel_dir == ".":
            continue
        folder = rel_dir.split(os.sep)[0]
        if folder not in rank:
            continue
        for name in sorted(filenames):
            if not name.endswith(SOURCE_EXTENSIONS):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = included_folder(m.group(1), dirpath, src)
                    if target is None or target == folder:
                        continue
                    if target not in rank:
                        violations.append(f"{os.path.relpath(path, root)}:{number}: includes \"{m.group(1)}\": "
                                          f"folder {target}/ is not in the layer order")
                    elif rank[target] > rank[folder]:
                        violations.append(f"{os.path.relpath(path, root)}:{number}: includes \"{m.group(1)}\": "
                                          f"{target}/ comes after {folder}/ in the layer order")
    documented = design_order(root)
    if documented is not None and documented != LAYERS:
        violations.append("docs/design.md §17 lists the folders as " + ", ".join(documented) +
                          "; tests/layering_test.py has " + ", ".join(LAYERS))
    for v in violations:
        print(v)
    if violations:
        print(f"{len(violations)} layering violation(s); the order, top first: {' < '.join(LAYERS)}")
        return 1
    print("src/ includes only folders above each file's own: " + " < ".join(LAYERS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
