"""The ``sat`` command line: ``sat run``, ``sat demo``, ``sat sweep``, ``sat results``,
``sat report``, ``sat reproduce``, ``sat lending`` and ``sat serve`` (in :mod:`.serve`).

Bad input gets one line naming the flag, the value and what is allowed, and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .. import __version__

if TYPE_CHECKING:
    from ..experiments.sweep import Progress
    from ..game import Game

# The package's layers (numba, pyarrow, pandas, matplotlib behind them) are imported where they
# are used: in a subcommand's flags (filled in only when that subcommand is chosen) and in its
# command function. So `sat --help` and `sat --version` import none of them, and a Ctrl-C while
# they are imported is caught by `main` like any other (one line, exit status 130).

DEMO_LEARNERS = ("sa-ols", "naive-greedy", "oracle")


class UsageError(Exception):
    """A command-line mistake: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """Errors raise :class:`UsageError`. A subcommand's flags can be added on first use
    (``fill``, called when the subcommand parses or formats its help): their defaults and
    choices come from the package's heavy layers, which ``sat --help`` need not import."""

    def __init__(self, *args, fill: Callable[[_Parser], None] | None = None, **kwargs) -> None:
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


def _int_in(name: str, low: int, high: int | None = None, shown: str | None = None):
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


def _positive_int(name: str):
    return _int_in(name, 1)


def _learner(text: str) -> str:
    """``--learner``: a registry name or an import path, resolved (imported) at once."""
    from ..learners import learner_class

    try:
        learner_class(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _gib(name: str):
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


def _number(name: str):
    def parse(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
    return parse


def _cost(text: str) -> list:
    """``--cost``: 'a,b,...' (a diagonal) or 'a,b;c,d' (rows); checked against d later."""
    try:
        rows = [[float(v) for v in row.split(",")] for row in text.split(";")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--cost must be numbers separated by ',' (and rows by ';'), got {text!r}") from None
    return rows[0] if ";" not in text else rows


def _add_game_flags(p: argparse.ArgumentParser, *, dimension: int | None = None,
                    data: bool = False) -> None:
    from ..experiments.settings import FLAG_AGENTS, FLAG_CONTEXTS, MAX_DIMENSION
    from ..game import FEEDBACK, REWARDS

    g = p.add_argument_group("game")
    # Required unless a data set gives it (checked in _game: "required: --dimension").
    g.add_argument("--dimension", "-d", type=_int_in("--dimension", 1, MAX_DIMENSION),
                   default=dimension, help="context dimension d" + (
                       " (a data set's own with --data)" if data else ""))
    if data:
        from ..scenarios.datasets import DATASETS

        g.add_argument("--data", choices=tuple(DATASETS), default=None,
                       help="play on a data set's rows and real outcomes: German credit (the "
                       "'lending' extra) or the FICO TransRisk tables; its agents game its "
                       "--gameable features, and it fixes d, the contexts and the agents")
        g.add_argument("--gameable", metavar="A,B,...", default=None,
                       help="--data: the attributes applicants can change (default: German "
                       "credit's checking and savings balances and telephone; FICO's score); "
                       "'none' for none")
        g.add_argument("--rewards", choices=REWARDS, default=None,
                       help="--data: accepting earns the row's recorded outcome (default) or "
                       "the least-squares rule's prediction plus --sigma noise (linear)")
        g.add_argument("--delta-by-group", metavar="G=B,...", default=None,
                       help="--data: a budget per group instead of --delta, every group "
                       "named ('black=0.3,white=0.5,...'); each applicant games with its "
                       "group's, learners are told the largest")
    g.add_argument("--delta", type=_number("--delta"), default=0.1,
                   help="agents' manipulation budget δ (default 0.1)")
    g.add_argument("--feedback", choices=FEEDBACK, default="apple",
                   help="apple tasting or bandit feedback (default apple)")
    g.add_argument("--r0", type=_number("--r0"), default=0.0,
                   help="reward of rejecting, apple tasting only (default 0)")
    g.add_argument("--sigma", type=_number("--sigma"), default=None,
                   help="reward noise standard deviation (default 0.1; with --data, the "
                   "rewards' spread about the least-squares rule, what learners are told)")
    g.add_argument("--contexts", choices=sorted(FLAG_CONTEXTS), default="uniform-ball",
                   help="context distribution (default uniform-ball); greedy-trap and "
                   "orthogonal-traps (a trap in every plane: d >= 2, r0 = 0) are the built-in "
                   "adversarial sequences")
    g.add_argument("--radius", type=_number("--radius"), default=1.0,
                   help="radius of the context ball or sphere (default 1)")
    g.add_argument("--c0", type=_number("--c0"), default=0.5,
                   help="mixture weight of the uniform part, contexts=mixture (default 0.5)")
    g.add_argument("--truthful", type=_number("--truthful"), default=0.0,
                   help="probability that an agent does not game (default 0)")
    g.add_argument("--agents", choices=sorted(FLAG_AGENTS), default="lazy",
                   help="agent model (default lazy)")
    g.add_argument("--tremble", type=_number("--tremble"), default=0.05,
                   help="largest overshoot γ, agents=trembling (default 0.05)")
    g.add_argument("--adversarial-tremble", action="store_true",
                   help="agents=trembling: always overshoot by the most allowed")
    g.add_argument("--budget-low", type=_number("--budget-low"), default=0.0,
                   help="agents=heterogeneous: budgets uniform on [budget-low, delta]")
    g.add_argument("--cost", type=_cost, default=None, metavar="A",
                   help="agents=ellipsoid: budget ‖A^½(x' − x)‖ ≤ δ; A's diagonal ('4,1') or "
                   "its rows ('4,1;1,2')")
    g.add_argument("--delay", type=_int_in("--delay", 0, 10**9), default=0,
                   help="rounds before an observed outcome reaches the learner (default 0: "
                   "the paper's game)")
    g.add_argument("--delay-law", choices=("fixed", "uniform"), default="fixed",
                   help="every outcome --delay rounds late, or uniformly 0..2·delay "
                   "(default fixed)")
    g.add_argument("--period", type=_int_in("--period", 1, 10**9), default=1,
                   help="rounds a published rule stays in force (default 1: the paper's game)")


def _add_run_flags(p: argparse.ArgumentParser, *, horizon: int | None, seeds: int) -> None:
    from ..engine import MAX_HORIZON, MAX_PER_DECADE, MAX_SEED
    from ..engine.simulate import default_threads

    r = p.add_argument_group("run")
    r.add_argument("--horizon", "-T", type=_int_in("--horizon", 1, MAX_HORIZON, "10^12"),
                   required=horizon is None, default=horizon, help="rounds per run (at most "
                   "10^12)")
    r.add_argument("--seeds", type=_positive_int("--seeds"), default=seeds,
                   help=f"number of seeds (default {seeds})")
    r.add_argument("--first-seed", type=_int_in("--first-seed", 0, MAX_SEED, "2^63 - 1"),
                   default=0, help="first seed (default 0)")
    r.add_argument("--threads", type=_positive_int("--threads"), default=default_threads(),
                   help="worker threads (default: the CPUs available)")
    r.add_argument("--per-decade", type=_int_in("--per-decade", 1, MAX_PER_DECADE),
                   default=20, help="recorded rounds per decade of t (default 20)")
    r.add_argument("--max-memory", type=_gib("--max-memory"), default=None, metavar="GIB",
                   help="refuse a run needing more memory than this, in GiB (default: the "
                   "machine's physical memory)")
    r.add_argument("--force", action="store_true",
                   help="overwrite the results of an earlier run in --out")


def _fill_run(run: argparse.ArgumentParser) -> None:
    from ..learners import LEARNERS

    run.add_argument("--learner", "-l", action="append", type=_learner, required=True,
                     metavar="NAME", help="learner to run (repeat to compare on the same "
                     f"seeds): one of {', '.join(sorted(LEARNERS))}, or an import path "
                     "package.module:Class")
    _add_game_flags(run, data=True)
    _add_run_flags(run, horizon=None, seeds=8)
    run.add_argument("--out", "-o", type=Path, required=True, help="directory for results")


def _fill_demo(demo: argparse.ArgumentParser) -> None:
    _add_game_flags(demo, dimension=5)
    _add_run_flags(demo, horizon=1_000_000, seeds=8)
    demo.add_argument("--out", "-o", type=Path, default=Path("demo-output"),
                      help="directory for results (default demo-output)")


def _fill_sweep(sweep: argparse.ArgumentParser) -> None:
    from ..engine.simulate import default_threads
    from ..experiments.spec import MAX_CELLS

    sweep.add_argument("spec", type=Path, help="the TOML spec")
    sweep.add_argument("--out", "-o", type=Path, required=True, help="sweep directory")
    sweep.add_argument("--workers", type=_positive_int("--workers"), default=default_threads(),
                       help="local worker processes (default: the CPUs available)")
    sweep.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on a Dask cluster (e.g. tcp://host:8786) instead of local "
                       "processes; needs the 'distributed' extra")
    sweep.add_argument("--extend", action="store_true",
                       help="add this spec's cells to a directory holding another spec")
    sweep.add_argument("--max-cells", type=_positive_int("--max-cells"), default=MAX_CELLS,
                       help=f"refuse a spec of more cells (or seeds) than this (default "
                       f"{MAX_CELLS:,}); checked before anything runs")


def _fill_reproduce(repro: argparse.ArgumentParser) -> None:
    from ..engine.simulate import default_threads

    repro.add_argument("--quick", action="store_true",
                       help=f"small horizons and few seeds: {QUICK_TIME}")
    repro.add_argument("--out", "-o", type=Path, default=None,
                       help="directory (default reproduce-quick/ or reproduce/)")
    repro.add_argument("--parts", type=_part_names, default=None, metavar="NAME[,NAME...]",
                       help="run only these bundled sweeps (comma-separated) and the claims "
                       "that read only them (default: all; `sat reproduce --list` names them)")
    repro.add_argument("--list", action="store_true",
                       help="list the bundled sweeps and the claims that read each, then exit")
    repro.add_argument("--workers", type=_positive_int("--workers"), default=default_threads(),
                       help="local worker processes (default: the CPUs available)")


#: The quick reproduction's wall time as measured, cold (compiling everything first) on 2 cores
#: (`--help` and the README say it).
QUICK_TIME = "28 min cold, 6-10 min warm, on 2 cores other work was also using"


def _part_names(text: str) -> list[str]:
    """``--parts``: known part names, comma-separated, in the bundled order."""
    from ..experiments.claims import PARTS

    names = [n.strip() for n in text.split(",") if n.strip()]
    known = list(PARTS["full"])
    for name in names:
        if name not in known:
            raise argparse.ArgumentTypeError(
                f"--parts must name bundled sweeps ({', '.join(known)}), got {name!r}")
    if not names:
        raise argparse.ArgumentTypeError(f"--parts must name at least one bundled sweep, "
                                         f"got {text!r}")
    return [n for n in known if n in names]


def _fill_results(results: argparse.ArgumentParser) -> None:
    results.add_argument("dir", type=Path, help="sweep directory")
    results.add_argument("--out", "-o", type=Path, help="write all rows here (.parquet or .csv)")


def _fill_report(report: argparse.ArgumentParser) -> None:
    report.add_argument("dir", type=Path, help="sweep directory")
    report.add_argument("--out", "-o", type=Path,
                        help="directory for the report (default: DIR/report)")
    report.add_argument("--title", help="page title (default: names the sweep directory)")


def _names(flag: str):
    def parse(text: str) -> list[str]:
        names = [n.strip() for n in text.split(",") if n.strip()]
        if not names:
            raise argparse.ArgumentTypeError(f"{flag} must be column names separated by ',', "
                                             f"got {text!r}")
        return names
    return parse


def _fill_lending(lend: argparse.ArgumentParser) -> None:
    from ..engine.simulate import default_threads
    from ..game import REWARDS
    from ..scenarios.datasets import DATASETS

    data = lend.add_argument_group("data (default: German credit, from the 'lending' extra)")
    data.add_argument("--data", choices=tuple(DATASETS), default=None,
                      help="a bundled data set: German credit (default) or the FICO "
                      "TransRisk tables")
    data.add_argument("--csv", type=Path, metavar="PATH",
                      help="your own applicants: a CSV with one row per loan")
    data.add_argument("--label", help="--csv: the outcome column")
    data.add_argument("--default-value", help="--csv: the --label value meaning a default")
    data.add_argument("--features", type=_names("--features"), metavar="A,B,...",
                      help="--csv: numeric feature columns")
    data.add_argument("--gameable", type=_names("--gameable"), metavar="A,B,...",
                      help="features applicants can change within the budget (German credit: "
                      "checking and savings balances, telephone; FICO: score)")
    data.add_argument("--amount", metavar="COLUMN",
                      help="--csv: loan amount (a default loses it)")
    data.add_argument("--rate", metavar="COLUMN",
                      help="--csv: interest rate (a repaid loan earns amount × rate)")
    data.add_argument("--missing", choices=("error", "drop"), default="error",
                      help="--csv: rows with missing values are an error (default) or dropped")
    run = lend.add_argument_group("run")
    run.add_argument("--learner", "-l", action="append", type=_learner, metavar="NAME",
                     help="learner to compare (repeat; default: SA-OLS, ETC, the oracle, the "
                     "non-strategic baselines, accept-all and reject-all)")
    run.add_argument("--delta", type=_number("--delta"), action="append", metavar="DELTA",
                     help="agents' budget in standardized units (repeat; default 0.25)")
    run.add_argument("--delta-by-group", metavar="G=B,...", default=None,
                     help="a budget per group instead of --delta, every group named "
                     "('white=0.5,black=0.3,...'; FICO, German credit); learners are told "
                     "the largest")
    run.add_argument("--truthful", type=_number("--truthful"), default=0.0,
                     help="probability that an applicant does not game (default 0)")
    run.add_argument("--horizon", "-T", type=_positive_int("--horizon"), default=20_000,
                     help="applicants per run (default 20000)")
    run.add_argument("--delay", type=_int_in("--delay", 0, 10**9), default=0,
                     help="rounds before a loan's outcome reaches the learner (default 0)")
    run.add_argument("--period", type=_int_in("--period", 1, 10**9), default=1,
                     help="rounds a published rule stays in force (default 1)")
    run.add_argument("--seeds", type=_positive_int("--seeds"), default=10,
                     help="seeds (default 10)")
    run.add_argument("--rewards", choices=REWARDS, default="recorded",
                     help="accepting earns the row's recorded outcome (default) or the "
                     "least-squares rule's prediction (linear: where that model is right)")
    run.add_argument("--threads", type=_positive_int("--threads"), default=default_threads(),
                     help="worker threads (default: the CPUs available)")
    run.add_argument("--out", "-o", type=Path,
                     help="also write every run's totals here (.csv or .parquet)")
    run.add_argument("--estimate-delta", action="store_true",
                     help="estimate the budget from the applicants (they answer the "
                     "least-squares rule), run the strategy-aware learners with the budget "
                     "estimated as they play, and recommend the learner with the highest "
                     "profit on the data (the applicants still game with --delta)")
    run.add_argument("--report", type=Path, metavar="DIR",
                     help="also write an HTML report (the table, profit and regret curves) "
                     "in DIR")


def build_parser() -> argparse.ArgumentParser:
    """The ``sat`` parser. It imports none of the package's layers: each subcommand's flags are
    added (and what they need imported) when that subcommand is parsed or its help shown."""
    parser = _Parser(prog="sat", description="Strategic apple tasting: simulate learners "
                     "against strategic agents with one-sided feedback.")
    parser.add_argument("--version", action="version", version=f"sat {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("run", fill=_fill_run,
                   help="simulate learners and write results as Parquet",
                   description="Simulate learners on one game over several seeds.")
    sub.add_parser("demo", fill=_fill_demo,
                   help="compare SA-OLS, naive greedy and the oracle",
                   description="SA-OLS vs naive greedy vs oracle at d = 5, T = 10^6: "
                   "writes results, a regret plot and a summary.")
    sub.add_parser("sweep", fill=_fill_sweep,
                   help="run a TOML spec's sweep, resumably",
                   description="Run every cell of a sweep spec (see examples/), one "
                   "Parquet file per finished cell; rerunning skips finished cells.")
    sub.add_parser("reproduce", fill=_fill_reproduce,
                   help="check the paper's claims (bundled sweeps)",
                   description="Run the bundled sweeps and write the claims table "
                   "(claim, measured, control, theory, verdict) and the consistency "
                   "checks (resumable: rerun to continue).")
    sub.add_parser("results", fill=_fill_results,
                   help="summarize a sweep directory",
                   description="Load every finished cell of a sweep; print the "
                   "final-round summary, optionally write one table.")
    sub.add_parser("lending", fill=_fill_lending,
                   help="the lending scenario: real applicants and outcomes, simulated gaming",
                   description="Compare learners on a real lending data set (German credit, "
                   "the FICO tables, or your CSV) on the compiled engine: each round an "
                   "applicant (a row) games the gameable features within the budget; the "
                   "learner sees the real outcome only if it accepts. Prints, per budget and "
                   "learner, the profit per 1,000 applicants and the regret against the best "
                   "linear rule (found by a search over the rows; a lower bound) and against "
                   "the least-squares rule, each answered by the gaming applicants "
                   "(Stackelberg) and on their true features: means over seeds with 95% "
                   "intervals, in the data's own units.")
    sub.add_parser("serve", fill=_fill_serve,
                   help="the decision service: decide, learn outcomes, publish the rule",
                   description="Run the decision service (HTTP, a real database): applicants "
                   "are decided by id under the published rule, outcomes are learned when "
                   "they arrive, the rule in force is public. Also: 'keys' (API keys), "
                   "'check' (the log replays to the saved learner), 'play' (the strategic "
                   "game against a running service). Needs the 'serve' extra.")
    sub.add_parser("compile", fill=_fill_compile,
                   help="compile every kernel and engine loop into the cache (after install)",
                   description="Compile the package's compiled code (every learner's kernels "
                   "and engine loop, the game's parts) into the on-disk cache in parallel "
                   "worker processes, so that no run compiles. Quick when the cache is up "
                   "to date; run it after installing or upgrading.")
    sub.add_parser("report", fill=_fill_report,
                   help="write a sweep's HTML report with its figures",
                   description="Write a self-contained HTML page (index.html) of a "
                   "sweep directory, with every figure beside it as PNG and PDF; "
                   "prints the page's path.")
    return parser


def _budget_words(game: Game) -> str:
    """δ as a run's first line states it: one budget, or each group's (learners are told the
    largest)."""
    if game.group_budgets is None:
        return f"δ = {game.delta:g}"
    pairs = zip(game.contexts.group_names, game.group_budgets, strict=True)
    return (f"δ by group {', '.join(f'{n} {b:g}' for n, b in pairs)}; learners are told "
            f"δ = {game.delta:g}")


def _game(args: argparse.Namespace) -> Game:
    from ..experiments.settings import GAME_SETTINGS, game_from_settings

    if args.dimension is None and getattr(args, "data", None) is None:
        raise UsageError("the following arguments are required: --dimension (or --data)")
    return game_from_settings({k: getattr(args, k, default)
                               for k, default in GAME_SETTINGS.items()})


def _os_reason(exc: OSError) -> str:
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
        raise ValueError(f"{flag} {str(out)!r} cannot be written ({_os_reason(exc)}): give a "
                         "writable directory") from None
    if (out / holds).exists() and not force:
        raise ValueError(f"{flag} {str(out)!r} already holds the results of an earlier run "
                         f"({holds}): pass --force to overwrite them, or choose another "
                         "directory")
    return out


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
    from ..learners import make_learner

    game = _game(args)
    if args.first_seed + args.seeds - 1 > MAX_SEED:
        raise ValueError(f"--first-seed + --seeds - 1 must be at most 2^63 - 1, got "
                         f"{args.first_seed} + {args.seeds} - 1")
    prepare_out(args.out, force=args.force)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    rounds = len(learners) * args.seeds * args.horizon
    max_memory = None if args.max_memory is None else int(args.max_memory * 2**30)
    print(f"running {', '.join(learners)} × {args.seeds} seeds × {args.horizon:,} rounds "
          f"(d = {game.dimension}, {_budget_words(game)}, {args.feedback} feedback"
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


#: An estimate of the time left is shown once this share of the work is done (and two cells):
#: the first cells' time is mostly compiling, which would make it hours too long.
ESTIMATE_AFTER = 0.1


def progress_line(p: Progress) -> str:
    """One line of a sweep's progress; the time left only once it means something."""
    line = f"[{p.done}/{p.total} cells] {p.rate:,.0f} agent-rounds/s"
    if p.done >= p.total:
        return line
    if p.done >= 2 and p.rounds_done >= ESTIMATE_AFTER * p.rounds_total \
            and p.remaining != float("inf"):
        return f"{line}, about {p.remaining:,.0f} s left"
    return f"{line}, estimating the time left"


def _print_progress(p: Progress) -> None:
    print(progress_line(p), flush=True)


@contextlib.contextmanager
def _progress_display(total: int):
    """A live bar on a terminal (with rich installed), plain lines otherwise."""
    try:
        import rich.progress as rp
    except ImportError:
        rp = None
    if rp is None or not sys.stdout.isatty():
        yield _print_progress
        return
    columns = (rp.TextColumn("cells"), rp.BarColumn(), rp.MofNCompleteColumn(),
               rp.TextColumn("{task.fields[rate]} agent-rounds/s"), rp.TimeRemainingColumn())
    with rp.Progress(*columns) as bar:
        task = bar.add_task("sweep", total=total, rate="-")

        def update(p: Progress) -> None:
            bar.update(task, completed=p.done, rate=f"{p.rate:,.0f}")
        yield update


def _executor(address: str | None):
    if address is None:
        return contextlib.nullcontext(None)
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--scheduler needs Dask: pip install "
                         "'strategic-apple-tasting[distributed]'") from None
    try:
        client = Client(address, timeout="5s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"--scheduler: cannot reach a Dask scheduler at {address!r} "
                         f"({type(exc).__name__})") from None
    return contextlib.closing(_ClientExecutor(client))


class _ClientExecutor:
    """A Dask client's ``concurrent.futures`` executor that closes the client at the end."""

    def __init__(self, client) -> None:
        self.client = client
        self.executor = client.get_executor()

    def close(self) -> None:
        self.client.close()


def _say(message: str) -> None:
    """A warning from a sweep (a damaged cell recomputed, a stray file ignored): one line."""
    print(f"sat: {message}", file=sys.stderr, flush=True)


def cmd_sweep(args: argparse.Namespace) -> int:
    from concurrent.futures import BrokenExecutor

    from ..experiments.spec import load_spec
    from ..experiments.sweep import run_sweep

    spec = load_spec(args.spec, max_cells=args.max_cells)
    prepare_out(args.out, force=True)  # a sweep resumes: its own results are no obstacle
    where = (f"Dask scheduler {args.scheduler}" if args.scheduler
             else f"{args.workers} local worker(s)")
    print(f"sweep: {len(spec.cells)} cells, {spec.rounds:,} agent-rounds on {where} "
          f"-> {args.out}", flush=True)
    with _executor(args.scheduler) as dask, _progress_display(len(spec.cells)) as progress:
        try:
            state = run_sweep(spec, args.out, workers=args.workers, extend=args.extend,
                              executor=None if dask is None else dask.executor,
                              progress=progress, warn=_say)
        except KeyboardInterrupt:
            print(f"sat: interrupted; finished cells are kept in {args.out}: rerun the same "
                  "command to resume", file=sys.stderr)
            return 130
        except BrokenExecutor as exc:
            print(f"sat: error: a worker died ({type(exc).__name__}); finished cells are kept "
                  f"in {args.out}: rerun the same command to resume", file=sys.stderr)
            return 1
    print(f"done: {state.done} cells run, {state.skipped} already finished; "
          f"results: {args.out}")
    return 0


def duration(seconds: float) -> str:
    """A duration for people: "42 s", "3 min 05 s", "1 h 02 min".

    Examples
    --------
    >>> duration(42.4), duration(185), duration(3725)
    ('42 s', '3 min 05 s', '1 h 02 min')
    """
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def overall_line(k: int, n: int, name: str, cells: int, elapsed: float, done: float,
                 total: float) -> str:
    """The line `sat reproduce` prints as part k of n starts: which part, the time so far and,
    once a tenth of the work (weighed by each part's measured cost) and a whole part are done,
    an estimate of the time left at the pace so far.

    Examples
    --------
    >>> overall_line(1, 21, "stochastic", 20, 0.0, 0.0, 10.0)
    '== part 1 of 21: stochastic (20 cells); 0 s elapsed, estimating the time left'
    >>> overall_line(5, 21, "etc", 24, 120.0, 4.0, 10.0)
    '== part 5 of 21: etc (24 cells); 2 min 00 s elapsed, about 3 min 00 s left'
    """
    line = f"== part {k} of {n}: {name} ({cells} cells); {duration(elapsed)} elapsed"
    if k > 1 and done >= ESTIMATE_AFTER * total and done > 0:
        return f"{line}, about {duration(elapsed * (total - done) / done)} left"
    return f"{line}, estimating the time left"


def write_part_report(out: Path, name: str, size: str) -> str:
    """Write the report of part ``name`` of a reproduction in ``out``; its path, relative to
    ``out`` (run in a pool worker: the function is importable)."""
    from ..experiments.sweep import load
    from ..reports.html import write_report

    page = write_report(load(out / name, warn=_say), out / name / "report",
                        title=f"reproduce ({size}): {name}", learners=_spec_learners(out / name))
    return str(page.relative_to(out))


def cmd_reproduce(args: argparse.Namespace) -> int:
    from ..experiments.claims import (
        CHECKS,
        PARTS,
        check_claims,
        claims_markdown,
        claims_text,
        part_cost,
        tally,
    )
    from ..experiments.spec import SpecError, check_spec
    from ..experiments.sweep import default_executor, run_sweep, terminate_workers
    from ..reports.html import write_claims_page

    size = "quick" if args.quick else "full"
    if args.list:
        for name in PARTS[size]:
            reads = [check.__module__.rsplit(".", 1)[-1] + "." + check.__name__
                     for names, check in CHECKS if name in names]
            print(f"{name}: {', '.join(reads)}")
        return 0
    out = args.out or Path("reproduce-quick" if args.quick else "reproduce")
    prepare_out(out, force=True)  # resumable: rerunning continues
    chosen = args.parts or list(PARTS[size])
    parts = {name: check_spec(PARTS[size][name]) for name in chosen}
    total = sum(p.rounds for p in parts.values())
    print(f"reproduce ({size}): {len(parts)} sweeps, {total:,} agent-rounds, "
          f"{args.workers} worker(s) -> {out}", flush=True)
    work = {name: part_cost(name, spec.rounds) for name, spec in parts.items()}
    start = time.perf_counter()
    done = 0.0
    # One pool for every part: its workers keep the compiled kernels they have loaded.
    with default_executor(args.workers) as pool:
        for k, (name, spec) in enumerate(parts.items(), 1):
            print(overall_line(k, len(parts), name, len(spec.cells),
                               time.perf_counter() - start, done, sum(work.values())),
                  flush=True)
            with _progress_display(len(spec.cells)) as progress:
                try:
                    run_sweep(spec, out / name, executor=pool, progress=progress, warn=_say)
                except SpecError:
                    raise ValueError(f"{out / name} holds results of other sweeps than this "
                                     f"version's bundled {name!r} part: use another --out, or "
                                     f"delete {out}") from None
                except KeyboardInterrupt:
                    # The workers ignore Ctrl-C; leaving the block would wait for their cells.
                    terminate_workers(pool)
                    print(f"sat: interrupted; finished cells are kept in {out}: rerun the "
                          "same command to resume", file=sys.stderr)
                    return 130
            done += work[name]
        # The parts' reports are independent and mostly drawing: the pool writes them while
        # this process measures the claims (they took 40% of the quick run one at a time).
        pages = {name: pool.submit(write_part_report, out, name, size) for name in parts}
        claims, consistency = check_claims(out, parts=chosen)
        (out / "claims.md").write_text(claims_markdown(claims, consistency) + "\n")
        print()
        print(claims_text(claims, consistency))
        print()
        print("writing the reports ...", flush=True)
        links = {name: page.result() for name, page in pages.items()}
    index = write_claims_page(claims, consistency, links, out / "index.html")
    broken = sum(not k.holds for k in consistency)
    print(f"claims: {tally(claims)}; consistency checks: "
          f"{len(consistency) - broken} of {len(consistency)} hold; "
          f"{time.perf_counter() - start:,.0f} s")
    print(f"table: {out / 'claims.md'}")
    print(f"report: {index}")
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    from ..experiments.storage import write_table
    from ..reports.figures import swept_settings
    from ..reports.load import load_results
    from ..reports.summary import summary_text

    if args.out is not None:  # checked before the work, as every --out
        if args.out.suffix not in (".csv", ".parquet"):
            raise ValueError(f"--out must end in .parquet or .csv, got {str(args.out)!r}")
        prepare_out(args.out.parent, force=True)
        if args.out.is_dir():
            raise ValueError(f"--out {str(args.out)!r} is a directory: give a file name")
    table = load_results(args.dir, warn=_say)  # a sweep directory or a `sat run` output
    status = _sweep_status(args.dir)
    if status is not None:
        print(status.heading(args.dir))
        print()
    swept = swept_settings(table)
    frame = table.select(swept).to_pandas()
    if not swept:
        print(summary_text(table))
    for values, group in frame.groupby(swept, dropna=False, sort=True) if swept else ():
        print(", ".join(f"{k} = {v}" for k, v in zip(swept, values, strict=True)))
        print(summary_text(table.take(group.index.to_numpy())))
        print()
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        if args.out.suffix == ".csv":
            tmp = args.out.with_name(f".{args.out.name}.tmp")
            table.to_pandas().to_csv(tmp, index=False)
            tmp.replace(args.out)
        else:
            write_table(table, args.out)
        print(f"table: {args.out}")
    return 0


def _sweep_status(path: Path) -> Any:
    """A sweep directory's :class:`~..experiments.sweep.Completeness` (None for a run's
    output, whose results are whole by construction)."""
    from ..experiments.sweep import MANIFEST, completeness

    return completeness(path) if (path / MANIFEST).exists() else None


def _spec_learners(out: Path) -> dict[str, str]:
    """Label → registry name of each learner of every spec a sweep directory has run (empty if
    unreadable): tells the report which learner a custom label is."""
    import json

    from ..experiments.spec import check_spec
    from ..experiments.sweep import MANIFEST, served_learners

    try:
        return served_learners(out)
    except (OSError, ValueError):
        pass
    try:  # a damaged record under specs/: the first spec's labels are better than none
        spec = check_spec(json.loads((out / MANIFEST).read_text()), max_cells=None)
    except (OSError, ValueError):
        return {}
    return {cell.label: cell.learner for cell in spec.cells}


def cmd_report(args: argparse.Namespace) -> int:
    from ..experiments.sweep import MANIFEST
    from ..reports.html import write_report
    from ..reports.load import load_results

    table = load_results(args.dir, warn=_say)  # a sweep directory or a `sat run` output
    out = args.out if args.out is not None else args.dir / "report"
    sweep = (args.dir / MANIFEST).exists()
    status = _sweep_status(args.dir)
    title = args.title or f"{'Sweep' if sweep else 'Results'} report: {args.dir}"
    if status is not None and not status.complete:
        title += (f" (INCOMPLETE: {status.done} of {status.planned} cells)"
                  if status.planned is not None else f" ({status.done} cells, planned unknown)")
    page = write_report(table, out, title=title, learners=_spec_learners(args.dir),
                        status=None if status is None else status.heading(args.dir))
    print(page)
    return 0


def cmd_lending(args: argparse.Namespace) -> int:
    from ..game.game import budget_label
    from ..scenarios import LEARNERS, compare_lending, format_table, from_lending, run_lending
    from ..scenarios.datasets import load_dataset
    from ..scenarios.lending import load_csv

    csv_only = {"label": args.label, "default_value": args.default_value,
                "features": args.features, "amount": args.amount, "rate": args.rate}
    if args.csv is None:
        given = [k for k, v in csv_only.items() if v is not None]
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} applies only with --csv")
    else:
        if args.data is not None:
            raise UsageError("--data and --csv are two sources of applicants: give one")
        for key in ("label", "default_value", "features"):
            if csv_only[key] is None:
                raise UsageError(f"--csv needs --{key.replace('_', '-')}")
    if args.out is not None:  # checked before the work, as every --out
        if args.out.suffix not in (".csv", ".parquet"):
            raise ValueError(f"--out must end in .parquet or .csv, got {str(args.out)!r}")
        prepare_out(args.out.parent, force=True)
    if args.delta_by_group is not None and args.delta:
        raise UsageError("--delta and --delta-by-group both give the budget: give one")
    deltas: list = args.delta or [0.25]
    for d in deltas:
        if not (d >= 0 and d != float("inf")):
            raise ValueError(f"--delta must be a finite number >= 0, got {d!r}")
    if len(set(deltas)) != len(deltas):
        raise ValueError(f"--delta must not repeat a budget, got {deltas!r}")
    if args.report is not None:
        prepare_out(args.report, force=True, holds="index.html", flag="--report")
    if args.csv is None:
        gameable = None if args.gameable is None else tuple(args.gameable)
        data = load_dataset(args.data or "german-credit", gameable)
    else:
        data = from_lending(load_csv(args.csv, label=args.label,
                                     default_value=args.default_value, features=args.features,
                                     gameable=args.gameable or (), amount=args.amount,
                                     rate=args.rate, missing=args.missing))
    if args.delta_by_group is not None:
        from ..experiments.settings import group_budget_setting
        from ..scenarios.datasets import data_game

        budgets = group_budget_setting(args.delta_by_group)
        data_game(data, delta=budgets)  # every group named, each budget >= 0: before any work
        deltas = [budgets]
    learners: list = args.learner or list(LEARNERS)
    print(f"data: {data.source}; {data.n} rows, d = {data.d}, gameable: "
          f"{', '.join(data.gameable_names()) or 'none'}", flush=True)
    if args.estimate_delta:
        from ..scenarios.budget import estimate_lending_budget, estimating, format_estimate

        for delta in deltas:
            est = estimate_lending_budget(data, delta=delta, truthful=args.truthful,
                                          horizon=args.horizon)
            print(f"applicants gaming with {budget_label(delta)}, answering the "
                  f"least-squares rule: "
                  f"{format_estimate(est)}", flush=True)
        learners = estimating(learners)
    runs = len(learners) * args.seeds * len(deltas)
    at = (budget_label(deltas[0]) if isinstance(deltas[0], dict)
          else f"δ = {', '.join(f'{d:g}' for d in deltas)}")
    print(f"running {len(learners)} learners × {args.seeds} seeds × {args.horizon:,} "
          f"applicants at {at} ({runs} runs) on "
          f"{args.threads} thread(s)", flush=True)
    import pandas as pd

    start = time.perf_counter()
    shown = [-math.inf]  # when a progress line was last printed: one a second at most
    tables = []
    for i, delta in enumerate(deltas):
        before = i * len(learners) * args.seeds

        def progress(done: int, total: int, before: int = before, delta: Any = delta
                     ) -> None:
            took = time.perf_counter() - start
            done_all = before + done
            if took - shown[0] < 1.0 and done_all < runs:
                return
            shown[0] = took
            left = took / done_all * (runs - done_all)
            tail = f", about {left:,.0f} s left" if done_all < runs else ""
            print(f"[{done_all}/{runs} runs] {budget_label(delta)}: {took:,.0f} s{tail}",
                  flush=True)
        tables.append(run_lending(data, learners, horizon=args.horizon, seeds=args.seeds,
                                  delta=delta, truthful=args.truthful, rewards=args.rewards,
                                  delay=args.delay, period=args.period,
                                  per_decade=10, threads=args.threads, progress=progress))
    table = pd.concat(tables, ignore_index=True)
    took = time.perf_counter() - start
    print(f"done in {took:,.1f} s (compilation included); money in the data's units, per "
          f"1,000 applicants for profit")
    summary = compare_lending(table)
    print(format_table(summary))
    if args.estimate_delta:
        from ..scenarios.budget import recommend

        for delta, part in summary.groupby("delta", sort=False):
            name, why = recommend(part)
            print(f"recommended at δ = {delta:g}: {name}: {why}")
    if data.contexts.group_names:
        from ..scenarios.groups import format_groups, group_summary

        print(f"by group ({', '.join(data.contexts.group_names)}; the learners never see it):")
        print(format_groups(group_summary(table, data.contexts.group_names)))
    if args.out is not None:
        tmp = args.out.with_name(f".{args.out.name}.tmp")
        if args.out.suffix == ".csv":
            table.to_csv(tmp, index=False)
        else:
            table.to_parquet(tmp, index=False)
        tmp.replace(args.out)
        print(f"table: {args.out}")
    if args.report is not None:
        from ..reports.lending import write_lending_report

        print(f"report: {write_lending_report(table, data, args.report)}")
    return 0


def _fill_serve(p: argparse.ArgumentParser) -> None:
    from .serve import fill_serve

    fill_serve(p)


def cmd_serve(args: argparse.Namespace) -> int:
    from .serve import cmd_serve as run

    return run(args)


def _fill_compile(p: argparse.ArgumentParser) -> None:
    from .compile import fill_compile

    fill_compile(p)


def cmd_compile(args: argparse.Namespace) -> int:
    from .compile import cmd_compile as run

    return run(args)


COMMANDS = {"run": cmd_run, "demo": cmd_demo, "sweep": cmd_sweep, "results": cmd_results,
            "report": cmd_report, "reproduce": cmd_reproduce, "lending": cmd_lending,
            "serve": cmd_serve, "compile": cmd_compile}


class _PipeSafe:
    """stdout that survives its reader going away (``sat run ... | head``): once the pipe is
    closed, output goes nowhere and the command carries on, so no result is lost."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self._closed = False

    def write(self, text: str) -> int:
        if not self._closed:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._close()
        return len(text)

    def flush(self) -> None:
        if not self._closed:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._close()

    def _close(self) -> None:
        self._closed = True
        # Python flushes stdout at exit: point the descriptor at /dev/null so that flush
        # cannot fail either (as Python's documentation on SIGPIPE advises).
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())

    def isatty(self) -> bool:
        return not self._closed and self._stream.isatty()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _os_error(exc: OSError) -> str:
    where = f" {str(exc.filename)!r}" if exc.filename is not None else ""
    return f"cannot use{where}: {_os_reason(exc)}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``sat``; returns the exit status. The package's layers are imported in
    here (by the chosen subcommand), so a Ctrl-C while they load is one line and status 130."""
    stdout = sys.stdout
    sys.stdout = _PipeSafe(stdout)
    # A learner named by import path (module:Class) may live in the current directory, as with
    # `python -m`; appended, so it never shadows an installed module. Spawned sweep workers
    # inherit the path.
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except (UsageError, ValueError) as exc:
        print(f"sat: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a permission, a directory where a file belongs
        print(f"sat: error: {_os_error(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print("sat: error: out of memory: lower the dimension, the seeds or the threads",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sat: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout = stdout


if __name__ == "__main__":
    sys.exit(main())
