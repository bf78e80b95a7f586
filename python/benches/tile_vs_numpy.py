"""atomjit.tile.atomic_add against numpy.add.at on the same data (issue 13's Python bench).

    python python/benches/tile_vs_numpy.py [--n 1048576] [--repeat 15]

Build the package in release first (`maturin develop --release -m python/Cargo.toml`): the dev
build that scripts/test makes runs the per-call preparation unoptimised. Prints the median of
`--repeat` calls of each, single-thread figures first, and their ratio (numpy's time over
atomjit's: above 1 means atomjit is faster). Both do the same updates: `a[idx[i]] += 1` for
every i, with uniform random indices (contended only by chance) and with a permutation.
"""

import argparse
import statistics
import time

import numpy as np

import atomjit
from atomjit.tile import atomic_add


def median_ms(f, repeat):
    f()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1 << 20)
    p.add_argument("--repeat", type=int, default=15)
    args = p.parse_args()
    n = args.n
    rng = np.random.default_rng(1)
    print(f"numpy {np.__version__}, n = {n}, median of {args.repeat}")
    for label, idx in [("random", rng.integers(0, n, n)), ("permutation", rng.permutation(n))]:
        for dtype in (np.int32, np.float32):
            update = np.ones(n, dtype=dtype)
            ref = np.zeros(n, dtype=dtype)
            t_np = median_ms(lambda: np.add.at(ref, idx, update), args.repeat)
            for threads in (1, 2):
                engine = atomjit.Engine(threads=threads)
                a = np.zeros(n, dtype=dtype)
                t_aj = median_ms(lambda: atomic_add(a, idx, update, engine=engine), args.repeat)
                print(f"{label:12} {np.dtype(dtype).name:8} threads={threads}: "
                      f"atomjit {t_aj:7.2f} ms, numpy.add.at {t_np:7.2f} ms, "
                      f"numpy/atomjit {t_np / t_aj:5.2f}")


if __name__ == "__main__":
    main()
