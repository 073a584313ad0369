"""What the ``sat`` commands share: the parser class, the flags' argument types, the game and
run flags, the checks of an output directory and the progress lines.

Bad input gets one line naming the flag, the value and what is allowed (:class:`UsageError` or
``ValueError``; ``sat`` exits with status 2). Nothing here imports the package's heavy layers at
import time: they are imported where a flag's defaults need them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from ..experiments.sweep import Progress
    from ..game import Game


class UsageError(Exception):
    """A command-line mistake: reported in one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """Errors raise :class:`UsageError`. A subcommand's flags can be added on first use
    (``fill``, called when the subcommand parses or formats its help): their defaults and
    choices come from the package's heavy layers, which ``sat --help`` need not import."""

    def __init__(self, *args, fill: Callable[[Parser], None] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._fill = fill

    def _filled(self) -> None:
        if self._fill is not None:
            fill, self._fill = self._fill, None
            fill(self)

    def parse_known_args(self, args=None, namespace=None):
        self._filled()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._filled()
        return super().format_usage()

    def format_help(self) -> str:
        self._filled()
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def int_in(name: str, low: int, high: int | None = None, shown: str | None = None):
    """An integer flag in [low, high], refused in one line naming the flag and the range."""
    allowed = f"an integer >= {low}" if high is None else f"an integer from {low} to " + (
        shown or f"{high:,}")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be {allowed}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{name} must be {allowed}, got {text!r}")
        return value
    return parse


def positive_int(name: str):
    return int_in(name, 1)


def learner_name(text: str) -> str:
    """``--learner``: a registry name or an import path, resolved (imported) at once."""
    from ..learners import learner_class

    try:
        learner_class(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def gib(name: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (value > 0 and value != float("inf")):
            raise argparse.ArgumentTypeError(
                f"{name} must be a positive number of GiB, got {text!r}")
        return value
    return parse


def number(name: str):
    def parse(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
    return parse


def cost_rows(text: str) -> list:
    """``--cost``: 'a,b,...' (a diagonal) or 'a,b;c,d' (rows); checked against d later."""
    try:
        rows = [[float(v) for v in row.split(",")] for row in text.split(";")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--cost must be numbers separated by ',' (and rows by ';'), got {text!r}") from None
    return rows[0] if ";" not in text else rows


def name_list(flag: str):
    def parse(text: str) -> list[str]:
        names = [n.strip() for n in text.split(",") if n.strip()]
        if not names:
            raise argparse.ArgumentTypeError(f"{flag} must be column names separated by ',', "
                                             f"got {text!r}")
        return names
    return parse


def add_protocol_flags(g: Any, *, default: str | None) -> None:
    """``--protocol`` and ``--holdout-share``: how a data game's applicants come from its rows."""
    from ..game.data import HOLDOUT_SHARE, PROTOCOLS

    shown = default or "replay"
    g.add_argument("--protocol", choices=PROTOCOLS, default=default,
                   help=f"--data: how applicants come from the rows (default {shown}): "
                   "holdout (a share of rows held out per seed, stratified by outcome; the "
                   "rule in force scored on them, out of sample), once (each row at most once, "
                   "a fresh order per seed; horizon <= rows) or replay (rows redrawn with "
                   "replacement: every profit in-sample)")
    g.add_argument("--holdout-share", type=number("--holdout-share"), default=None,
                   help=f"--protocol holdout: the share of rows held out (default "
                   f"{HOLDOUT_SHARE:g})")


def add_game_flags(p: argparse.ArgumentParser, *, dimension: int | None = None,
                    data: bool = False) -> None:
    from ..experiments.settings import FLAG_AGENTS, FLAG_CONTEXTS, MAX_DIMENSION
    from ..game import FEEDBACK, REWARDS

    g = p.add_argument_group("game")
    # Required unless a data set gives it (checked in game_from_args: "required: --dimension").
    g.add_argument("--dimension", "-d", type=int_in("--dimension", 1, MAX_DIMENSION),
                   default=dimension, help="context dimension d" + (
                       " (a data set's own with --data)" if data else ""))
    if data:
        from ..scenarios.datasets import DATASETS

        g.add_argument("--data", choices=tuple(DATASETS), default=None,
                       help="play on a data set's rows and real outcomes: German credit (the "
                       "'lending' extra), the FICO TransRisk tables or Taiwanese card holders "
                       "(taiwan-credit); its agents game its "
                       "--gameable features, and it fixes d, the contexts and the agents")
        g.add_argument("--gameable", metavar="A,B,...", default=None,
                       help="--data: the attributes applicants can change (default: German "
                       "credit's checking and savings balances and telephone; FICO's score; "
                       "taiwan-credit's latest bill and payment, BILL_AMT1,PAY_AMT1); "
                       "'none' for none")
        g.add_argument("--rewards", choices=REWARDS, default=None,
                       help="--data: accepting earns the row's recorded outcome (default) or "
                       "the least-squares rule's prediction plus --sigma noise (linear)")
        g.add_argument("--delta-by-group", metavar="G=B,...", default=None,
                       help=f"--data: {DELTA_BY_GROUP_HELP}")
        add_protocol_flags(g, default=None)
    g.add_argument("--delta", type=number("--delta"), default=0.1,
                   help="agents' manipulation budget δ (default 0.1)")
    g.add_argument("--feedback", choices=FEEDBACK, default="apple",
                   help="apple tasting or bandit feedback (default apple)")
    g.add_argument("--r0", type=number("--r0"), default=0.0,
                   help="reward of rejecting, apple tasting only (default 0)")
    g.add_argument("--sigma", type=number("--sigma"), default=None,
                   help="reward noise standard deviation (default 0.1; with --data, the "
                   "rewards' spread about the least-squares rule, what learners are told)")
    g.add_argument("--contexts", choices=sorted(FLAG_CONTEXTS), default="uniform-ball",
                   help="context distribution (default uniform-ball); greedy-trap and "
                   "orthogonal-traps (a trap in every plane: d >= 2, r0 = 0) are the built-in "
                   "adversarial sequences")
    g.add_argument("--radius", type=number("--radius"), default=1.0,
                   help="radius of the context ball or sphere (default 1)")
    g.add_argument("--c0", type=number("--c0"), default=0.5,
                   help="mixture weight of the uniform part, contexts=mixture (default 0.5)")
    g.add_argument("--truthful", type=number("--truthful"), default=0.0,
                   help="probability that an agent does not game (default 0)")
    g.add_argument("--agents", choices=sorted(FLAG_AGENTS), default="lazy",
                   help="agent model (default lazy)")
    g.add_argument("--tremble", type=number("--tremble"), default=0.05,
                   help="largest overshoot γ, agents=trembling (default 0.05)")
    g.add_argument("--adversarial-tremble", action="store_true",
                   help="agents=trembling: always overshoot by the most allowed")
    g.add_argument("--budget-low", type=number("--budget-low"), default=0.0,
                   help="agents=heterogeneous: budgets uniform on [budget-low, delta]")
    g.add_argument("--cost", type=cost_rows, default=None, metavar="A",
                   help="agents=ellipsoid: budget ‖A^½(x' − x)‖ ≤ δ; A's diagonal ('4,1') or "
                   "its rows ('4,1;1,2')")
    g.add_argument("--delay", type=int_in("--delay", 0, 10**9), default=0,
                   help="rounds before an observed outcome reaches the learner (default 0: "
                   "the paper's game)")
    g.add_argument("--delay-law", choices=("fixed", "uniform"), default="fixed",
                   help="every outcome --delay rounds late, or uniformly 0..2·delay "
                   "(default fixed)")
    g.add_argument("--period", type=int_in("--period", 1, 10**9), default=1,
                   help="rounds a published rule stays in force (default 1: the paper's game)")


def add_run_flags(p: argparse.ArgumentParser, *, horizon: int | None, seeds: int) -> None:
    from ..engine import MAX_HORIZON, MAX_PER_DECADE, MAX_SEED
    from ..engine.simulate import default_threads

    r = p.add_argument_group("run")
    r.add_argument("--horizon", "-T", type=int_in("--horizon", 1, MAX_HORIZON, "10^12"),
                   required=horizon is None, default=horizon, help="rounds per run (at most "
                   "10^12)")
    r.add_argument("--seeds", type=positive_int("--seeds"), default=seeds,
                   help=f"number of seeds (default {seeds})")
    r.add_argument("--first-seed", type=int_in("--first-seed", 0, MAX_SEED, "2^63 - 1"),
                   default=0, help="first seed (default 0)")
    r.add_argument("--threads", type=positive_int("--threads"), default=default_threads(),
                   help="worker threads (default: the CPUs available)")
    r.add_argument("--per-decade", type=int_in("--per-decade", 1, MAX_PER_DECADE),
                   default=20, help="recorded rounds per decade of t (default 20)")
    r.add_argument("--max-memory", type=gib("--max-memory"), default=None, metavar="GIB",
                   help="refuse a run needing more memory than this, in GiB (default: the "
                   "machine's physical memory)")
    r.add_argument("--force", action="store_true",
                   help="overwrite the results of an earlier run in --out")


#: What ``--delta-by-group`` means, for each command that takes it.
DELTA_BY_GROUP_HELP = ("a budget per group instead of --delta, every group named "
                       "('white=0.5,black=0.3,...'; FICO, German credit, taiwan-credit): "
                       "each applicant games with its group's, learners are told the largest")


def budget_words(game: Game) -> str:
    """δ as a run's first line states it: one budget, or each group's (learners are told the
    largest)."""
    if game.group_budgets is None:
        return f"δ = {game.delta:g}"
    pairs = zip(game.contexts.group_names, game.group_budgets, strict=True)
    return (f"δ by group {', '.join(f'{n} {b:g}' for n, b in pairs)}; learners are told "
            f"δ = {game.delta:g}")


def game_from_args(args: argparse.Namespace) -> Game:
    from ..experiments.settings import GAME_SETTINGS, game_from_settings

    if args.dimension is None and getattr(args, "data", None) is None:
        raise UsageError("the following arguments are required: --dimension (or --data)")
    return game_from_settings({k: getattr(args, k, default)
                               for k, default in GAME_SETTINGS.items()})


def os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def prepare_out(out: Path, *, force: bool, holds: str = "results.parquet",
                flag: str = "--out") -> Path:
    """Check, before any compute, that ``out`` is (or can be made) a directory we can write
    and that it does not hold an earlier run's results (unless ``force``). Leaves no trace:
    the directory is made when the results are written."""
    import tempfile

    existing = out
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "is a file" if existing == out else f"is under a file ({str(existing)!r})"
        raise ValueError(f"{flag} {str(out)!r} {what}: give a directory for the results")
    try:
        fd, probe = tempfile.mkstemp(prefix=".sat-probe.", dir=existing)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"{flag} {str(out)!r} cannot be written ({os_reason(exc)}): give a "
                         "writable directory") from None
    if (out / holds).exists() and not force:
        raise ValueError(f"{flag} {str(out)!r} already holds the results of an earlier run "
                         f"({holds}): pass --force to overwrite them, or choose another "
                         "directory")
    return out


def say(message: str) -> None:
    """A warning from a sweep (a damaged cell recomputed, a stray file ignored): one line."""
    print(f"sat: {message}", file=sys.stderr, flush=True)


def progress_line(p: Progress) -> str:
    """One line of a sweep's progress; the time left only once it means something."""
    line = f"[{p.done}/{p.total} cells] {p.rate:,.0f} agent-rounds/s"
    if p.done >= p.total:
        return line
    return f"{line}, {_left(p)}"


def _left(p: Progress) -> str:
    left = p.estimate
    return "estimating the time left" if left is None else f"about {left:,.0f} s left"


def print_progress(p: Progress) -> None:
    print(progress_line(p), flush=True)


@contextlib.contextmanager
def progress_display(total: int):
    """A live bar on a terminal (with rich installed), plain lines otherwise."""
    try:
        import rich.progress as rp
    except ImportError:
        rp = None
    if rp is None or not sys.stdout.isatty():
        yield print_progress
        return
    # The time left is the sweep's own (weighed by the cells' costs where they differ), not
    # rich's count of cells.
    columns = (rp.TextColumn("cells"), rp.BarColumn(), rp.MofNCompleteColumn(),
               rp.TextColumn("{task.fields[rate]} agent-rounds/s"),
               rp.TextColumn("{task.fields[left]}"))
    with rp.Progress(*columns) as bar:
        task = bar.add_task("sweep", total=total, rate="-", left="")

        def update(p: Progress) -> None:
            bar.update(task, completed=p.done, rate=f"{p.rate:,.0f}",
                       left="" if p.done >= p.total else _left(p))
        yield update
