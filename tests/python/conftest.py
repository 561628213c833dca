"""Shared helpers of the Python module's tests (docs/design.md §17, "From Python").

The module comes from PYTHONPATH (CTest sets build/python); the command line from NEARFIELD_BIN,
else the nearfield beside the module (build/bin/nearfield).
"""
import csv
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import nearfield


def nearfield_binary():
    path = os.environ.get("NEARFIELD_BIN")
    if path:
        return path
    return str(Path(nearfield.__file__).resolve().parent.parent / "bin" / "nearfield")


def run_cli(*args, check=True):
    """Runs `nearfield ARGS`; returns the completed process (stdout, stderr as text)."""
    r = subprocess.run([nearfield_binary(), *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"nearfield {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
    return r


def cli_error(*args):
    """The message after 'error: ' of a command that must refuse (exit status 2)."""
    r = run_cli(*args, check=False)
    assert r.returncode == 2, (r.returncode, r.stderr)
    line = r.stderr.strip().splitlines()[-1]
    assert ": error: " in line, line
    return line.split(": error: ", 1)[1]


def read_accelerations(path):
    """An accelerations file (id,ax,ay[,az]) as (ids, (N, d) float64), parsed with Python's
    correctly rounded float()."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    assert header[0] == "id"
    ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
    acc = np.array([[float(v) for v in r[1:]] for r in rows], dtype=np.float64).reshape(len(rows), len(header) - 1)
    return ids, acc


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
