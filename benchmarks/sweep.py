"""Throughput of a sweep: local process pool and Dask, 1 and 2 workers, against the bare engine.

The same cells run four ways; each rate is printed as a ratio to the bare engine (the cells run
one after another in this process by `simulate`) measured in the same run, since the machines are
noisy. Sweep timings are wall time from submission to the last file written, including starting
the workers (and loading their compiled kernels from the cache) for "cold" pools, and writing
Parquet. Dask's workers, and the "started" local pools, are up and warm before the clock starts.

    .venv/bin/python benchmarks/sweep.py [--cells 8] [--horizon 200000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from strategic_apple_tasting.experiments.spec import check_spec
from strategic_apple_tasting.experiments.sweep import default_executor, run_sweep


def _spec(cells: int, horizon: int, seeds_per_cell: int):
    return check_spec({"horizon": horizon, "seeds": cells * seeds_per_cell,
                       "seeds_per_cell": seeds_per_cell,
                       "game": {"dimension": 5, "delta": 0.1, "sigma": 0.1},
                       "learners": [{"name": "sa-ols"}]})


def bare(spec) -> float:
    start = time.perf_counter()
    for cell in spec.cells:
        game, learner = cell.build()
        from strategic_apple_tasting import simulate

        simulate(game, [learner], cell.horizon, list(cell.seeds), per_decade=cell.per_decade)
    return time.perf_counter() - start


def local(spec, workers: int) -> float:
    """Wall time of the sweep on a fresh pool, starting the workers included."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        run_sweep(spec, tmp, workers=workers)
        return time.perf_counter() - start


def local_started(spec, workers: int) -> float:
    """The same on a pool whose workers have started and loaded the kernel (as Dask's have)."""
    warm = _spec(workers, 1000, 1)
    with default_executor(workers) as pool, tempfile.TemporaryDirectory() as tmp:
        run_sweep(warm, f"{tmp}/warm", executor=pool)
        start = time.perf_counter()
        run_sweep(spec, f"{tmp}/run", executor=pool)
        return time.perf_counter() - start


def dask(spec, workers: int) -> float:
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            run_sweep(spec, tmp, executor=client.get_executor())
            return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", type=int, default=8)
    p.add_argument("--horizon", type=int, default=200_000)
    p.add_argument("--seeds-per-cell", type=int, default=2)
    p.add_argument("--repeat", type=int, default=1)
    args = p.parse_args()
    spec = _spec(args.cells, args.horizon, args.seeds_per_cell)
    rounds = spec.rounds
    bare(_spec(1, 1000, 1))  # compile (or load) the kernel first
    local(_spec(1, 1000, 1), 1)  # and fill the on-disk cache workers load from
    print(f"{len(spec.cells)} cells × {args.seeds_per_cell} seeds × {args.horizon:,} rounds "
          f"= {rounds:,} agent-rounds (SA-OLS, d = 5); best of {args.repeat}")
    runs = [("bare engine, this process", bare, ()),
            ("local pool, 1 worker (cold)", local, (1,)),
            ("local pool, 2 workers (cold)", local, (2,)),
            ("local pool, 1 worker (started)", local_started, (1,)),
            ("local pool, 2 workers (started)", local_started, (2,))]
    try:
        import distributed  # noqa: F401

        runs += [("Dask LocalCluster, 1 worker", dask, (1,)),
                 ("Dask LocalCluster, 2 workers", dask, (2,))]
    except ImportError:
        print("(distributed not installed: Dask rows skipped)")
    reference = None
    print(f"{'how':32s} {'seconds':>8s} {'M rounds/s':>11s} {'vs bare':>8s}")
    for name, fn, extra in runs:
        took = min(fn(spec, *extra) for _ in range(args.repeat))
        reference = reference or took
        print(f"{name:32s} {took:8.2f} {rounds / took / 1e6:11.2f} {reference / took:8.2f}",
              flush=True)


if __name__ == "__main__":
    main()
