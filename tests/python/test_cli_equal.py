"""The module's results equal the command line's bit for bit: the same kernel on the same input
through `nearfield forces` (and generate, convert, simulate) and through `import nearfield`."""
import filecmp

import numpy as np
import pytest

import nearfield
from conftest import read_accelerations, run_cli

CPU_KERNELS = [k["name"] for k in nearfield.kernels() if not k["gpu"]]


def cli_forces(tmp_path, pos, m, *args):
    """`nearfield forces` on pos, m (written exactly as .bin): its accelerations in input order."""
    src = tmp_path / "in.bin"
    assert nearfield.write(str(src), pos, m) == []
    out = tmp_path / "acc.csv"
    run_cli("forces", "--input", src, "--output", out, *args)
    ids, acc = read_accelerations(out)
    assert (ids == np.arange(len(pos))).all()
    return acc


@pytest.mark.parametrize("kernel", CPU_KERNELS)
@pytest.mark.parametrize("precision", ["float", "double"])
@pytest.mark.parametrize("dim", [2, 3])
def test_forces_equal_cli(tmp_path, rng, kernel, precision, dim):
    n = 301  # odd
    pos = rng.random((n, dim))
    m = rng.uniform(0.5, 1.5, n) / n
    level = 2
    got = nearfield.forces(pos, m, softening=1e-3, kernel=kernel, level=level, precision=precision)
    want = cli_forces(tmp_path, pos, m, "--kernel", kernel, "--level", level, "--precision", precision,
                      "--softening", "1e-3")
    assert got.dtype == np.float64 and got.shape == (n, dim)
    assert np.array_equal(got, want), np.abs(got - want).max()


@pytest.mark.parametrize("kernel", ["cpu-omp-n3", "cpu-fmm"])
def test_level_auto_equal_cli(tmp_path, kernel):
    p = nearfield.generate("plummer", dim=3, n=4000, seed=3)
    got, info = nearfield.forces(p["pos"], p["m"], softening=1e-2, kernel=kernel, return_info=True)
    want = cli_forces(tmp_path, p["pos"], p["m"], "--kernel", kernel, "--level", "auto", "--softening", "1e-2")
    assert np.array_equal(got, want)
    assert info["level"] >= 0 and info["note"].startswith("level auto")


def test_fmm_options_equal_cli(tmp_path, rng):
    pos = rng.random((2000, 3))
    m = np.full(2000, 1 / 2000)
    got = nearfield.forces(pos, m, softening=0.0, kernel="cpu-fmm", level=3, order=6, near="cpu-n3", precision="double")
    want = cli_forces(tmp_path, pos, m, "--kernel", "cpu-fmm", "--level", 3, "--order", 6, "--near", "cpu-n3",
                      "--precision", "double", "--softening", 0)
    assert np.array_equal(got, want)


def test_adaptive_leaf_size_equal_cli(tmp_path):
    """leaf_size reaches the adaptive tree as --leaf-size does: equal bit for bit, and it is used
    (another leaf size gives another tree, hence other rounding and truncation)."""
    p = nearfield.generate("plummer", dim=3, n=3000, seed=5)
    args = dict(softening=1e-3, kernel="cpu-fmm-adaptive", level=6, order=5, precision="double")
    got, info = nearfield.forces(p["pos"], p["m"], leaf_size=16, return_info=True, **args)
    want = cli_forces(tmp_path, p["pos"], p["m"], "--kernel", "cpu-fmm-adaptive", "--level", 6, "--order", 5,
                      "--precision", "double", "--softening", 1e-3, "--leaf-size", 16)
    assert np.array_equal(got, want)
    assert info["order"] == 5
    default = nearfield.forces(p["pos"], p["m"], **args)
    assert not np.array_equal(got, default)
    row, row_default = (nearfield.validate(p["pos"], p["m"], **args, **extra) for extra in (dict(leaf_size=16), {}))
    assert row["passed"] and row_default["passed"]  # against float64 all pairs (no leaf size there)
    assert row["rel_l2"] != row_default["rel_l2"]


def test_order_sample_equal_cli(tmp_path):
    """order_sample measures the order as --order-sample does: the same order, equal bit for bit, the
    search's line in the info dict and in validate's row, which passes at the accuracy."""
    p = nearfield.generate("plummer", dim=3, n=3000, seed=7)
    args = dict(softening=1e-3, kernel="cpu-fmm", level=3, accuracy=1e-3)
    got, info = nearfield.forces(p["pos"], p["m"], order_sample=500, return_info=True, **args)
    want = cli_forces(tmp_path, p["pos"], p["m"], "--kernel", "cpu-fmm", "--level", 3, "--accuracy", 1e-3,
                      "--softening", 1e-3, "--order-sample", 500)
    assert np.array_equal(got, want)
    assert info["order_search"].startswith(f"cpu-fmm: order {info['order']} (measured at 500 sampled targets")
    assert "order_search" not in nearfield.forces(p["pos"], p["m"], return_info=True, **args)[1]
    row = nearfield.validate(p["pos"], p["m"], order_sample=500, **args)
    assert row["order"] == info["order"] and row["passed"] and row["tolerance"] == 1e-3
    assert row["order_search"].split(" s, ")[0].rsplit(";", 1)[0] == info["order_search"].split(" s, ")[0].rsplit(";", 1)[0]
    # A tree keeps a method per setting: a measured order is its own, not the model's kept method.
    tree = nearfield.Tree(p["pos"], level=3)
    plain = tree.forces(p["m"], softening=1e-3, kernel="cpu-fmm", accuracy=1e-3, return_info=True)
    measured = tree.forces(p["m"], softening=1e-3, kernel="cpu-fmm", accuracy=1e-3, order_sample=500,
                           return_info=True)
    assert "order_search" not in plain[1] and measured[1]["order"] == info["order"]
    assert measured[1]["order_search"].startswith(f"cpu-fmm: order {info['order']} (measured at 500")
    assert np.array_equal(measured[0], got)
    with pytest.raises(ValueError, match="order_sample: must be at least 2, not 1"):
        nearfield.forces(p["pos"], p["m"], order_sample=1, **args)
    with pytest.raises(nearfield.UsageError, match="--order-sample chooses the order"):
        nearfield.forces(p["pos"], p["m"], order_sample=500, order=6, **args)


def test_masked_allpairs_and_domain_equal_cli(tmp_path, rng):
    pos = rng.random((257, 2))
    m = np.ones(257)
    got = nearfield.forces(pos, m, softening=0.01, kernel="cpu-allpairs", mask="near", level=3,
                           domain=(-0.5, -0.5, 2.0))
    want = cli_forces(tmp_path, pos, m, "--kernel", "cpu-allpairs", "--mask", "near", "--level", 3,
                      "--domain", "-0.5,-0.5,2", "--softening", 0.01)
    assert np.array_equal(got, want)


def test_tree_reuse_equals_forces(rng):
    pos = rng.random((500, 3))
    m = rng.random(500)
    tree = nearfield.Tree(pos, 2)
    direct = nearfield.forces(pos, m, softening=1e-3, kernel="cpu-omp", level=2)
    first = tree.forces(m, softening=1e-3, kernel="cpu-omp")
    again = tree.forces(m, softening=1e-3, kernel="cpu-omp")
    passed = nearfield.forces(pos, m, softening=1e-3, kernel="cpu-omp", tree=tree)
    for a in (first, again, passed):
        assert np.array_equal(a, direct)
    other = tree.forces(2 * m, softening=1e-3, kernel="cpu-omp")  # new masses: prepared again
    assert np.allclose(other, 2 * direct, rtol=1e-6, atol=0)
    with pytest.raises(ValueError, match="not the positions the tree was built from"):
        nearfield.forces(pos + 1, m, softening=1e-3, kernel="cpu-omp", tree=tree)
    with pytest.raises(ValueError, match="the tree is at level 2"):
        nearfield.forces(pos, m, softening=1e-3, kernel="cpu-omp", level=3, tree=tree)


def test_tree_keeps_methods_apart_by_small_softenings(rng):
    """The kept method's key held softenings as %f: 2e-7 and 4e-7 were one key, one method."""
    pos = rng.random((50, 3))
    pos[1] = pos[0] + [1e-7, 0, 0]  # a pair the softening decides
    m = rng.random(50)
    tree = nearfield.Tree(pos, 2)
    for eps in (2e-7, 4e-7):
        got = tree.forces(m, softening=eps, kernel="cpu-omp", precision="double")
        want = nearfield.forces(pos, m, softening=eps, kernel="cpu-omp", level=2, precision="double")
        assert np.array_equal(got, want), eps


@pytest.mark.parametrize("fmt", ["csv", "bin", "tipsy", "tab"])
def test_files_as_cli(tmp_path, fmt):
    """generate equals the command's generate; write and read equal convert's files."""
    p = nearfield.generate("plummer", dim=3, n=123, seed=5)
    run_cli("generate", "--dist", "plummer", "--dim", 3, "--n", 123, "--seed", 5, "--output", tmp_path / "g.bin")
    g = nearfield.read(str(tmp_path / "g.bin"))
    for key in ("pos", "m", "vel"):
        assert np.array_equal(g[key], p[key]), key
    mine = tmp_path / f"mine.{fmt}"
    nearfield.write(str(mine), p["pos"], p["m"], p["vel"])
    run_cli("convert", "--input", tmp_path / "g.bin", "--output", tmp_path / f"cli.{fmt}")
    assert filecmp.cmp(mine, tmp_path / f"cli.{fmt}", shallow=False)
    back = nearfield.read(str(mine))
    if fmt in ("csv", "bin", "tab"):  # exact formats
        assert np.array_equal(back["pos"], p["pos"]) and np.array_equal(back["m"], p["m"])
    else:  # Tipsy stores float32
        assert np.array_equal(back["pos"], p["pos"].astype(np.float32).astype(np.float64))


def test_simulate_writes_cli_run_folder(tmp_path):
    p = nearfield.generate("plummer", dim=3, n=200, seed=7)
    src = tmp_path / "in.bin"
    nearfield.write(str(src), p["pos"], p["m"], p["vel"])
    args = dict(kernel="cpu-omp-n3", dt=0.01, steps=6, softening=0.01, level=1, snapshot_every=3, format="bin",
                render_every=3, render_size=64)
    r = nearfield.simulate(p["pos"], p["m"], p["vel"], output_dir=str(tmp_path / "py"), **args)
    assert (r["first_step"], r["last_step"]) == (0, 6)
    run_cli("simulate", "--input", src, "--kernel", "cpu-omp-n3", "--dt", 0.01, "--steps", 6, "--softening", 0.01,
            "--level", 1, "--snapshot-every", 3, "--format", "bin", "--render-every", 3, "--render-size", 64,
            "--output-dir", tmp_path / "cli")
    for name in ("snap_000000.bin", "snap_000003.bin", "snap_000006.bin", "energy.csv", "frame_000000.png",
                 "frame_000006.png"):
        assert filecmp.cmp(tmp_path / "py" / name, tmp_path / "cli" / name, shallow=False), name
    # resume continues the module's run like the command's
    r = nearfield.simulate(output_dir=str(tmp_path / "py"), resume=True, **dict(args, steps=9))
    assert (r["first_step"], r["last_step"]) == (6, 9)


def test_simulate_adaptive_leaf_size_equal_cli(tmp_path):
    p = nearfield.generate("plummer", dim=3, n=300, seed=8)
    src = tmp_path / "in.bin"
    nearfield.write(str(src), p["pos"], p["m"], p["vel"])
    nearfield.simulate(p["pos"], p["m"], p["vel"], output_dir=str(tmp_path / "py"), kernel="cpu-fmm-adaptive", dt=0.01,
                       steps=3, softening=0.01, level=5, order=4, leaf_size=8, snapshot_every=3, format="bin")
    run_cli("simulate", "--input", src, "--kernel", "cpu-fmm-adaptive", "--dt", 0.01, "--steps", 3, "--softening", 0.01,
            "--level", 5, "--order", 4, "--leaf-size", 8, "--snapshot-every", 3, "--format", "bin",
            "--output-dir", tmp_path / "cli")
    for name in ("snap_000003.bin", "energy.csv"):
        assert filecmp.cmp(tmp_path / "py" / name, tmp_path / "cli" / name, shallow=False), name
    for run in ("py", "cli"):  # run.ini differs only in its input line (the module's has no file)
        assert "leaf_size = 8" in (tmp_path / run / "run.ini").read_text()


def test_kernels_are_the_registry():
    listing = run_cli("bench", "--list").stdout
    names = [k["name"] for k in nearfield.kernels()]
    for name in names:
        assert name in listing
    k = {k["name"]: k for k in nearfield.kernels()}
    assert k["cpu-n3"]["newton3"] and not k["cpu-n3"]["gpu"] and k["cpu-n3"]["near_field"]
    assert k["bpb"]["gpu"] and k["cpu-fmm"]["far_field"] and k["cpu-allpairs"]["all_pairs"]
    assert all(k[n]["runnable"] for n in CPU_KERNELS)
