"""The decision service's writer alone: its thread's CPU a decision, by group size.

The writer (``service/deciding.py``) commits every request waiting into one transaction (a
group commit). Its Python runs under the interpreter lock the event loop needs too, so its CPU
a decision bounds what a server can answer. Here groups of G single decisions (SA-OLS's
service rule, d = 5, fresh ids) go through ``Writer._commit`` on a SQLite file
(``synchronous=FULL``: each commit synced, as served), with no server and no HTTP: the thread
CPU time (``time.thread_time``: user and system, the sync's included) and the wall time a
decision, median of ``--repeat`` runs of ``--groups`` groups after 50 untimed ones.

Usage: ``PYTHONPATH=src .venv/bin/python benchmarks/writer.py [--sizes 1 4 16 64]``; for a
before/after, run it with each checkout's ``src`` in turn.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import sqlalchemy as sa

from strategic_apple_tasting.service import store
from strategic_apple_tasting.service.deciding import Writer


def _group(writer: Writer, loop: asyncio.AbstractEventLoop, rng: np.random.Generator,
           size: int) -> list:
    # (the requests as Writer.submit makes them, without an event loop running)
    from strategic_apple_tasting.service.deciding import _Request

    return [_Request("decisions", [(None, [float(v) for v in rng.standard_normal(5)])],
                     loop.create_future(), loop, "benchmark", [None]) for _ in range(size)]


def measure(size: int, groups: int, repeat: int, path: Path) -> tuple[float, float]:
    """(CPU µs, wall µs) a decision in groups of ``size``, medians over ``repeat`` runs."""
    engine = store.connect(f"sqlite:///{path}")
    store.migrate(engine)
    with store.transaction(engine) as conn:
        conn.execute(sa.insert(store.rules).values(
            version=1, kind="linear", beta="[0.1, 0.2, 0.3, 0.4, 0.5]", threshold=0.0,
            probability=1.0, after_seq=0, log_at=0, published_at=0.0, learned=5))
    writer = Writer(engine, bandit=False)
    loop = asyncio.new_event_loop()
    rng = np.random.default_rng(0)
    try:
        for _ in range(50):
            writer._commit(_group(writer, loop, rng, size))
        cpu, wall = [], []
        for _ in range(repeat):
            made = [_group(writer, loop, rng, size) for _ in range(groups)]
            c0, w0 = time.thread_time(), time.perf_counter()
            for group in made:
                writer._commit(group)
            cpu.append((time.thread_time() - c0) / (groups * size) * 1e6)
            wall.append((time.perf_counter() - w0) / (groups * size) * 1e6)
        return statistics.median(cpu), statistics.median(wall)
    finally:
        loop.close()
        engine.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| group size | writer CPU µs a decision | wall µs a decision |")
    print("|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="writer-") as work:
        for size in args.sizes:
            cpu, wall = measure(size, args.groups, args.repeat, Path(work) / f"g{size}.db")
            print(f"| {size} | {cpu:.1f} | {wall:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
