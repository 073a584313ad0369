"""The ``sat`` command line: ``sat run``, ``sat demo``, ``sat sweep``, ``sat results`` and
``sat report``.

Bad input gets one line naming the flag, the value and what is allowed, and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import BrokenExecutor
from pathlib import Path
from typing import NoReturn

from ..engine.simulate import default_threads, simulate
from ..experiments.claims import PARTS, check_claims, claims_markdown, claims_text, tally
from ..experiments.settings import FLAG_AGENTS, FLAG_CONTEXTS, GAME_SETTINGS, game_from_settings
from ..experiments.spec import SpecError, check_spec, load_spec
from ..experiments.storage import write_table
from ..experiments.sweep import MANIFEST, Progress, default_executor, load, run_sweep
from ..game import FEEDBACK, Game
from ..learners import LEARNERS, make_learner
from ..reports.figures import swept_settings
from ..reports.html import write_claims_page, write_report
from ..reports.plots import plot_regret
from ..reports.summary import summary_text

DEMO_LEARNERS = ("sa-ols", "naive-greedy", "oracle")


class UsageError(Exception):
    """A command-line mistake: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _positive_int(name: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{name} must be an integer >= 1, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= 1, got {text!r}")
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


def _add_game_flags(p: argparse.ArgumentParser, *, dimension: int | None = None) -> None:
    g = p.add_argument_group("game")
    g.add_argument("--dimension", "-d", type=_positive_int("--dimension"),
                   required=dimension is None, default=dimension, help="context dimension d")
    g.add_argument("--delta", type=_number("--delta"), default=0.1,
                   help="agents' manipulation budget δ (default 0.1)")
    g.add_argument("--feedback", choices=FEEDBACK, default="apple",
                   help="apple tasting or bandit feedback (default apple)")
    g.add_argument("--r0", type=_number("--r0"), default=0.0,
                   help="reward of rejecting, apple tasting only (default 0)")
    g.add_argument("--sigma", type=_number("--sigma"), default=0.1,
                   help="reward noise standard deviation (default 0.1)")
    g.add_argument("--contexts", choices=sorted(FLAG_CONTEXTS), default="uniform-ball",
                   help="context distribution (default uniform-ball); greedy-trap is the "
                   "built-in adversarial sequence")
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


def _add_run_flags(p: argparse.ArgumentParser, *, horizon: int | None, seeds: int) -> None:
    r = p.add_argument_group("run")
    r.add_argument("--horizon", "-T", type=_positive_int("--horizon"), required=horizon is None,
                   default=horizon, help="rounds per run")
    r.add_argument("--seeds", type=_positive_int("--seeds"), default=seeds,
                   help=f"number of seeds (default {seeds})")
    r.add_argument("--first-seed", type=int, default=0, help="first seed (default 0)")
    r.add_argument("--threads", type=_positive_int("--threads"), default=default_threads(),
                   help="worker threads (default: the CPUs available)")
    r.add_argument("--per-decade", type=_positive_int("--per-decade"), default=20,
                   help="recorded rounds per decade of t (default 20)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sat", description="Strategic apple tasting: simulate learners "
                     "against strategic agents with one-sided feedback.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="simulate learners and write results as Parquet",
                         description="Simulate learners on one game over several seeds.")
    run.add_argument("--learner", "-l", action="append", choices=sorted(LEARNERS),
                     required=True, help="learner to run (repeat to compare on the same seeds)")
    _add_game_flags(run)
    _add_run_flags(run, horizon=None, seeds=8)
    run.add_argument("--out", "-o", type=Path, required=True, help="directory for results")

    demo = sub.add_parser("demo", help="compare SA-OLS, naive greedy and the oracle",
                          description="SA-OLS vs naive greedy vs oracle at d = 5, T = 10^6: "
                          "writes results, a regret plot and a summary.")
    _add_game_flags(demo, dimension=5)
    _add_run_flags(demo, horizon=1_000_000, seeds=8)
    demo.add_argument("--out", "-o", type=Path, default=Path("demo-output"),
                      help="directory for results (default demo-output)")

    sweep = sub.add_parser("sweep", help="run a TOML spec's sweep, resumably",
                           description="Run every cell of a sweep spec (see examples/), one "
                           "Parquet file per finished cell; rerunning skips finished cells.")
    sweep.add_argument("spec", type=Path, help="the TOML spec")
    sweep.add_argument("--out", "-o", type=Path, required=True, help="sweep directory")
    sweep.add_argument("--workers", type=_positive_int("--workers"), default=default_threads(),
                       help="local worker processes (default: the CPUs available)")
    sweep.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on a Dask cluster (e.g. tcp://host:8786) instead of local "
                       "processes; needs the 'distributed' extra")
    sweep.add_argument("--extend", action="store_true",
                       help="add this spec's cells to a directory holding another spec")

    repro = sub.add_parser("reproduce", help="check the paper's claims (bundled sweeps)",
                           description="Run the bundled sweeps and write the claims table "
                           "(claim, measured, control, theory, verdict) and the consistency "
                           "checks (resumable: rerun to continue).")
    repro.add_argument("--quick", action="store_true",
                       help="small horizons and few seeds: a few minutes on 2 cores")
    repro.add_argument("--out", "-o", type=Path, default=None,
                       help="directory (default reproduce-quick/ or reproduce/)")
    repro.add_argument("--workers", type=_positive_int("--workers"), default=default_threads(),
                       help="local worker processes (default: the CPUs available)")

    results = sub.add_parser("results", help="summarize a sweep directory",
                             description="Load every finished cell of a sweep; print the "
                             "final-round summary, optionally write one table.")
    results.add_argument("dir", type=Path, help="sweep directory")
    results.add_argument("--out", "-o", type=Path, help="write all rows here (.parquet or .csv)")

    report = sub.add_parser("report", help="write a sweep's HTML report with its figures",
                            description="Write a self-contained HTML page (index.html) of a "
                            "sweep directory, with every figure beside it as PNG and PDF; "
                            "prints the page's path.")
    report.add_argument("dir", type=Path, help="sweep directory")
    report.add_argument("--out", "-o", type=Path,
                        help="directory for the report (default: DIR/report)")
    report.add_argument("--title", help="page title (default: names the sweep directory)")
    return parser


def _game(args: argparse.Namespace) -> Game:
    return game_from_settings({k: getattr(args, k) for k in GAME_SETTINGS})


def _simulate(args: argparse.Namespace, learners: Sequence[str]):
    game = _game(args)
    if args.first_seed < 0:
        raise ValueError(f"--first-seed must be an integer >= 0, got {args.first_seed}")
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    rounds = len(learners) * args.seeds * args.horizon
    print(f"running {', '.join(learners)} × {args.seeds} seeds × {args.horizon:,} rounds "
          f"(d = {args.dimension}, δ = {args.delta:g}, {args.feedback} feedback) "
          f"on {args.threads} thread(s)", flush=True)
    start = time.perf_counter()
    table = simulate(game, [make_learner(n) for n in learners], args.horizon, seeds,
                     threads=args.threads, per_decade=args.per_decade)
    took = time.perf_counter() - start
    print(f"done in {took:.1f} s ({rounds / took:,.0f} agent-rounds/s, compilation included)")
    return table


def _write(table, out: Path) -> Path:
    path = write_table(table, out / "results.parquet")
    text = summary_text(table)
    (out / "summary.txt").write_text(text + "\n")
    print()
    print(text)
    print()
    print(f"results: {path}")
    return path


def cmd_run(args: argparse.Namespace) -> int:
    table = _simulate(args, args.learner)
    _write(table, args.out)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    table = _simulate(args, DEMO_LEARNERS)
    _write(table, args.out)
    png = plot_regret(table, args.out / "regret.png", title=(
        f"SA-OLS vs naive greedy vs oracle (d = {args.dimension}, δ = {args.delta:g}, "
        f"{args.seeds} seeds, mean with 95% band)"))
    print(f"figure:  {png}")
    return 0


def _print_progress(p: Progress) -> None:
    left = "?" if p.remaining == float("inf") else f"{p.remaining:,.0f} s"
    print(f"[{p.done}/{p.total} cells] {p.rate:,.0f} agent-rounds/s, about {left} left",
          flush=True)


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


def cmd_sweep(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    where = (f"Dask scheduler {args.scheduler}" if args.scheduler
             else f"{args.workers} local worker(s)")
    print(f"sweep: {len(spec.cells)} cells, {spec.rounds:,} agent-rounds on {where} "
          f"-> {args.out}", flush=True)
    with _executor(args.scheduler) as dask, _progress_display(len(spec.cells)) as progress:
        try:
            state = run_sweep(spec, args.out, workers=args.workers, extend=args.extend,
                              executor=None if dask is None else dask.executor,
                              progress=progress)
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


def cmd_reproduce(args: argparse.Namespace) -> int:
    size = "quick" if args.quick else "full"
    out = args.out or Path("reproduce-quick" if args.quick else "reproduce")
    parts = {name: check_spec(raw) for name, raw in PARTS[size].items()}
    total = sum(p.rounds for p in parts.values())
    print(f"reproduce ({size}): {len(parts)} sweeps, {total:,} agent-rounds, "
          f"{args.workers} worker(s) -> {out}", flush=True)
    start = time.perf_counter()
    # One pool for every part: its workers keep the compiled kernels they have loaded.
    with default_executor(args.workers) as pool:
        for name, spec in parts.items():
            print(f"-- {name}: {len(spec.cells)} cells", flush=True)
            with _progress_display(len(spec.cells)) as progress:
                try:
                    run_sweep(spec, out / name, executor=pool, progress=progress)
                except SpecError:
                    raise ValueError(f"{out / name} holds results of other sweeps than this "
                                     f"version's bundled {name!r} part: use another --out, or "
                                     f"delete {out}") from None
                except KeyboardInterrupt:
                    print(f"sat: interrupted; finished cells are kept in {out}: rerun the "
                          "same command to resume", file=sys.stderr)
                    return 130
    claims, consistency = check_claims(out)
    (out / "claims.md").write_text(claims_markdown(claims, consistency) + "\n")
    print()
    print(claims_text(claims, consistency))
    print()
    print("writing the reports ...", flush=True)
    links = {}
    for name in parts:
        page = write_report(load(out / name), out / name / "report",
                            title=f"reproduce ({size}): {name}",
                            learners=_spec_learners(out / name))
        links[name] = str(page.relative_to(out))
    index = write_claims_page(claims, consistency, links, out / "index.html")
    broken = sum(not k.holds for k in consistency)
    print(f"claims: {tally(claims)}; consistency checks: "
          f"{len(consistency) - broken} of {len(consistency)} hold; "
          f"{time.perf_counter() - start:,.0f} s")
    print(f"table: {out / 'claims.md'}")
    print(f"report: {index}")
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    table = load(args.dir)
    swept = swept_settings(table)
    frame = table.select(swept).to_pandas()
    if not swept:
        print(summary_text(table))
    for values, group in frame.groupby(swept, dropna=False, sort=True) if swept else ():
        print(", ".join(f"{k} = {v}" for k, v in zip(swept, values, strict=True)))
        print(summary_text(table.take(group.index.to_numpy())))
        print()
    if args.out is not None:
        if args.out.suffix == ".csv":
            args.out.parent.mkdir(parents=True, exist_ok=True)
            table.to_pandas().to_csv(args.out, index=False)
        elif args.out.suffix == ".parquet":
            write_table(table, args.out)
        else:
            raise ValueError(f"--out must end in .parquet or .csv, got {str(args.out)!r}")
        print(f"table: {args.out}")
    return 0


def _spec_learners(out: Path) -> dict[str, str]:
    """Label → registry name of each learner in a sweep directory's spec (empty if unreadable):
    tells the report which learner a custom label is."""
    try:
        spec = check_spec(json.loads((out / MANIFEST).read_text()))
    except (OSError, ValueError):
        return {}
    return {cell.label: cell.learner for cell in spec.cells}


def cmd_report(args: argparse.Namespace) -> int:
    table = load(args.dir)
    out = args.out if args.out is not None else args.dir / "report"
    page = write_report(table, out, title=args.title or f"Sweep report: {args.dir}",
                        learners=_spec_learners(args.dir))
    print(page)
    return 0


COMMANDS = {"run": cmd_run, "demo": cmd_demo, "sweep": cmd_sweep, "results": cmd_results,
            "report": cmd_report, "reproduce": cmd_reproduce}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``sat``; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return COMMANDS[args.command](args)
    except (UsageError, ValueError) as exc:
        print(f"sat: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sat: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `sat demo | head`: stop quietly, as Python's docs advise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
