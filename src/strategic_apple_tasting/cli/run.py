"""``sat run`` and ``sat demo``: simulate learners on one game and write the results."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

from .common import (
    add_game_flags,
    add_run_flags,
    budget_words,
    game_from_args,
    learner_name,
    prepare_out,
)

DEMO_LEARNERS = ("sa-ols", "naive-greedy", "oracle")


def fill_run(run: argparse.ArgumentParser) -> None:
    from ..learners import LEARNERS

    run.add_argument("--learner", "-l", action="append", type=learner_name, required=True,
                     metavar="NAME", help="learner to run (repeat to compare on the same "
                     f"seeds): one of {', '.join(sorted(LEARNERS))}, or an import path "
                     "package.module:Class")
    add_game_flags(run, data=True)
    add_run_flags(run, horizon=None, seeds=8)
    run.add_argument("--out", "-o", type=Path, required=True, help="directory for results")


def fill_demo(demo: argparse.ArgumentParser) -> None:
    add_game_flags(demo, dimension=5)
    add_run_flags(demo, horizon=1_000_000, seeds=8)
    demo.add_argument("--out", "-o", type=Path, default=Path("demo-output"),
                      help="directory for results (default demo-output)")


def _run_progress(start: float):
    """``sat run``'s progress: a line per finished learner × seed run, with an estimate of
    the time left only once a run has finished (before that it would mostly measure
    compilation)."""
    def show(done: int, total: int) -> None:
        took = time.perf_counter() - start
        left = took / done * (total - done)
        tail = f", about {left:,.0f} s left" if done < total else ""
        print(f"[{done}/{total} runs] {took:,.0f} s{tail}", flush=True)
    return show


def _simulate(args: argparse.Namespace, learners: Sequence[str]):
    from ..engine import MAX_SEED, simulate
    from ..engine.simulate import check_learners
    from ..learners import make_learner

    game = game_from_args(args)
    if args.first_seed + args.seeds - 1 > MAX_SEED:
        raise ValueError(f"--first-seed + --seeds - 1 must be at most 2^63 - 1, got "
                         f"{args.first_seed} + {args.seeds} - 1")
    prepare_out(args.out, force=args.force)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    rounds = len(learners) * args.seeds * args.horizon
    max_memory = None if args.max_memory is None else int(args.max_memory * 2**30)
    # The learners' parameters in this game (δ by group beyond their input bound): refused
    # before the run's first line, as every bad flag.
    check_learners(game, [make_learner(n) for n in learners], args.horizon)
    print(f"running {', '.join(learners)} × {args.seeds} seeds × {args.horizon:,} rounds "
          f"(d = {game.dimension}, {budget_words(game)}, {args.feedback} feedback"
          f"{f', data {args.data}' if getattr(args, 'data', None) else ''}) "
          f"on {args.threads} thread(s)", flush=True)
    start = time.perf_counter()
    table = simulate(game, [make_learner(n) for n in learners], args.horizon, seeds,
                     threads=args.threads, per_decade=args.per_decade, max_memory=max_memory,
                     progress=_run_progress(start))
    took = time.perf_counter() - start
    print(f"done in {took:.1f} s ({rounds / took:,.0f} agent-rounds/s, compilation included)")
    return table


def _write(table, out: Path) -> str:
    """Write the results, then the summary; returns the summary (printed after every file is
    safely written, so a closed pipe cannot lose anything)."""
    from ..experiments.storage import write_table, write_text
    from ..reports.summary import summary_text

    out.mkdir(parents=True, exist_ok=True)
    write_table(table, out / "results.parquet")
    text = summary_text(table)
    write_text(out / "summary.txt", text + "\n")
    return text


def _show(text: str, out: Path, figure: Path | None = None) -> None:
    print()
    print(text)
    print()
    print(f"results: {out / 'results.parquet'}")
    if figure is not None:
        print(f"figure:  {figure}")


def cmd_run(args: argparse.Namespace) -> int:
    table = _simulate(args, args.learner)
    _show(_write(table, args.out), args.out)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ..reports.plots import plot_regret

    table = _simulate(args, DEMO_LEARNERS)
    text = _write(table, args.out)
    png = args.out / "regret.png"
    tmp = args.out / ".regret.tmp.png"
    plot_regret(table, tmp, title=(
        f"SA-OLS vs naive greedy vs oracle (d = {args.dimension}, δ = {args.delta:g}, "
        f"{args.seeds} seeds, mean with 95% band)"))
    tmp.replace(png)
    _show(text, args.out, png)
    return 0
