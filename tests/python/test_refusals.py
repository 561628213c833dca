"""Bad arrays and bad requests are refused before any work, naming the problem; the command
line's refusals keep their messages (nearfield.UsageError / InputError, both ValueError)."""
import numpy as np
import pytest

import nearfield
from conftest import cli_error

POS = np.random.default_rng(1).random((10, 3))
M = np.ones(10)


@pytest.mark.parametrize("pos,m,error,words", [
    (POS.astype(np.float16), M, TypeError, "dtype float16 is not supported"),
    (POS.astype(np.int64), M, TypeError, "dtype int64 is not a floating type"),
    (POS.astype(np.int32), M, TypeError, "not a floating type"),
    (POS.astype(np.complex128), M, TypeError, "not a floating type"),
    (POS.astype(object), M, TypeError, "dtype object is not a floating type"),
    (POS, M.astype(np.int64), TypeError, "m: dtype int64"),
    (np.asfortranarray(POS), M, TypeError, "np.ascontiguousarray"),
    (POS[::2], M[::2], TypeError, "not C-contiguous"),
    (POS.T.copy().T, M, TypeError, "not C-contiguous"),
    (POS, np.ones(20)[::2], TypeError, "m: the array is not C-contiguous"),
    (POS.ravel(), M, ValueError, "expected an (N, 2) or (N, 3) array, got 1 dimension(s)"),
    (POS[:, :1].copy(), M, ValueError, "got shape (10, 1)"),
    (np.zeros((10, 4)), M, ValueError, "got shape (10, 4)"),
    (POS, M[:9], ValueError, "9 masses for 10 positions"),
    (POS, M.reshape(10, 1), ValueError, "expected a 1-D array"),
    (np.where(np.arange(30).reshape(10, 3) == 7, np.nan, POS), M, ValueError, "pos[2, 1] is nan"),
    (np.where(np.arange(30).reshape(10, 3) == 4, np.inf, POS), M, ValueError, "pos[1, 1] is inf"),
    (POS, np.where(np.arange(10) == 3, np.nan, M), ValueError, "m[3] is nan"),
    (POS, np.where(np.arange(10) == 5, -1.0, M), ValueError, "m[5] = -1: negative mass"),
    ("not numbers", M, TypeError, "pos"),
])
def test_bad_arrays(pos, m, error, words):
    for call in (lambda: nearfield.forces(pos, m, softening=0.1, kernel="cpu-omp", level=1),
                 lambda: nearfield.validate(pos, m, softening=0.1, kernel="cpu-omp", level=1),
                 lambda: nearfield.write("/nonexistent/never.csv", pos, m)):
        with pytest.raises(error) as e:
            call()
        assert words in str(e.value)


def test_float32_and_lists_are_taken():
    a = nearfield.forces(POS.astype(np.float32), M.astype(np.float32), softening=0.1, kernel="cpu-allpairs")
    b = nearfield.forces(POS.astype(np.float32).astype(np.float64), M, softening=0.1, kernel="cpu-allpairs")
    assert np.array_equal(a, b)
    c = nearfield.forces(POS.tolist(), M.tolist(), softening=0.1, kernel="cpu-allpairs")
    assert np.array_equal(c, nearfield.forces(POS, M, softening=0.1, kernel="cpu-allpairs"))


def test_other_arguments():
    with pytest.raises(TypeError, match="level: expected an int"):
        nearfield.forces(POS, M, softening=0.1, kernel="cpu-omp", level=1.5)
    with pytest.raises(ValueError, match="neither an int nor"):
        nearfield.forces(POS, M, softening=0.1, kernel="cpu-omp", level="deep")
    with pytest.raises(TypeError):
        nearfield.forces(POS, M, 0.1)  # softening is keyword-only
    with pytest.raises(TypeError):
        nearfield.forces(POS, M, kernel="cpu-omp")  # and required
    with pytest.raises(ValueError, match="3D points for 2D particles"):
        nearfield.forces_at(POS, POS[:, :2].copy(), M, softening=0.1)
    with pytest.raises(ValueError, match="leaf_size: must be at least 1, not 0"):
        nearfield.forces(POS, M, softening=0.1, kernel="cpu-fmm-adaptive", level=2, leaf_size=0)
    with pytest.raises(TypeError, match="leaf_size: expected an int"):
        nearfield.forces(POS, M, softening=0.1, kernel="cpu-fmm-adaptive", level=2, leaf_size=8.0)
    with pytest.raises(nearfield.InputError, match="lies outside the domain"):
        nearfield.forces(POS, M, softening=0.1, kernel="cpu-omp", level=1, domain=(0, 0, 0, 0.5))
    # Values pybind11 could not cast had raised RuntimeError "Unable to cast Python instance".
    with pytest.raises(ValueError, match="level: 1180591620717411303424 is out of range"):
        nearfield.forces(POS, M, softening=0.1, kernel="cpu-omp", level=2**70)
    with pytest.raises(ValueError, match="n: 1000000000000000000000000000000 is out of range"):
        nearfield.generate("uniform", n=10**30)
    with pytest.raises(TypeError, match="tree: expected a nearfield.Tree"):
        nearfield.forces(POS, M, softening=0.1, kernel="cpu-omp", level=1, tree=5)
    with pytest.raises(TypeError, match="dense: expected a bool"):
        nearfield.Tree(POS, 2, dense="yes")
    # sample=0 had validated every particle; the command line refuses --sample 0.
    with pytest.raises(nearfield.UsageError, match="--sample: 0 is not a valid value"):
        nearfield.validate(POS, M, softening=0.1, kernel="cpu-omp", level=1, sample=0)


def test_write_refuses_what_would_not_read_back(tmp_path):
    # Ids numpy would have cut (1.9 -> 1) or wrapped (2^63 + 5), repeated ids, a NaN time.
    with pytest.raises(TypeError, match="id: expected integers, got dtype float64"):
        nearfield.write(str(tmp_path / "a.csv"), POS[:2], M[:2], id=np.array([1.9, 2.5]))
    with pytest.raises(ValueError, match="past int64"):
        nearfield.write(str(tmp_path / "a.csv"), POS[:2], M[:2], id=np.array([2**63 + 5, 3], dtype=np.uint64))
    for name in ("a.csv", "a.bin"):
        with pytest.raises(nearfield.UsageError, match="ids must be unique"):
            nearfield.write(str(tmp_path / name), POS[:3], M[:3], id=np.array([4, 7, 4]))
    with pytest.raises(nearfield.UsageError, match="time = nan is not finite"):
        nearfield.write(str(tmp_path / "a.bin"), POS[:2], M[:2], time=float("nan"))
    assert not list(tmp_path.iterdir())
    assert nearfield.write(str(tmp_path / "e.tab"), np.zeros((0, 2)), np.zeros(0)) == ["2D (an empty table reads as 3D)"]


@pytest.mark.parametrize("module_args,cli_args", [
    (dict(kernel="nope"), ["--kernel", "nope"]),
    (dict(kernel="cpu-omp", softening=-1.0), ["--kernel", "cpu-omp", "--softening", "-1"]),
    (dict(kernel="cpu-omp", level=40), ["--kernel", "cpu-omp", "--level", "40"]),
    (dict(kernel="cpu-serial", level=12), ["--kernel", "cpu-serial", "--level", "12"]),
    (dict(kernel="cpu-fmm", order=30), ["--kernel", "cpu-fmm", "--order", "30"]),
    (dict(kernel="cpu-omp", order=3), ["--kernel", "cpu-omp", "--order", "3"]),
    (dict(kernel="cpu-omp", precision="quad"), ["--kernel", "cpu-omp", "--precision", "quad"]),
    (dict(kernel="cpu-allpairs", mask="some"), ["--kernel", "cpu-allpairs", "--mask", "some"]),
    (dict(kernel="cpu-omp", gpus=2), ["--kernel", "cpu-omp", "--gpus", "2"]),
    (dict(kernel="cpu-fmm", leaf_size=16), ["--kernel", "cpu-fmm", "--leaf-size", "16"]),
])
def test_messages_are_the_commands(tmp_path, module_args, cli_args):
    src = tmp_path / "in.csv"
    nearfield.write(str(src), POS, M)
    args = dict(softening=0.1, level=1)
    args.update(module_args)
    with pytest.raises(ValueError) as e:
        nearfield.forces(POS, M, **args)
    assert isinstance(e.value, nearfield.UsageError)
    given = cli_args[::2]
    defaults = [a for o, v in (("--level", "1"), ("--softening", "0.1")) if o not in given for a in (o, v)]
    cli = ["forces", "--input", src, "--output", tmp_path / "a.csv"] + defaults + cli_args
    assert str(e.value) == cli_error(*cli)


@pytest.mark.skipif(nearfield.gpu_available(), reason="a CUDA GPU is present: GPU kernels run")
@pytest.mark.parametrize("kernel", [k["name"] for k in nearfield.kernels() if k["gpu"]])
def test_gpu_kernel_without_gpu(tmp_path, kernel):
    src = tmp_path / "in.csv"
    nearfield.write(str(src), POS, M)
    with pytest.raises(nearfield.UsageError) as e:
        nearfield.forces(POS, M, softening=0.1, kernel=kernel, level=1)
    assert "needs a CUDA GPU" in str(e.value)
    assert str(e.value) == cli_error("forces", "--input", src, "--kernel", kernel, "--level", 1, "--output",
                                     tmp_path / "a.csv")
    with pytest.raises(nearfield.UsageError, match="needs a CUDA GPU"):
        nearfield.Tree(POS, 1).forces(M, softening=0.1, kernel=kernel)


def test_file_errors_are_the_readers(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y,m\n0,0,1\n1,oops,1\n")
    with pytest.raises(nearfield.InputError) as e:
        nearfield.read(str(bad))
    assert str(e.value) == cli_error("convert", "--input", bad)
    with pytest.raises(nearfield.InputError, match="cannot open"):
        nearfield.read(str(tmp_path / "missing.bin"))
    with pytest.raises(nearfield.UsageError, match="cannot tell the format"):
        nearfield.write(str(tmp_path / "x.weird"), POS, M)


def test_simulate_refusals(tmp_path):
    with pytest.raises(nearfield.UsageError, match="--dt must be"):
        nearfield.simulate(POS, M, kernel="cpu-allpairs", dt=0, steps=1, softening=0.1, output_dir=str(tmp_path / "a"))
    # A tree kernel without a level takes "auto", as forces() does (the README's example had failed).
    r = nearfield.simulate(POS, M, kernel="cpu-omp", dt=0.1, steps=1, softening=0.1, output_dir=str(tmp_path / "b"))
    assert "level " in r["log"] and (tmp_path / "b" / "run.ini").read_text().count("level_requested = auto") == 1
    with pytest.raises(nearfield.UsageError, match="uses none"):
        nearfield.simulate(POS, M, kernel="cpu-allpairs", level=3, dt=0.1, steps=1, softening=0.1,
                           output_dir=str(tmp_path / "b2"))
    with pytest.raises(nearfield.UsageError, match="more than the"):
        nearfield.simulate(POS, M, kernel="cpu-allpairs", subsample=len(M) + 1, dt=0.1, steps=1, softening=0.1,
                           output_dir=str(tmp_path / "b3"))
    assert not (tmp_path / "b3").exists()
    nearfield.simulate(POS, M, kernel="cpu-allpairs", dt=0.1, steps=1, softening=0.1, output_dir=str(tmp_path / "c"))
    with pytest.raises(nearfield.UsageError, match="already holds a run"):
        nearfield.simulate(POS, M, kernel="cpu-allpairs", dt=0.1, steps=1, softening=0.1, output_dir=str(tmp_path / "c"))


def test_overflowing_force_raises():
    # Masses of 1e30 a micrometre apart: the force passes float32's range; nothing is returned.
    pos = np.array([[0, 0, 0], [1e-6, 0, 0], [0.5, 0.5, 0.5], [1, 1, 1]], dtype=float)
    m = np.array([1e30, 1e30, 1.0, 1.0])
    with pytest.raises(RuntimeError, match="are not finite"):
        nearfield.forces(pos, m, softening=0.0, kernel="cpu-serial", level=1)
