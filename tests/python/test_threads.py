"""Compute runs without the GIL, and calls from several Python threads give the serial results."""
import threading

import numpy as np

import nearfield


def test_gil_released_during_compute():
    rng = np.random.default_rng(3)
    pos = rng.random((9000, 3))
    m = rng.random(9000)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (nearfield.forces(pos, m, softening=1e-3, kernel="cpu-allpairs",
                                                               precision="double"), done.set()))
    ticks = 0
    worker.start()
    while not done.is_set() and worker.is_alive():
        ticks += 1  # runs only while the worker does not hold the GIL
    worker.join()
    assert done.is_set()
    assert ticks > 1000, ticks


def test_concurrent_calls_equal_serial():
    rng = np.random.default_rng(4)
    pos = rng.random((3000, 2))
    m = rng.random(3000)
    tree = nearfield.Tree(pos, 3)
    kernels = ["cpu-serial", "cpu-n3", "cpu-omp", "cpu-omp-n3", "cpu-fmm"]
    serial = {k: nearfield.forces(pos, m, softening=1e-3, kernel=k, level=3) for k in kernels}
    results = {}

    def run(i):
        k = kernels[i % len(kernels)]
        a = nearfield.forces(pos, m, softening=1e-3, kernel=k, level=3)
        b = tree.forces(m, softening=1e-3, kernel=k)
        results[i] = (k, a, b)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 10
    for k, a, b in results.values():
        assert np.array_equal(a, serial[k]) and np.array_equal(b, serial[k]), k
