"""Engine throughput against the floor (drawing the random numbers alone) and a naive loop.

Prints, for d in {2, 5, 10, 20}, agent-rounds per second of:

* ``engine 1t`` / ``engine 2t``: ``simulate`` with SA-OLS on 1 and 2 threads,
* ``draw-only``: a compiled loop drawing exactly the random numbers the engine draws
  (d + 2 normals for the context, a normal for the noise) and nothing else,
* ``naive``: SA-OLS as typical research code writes it: a Python loop refitting
  ``numpy.linalg.lstsq`` on all clean data every round, at T = 10^4,

and the ratios the targets are stated in (engine 1t / draw-only, engine 1t / naive). Every
number is measured in the same run (best of ``--repeat``), since the machines are noisy.

Usage: ``python benchmarks/engine.py [--horizon 1000000] [--repeat 3] [--dims 2 5 10 20]
[--delay 100 --period 10]`` (the last two add a table of the delayed game's throughput)
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from strategic_apple_tasting import Game, simulate


@numba.njit(cache=False)
def _draw_only(context_rng, noise_rng, horizon, d):
    acc = 0.0
    for _ in range(horizon):
        for _ in range(d + 2):
            acc += context_rng.standard_normal()
        acc += noise_rng.standard_normal()
    return acc


def draw_only_rate(d: int, horizon: int, repeat: int) -> float:
    rngs = [np.random.default_rng(s) for s in (1, 2)]
    _draw_only(*rngs, 10, d)
    return horizon / min(_timed(lambda: _draw_only(*rngs, horizon, d)) for _ in range(repeat))


def engine_rate(d: int, horizon: int, threads: int, repeat: int, delay: int = 0,
                period: int = 1) -> float:
    game = Game(dimension=d, delta=0.1, delay=delay, period=period)
    seeds = 2 * threads
    simulate(game, ["sa-ols"], 100, seeds=1)  # compile (or load the cache) outside the timing
    best = min(_timed(lambda: simulate(game, ["sa-ols"], horizon, seeds=seeds, threads=threads))
               for _ in range(repeat))
    return seeds * horizon / best


def naive_rate(d: int, horizon: int) -> float:
    """SA-OLS written the usual way: Python loop, numpy per round, lstsq on all data."""
    game = Game(dimension=d, delta=0.1)
    inst = game.instance(0)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    X, y = [], []
    theta_hat = np.zeros(d)
    for t in range(horizon):
        if t >= d:
            theta_hat = np.linalg.lstsq(np.array(X), np.array(y), rcond=None)[0]
        beta = theta_hat if t >= d else np.zeros(d)
        c = game.delta * np.linalg.norm(beta) if t >= d else -1.0
        z = rng.standard_normal(d)
        x = z / np.linalg.norm(z) * rng.random() ** (1 / d)
        gap = (c - beta @ x) / max(np.linalg.norm(beta), 1e-300)
        x_obs = x + gap * beta / np.linalg.norm(beta) if 0 < gap <= game.delta else x
        accepted = beta @ x_obs >= c - 1e-12
        reward = inst.theta1 @ x + game.sigma * rng.standard_normal()
        if accepted and (t < d or beta @ x_obs > c + 1e-9):
            X.append(x_obs)
            y.append(reward)
    return horizon / (time.perf_counter() - start)


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--naive-horizon", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 5, 10, 20])
    parser.add_argument("--delay", type=int, default=0,
                        help="also time the engine with outcomes this many rounds late")
    parser.add_argument("--period", type=int, default=1,
                        help="... and rules held this many rounds (with --delay)")
    args = parser.parse_args()
    print(f"numba {numba.__version__}, numpy {np.__version__}; SA-OLS, δ = 0.1, apple tasting; "
          f"engine T = {args.horizon:,}, naive T = {args.naive_horizon:,}; best of "
          f"{args.repeat}")
    header = ("d", "engine 1t", "engine 2t", "draw-only", "naive", "1t/draw", "1t/naive",
              "2t/1t")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" for _ in header) + "|")
    for d in args.dims:
        e1 = engine_rate(d, args.horizon, 1, args.repeat)
        e2 = engine_rate(d, args.horizon, 2, args.repeat)
        floor = draw_only_rate(d, args.horizon, args.repeat)
        naive = naive_rate(d, args.naive_horizon)
        cells = (str(d), f"{e1 / 1e6:.2f} M/s", f"{e2 / 1e6:.2f} M/s", f"{floor / 1e6:.2f} M/s",
                 f"{naive / 1e3:.1f} k/s", f"{e1 / floor:.2f}", f"{e1 / naive:.0f}×",
                 f"{e2 / e1:.2f}")
        print("| " + " | ".join(cells) + " |", flush=True)
    if args.delay or args.period > 1:
        print(f"\nengine 1t with delay {args.delay}, period {args.period}, against delay 0, "
              "period 1 (alternating, best of --repeat):")
        print("| d | delay 0 | delayed | ratio |\n|---:|---:|---:|---:|")
        for d in args.dims:
            plain = engine_rate(d, args.horizon, 1, args.repeat)
            late = engine_rate(d, args.horizon, 1, args.repeat, args.delay, args.period)
            print(f"| {d} | {plain / 1e6:.2f} M/s | {late / 1e6:.2f} M/s | {late / plain:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
