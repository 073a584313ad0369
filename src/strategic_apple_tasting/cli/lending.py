"""``sat lending``: the lending scenario, real applicants and outcomes with simulated gaming."""

from __future__ import annotations

import argparse
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .common import (
    DELTA_BY_GROUP_HELP,
    UsageError,
    add_protocol_flags,
    int_in,
    learner_name,
    name_list,
    number,
    positive_int,
    prepare_out,
)


def fill_lending(lend: argparse.ArgumentParser) -> None:
    """``sat lending``'s flags and their help.

    Why it is long: one declaration per flag, in the order ``--help`` shows them; split, it
    would only scatter the command's help."""
    from ..engine.simulate import default_threads
    from ..game import REWARDS
    from ..scenarios.datasets import DATASETS

    data = lend.add_argument_group("data (default: German credit, from the 'lending' extra)")
    data.add_argument("--data", choices=tuple(DATASETS), default=None,
                      help="a bundled data set: German credit (default), the FICO "
                      "TransRisk tables or Taiwanese card holders (taiwan-credit)")
    data.add_argument("--csv", type=Path, metavar="PATH",
                      help="your own applicants: a CSV with one row per loan")
    data.add_argument("--label", help="--csv: the outcome column")
    data.add_argument("--default-value", help="--csv: the --label value meaning a default")
    data.add_argument("--features", type=name_list("--features"), metavar="A,B,...",
                      help="--csv: feature columns (a text column is a category: one 0/1 "
                      "column per level)")
    data.add_argument("--gameable", type=name_list("--gameable"), metavar="A,B,...",
                      help="features applicants can change within the budget (German credit: "
                      "checking and savings balances, telephone; FICO: score; taiwan-credit: "
                      "BILL_AMT1,PAY_AMT1)")
    data.add_argument("--amount", metavar="COLUMN",
                      help="--csv: loan amount (a default loses it)")
    data.add_argument("--rate", metavar="COLUMN",
                      help="--csv: interest rate (a repaid loan earns amount × rate)")
    data.add_argument("--lgd", metavar="COLUMN",
                      help="--csv: loss given default, the share of --amount lost when a loan "
                      "defaults (default: all of it)")
    data.add_argument("--missing", choices=("error", "drop"), default="error",
                      help="--csv: rows with missing values are an error (default) or dropped")
    data.add_argument("--cost-matrix", type=_gain_loss, metavar="GAIN,LOSS", default=None,
                      help="--csv: what accepting earns, GAIN for a repaid loan and LOSS for a "
                      "defaulted one (default 1,-1; German credit's is 1,-5); with --amount "
                      "(and --rate) each multiplies the loan's own")
    data.add_argument("--time", metavar="COLUMN",
                      help="--csv: when each application came (numbers or dates); "
                      "--backtest then keeps the book's time order (one window of the newest "
                      "rows per seed)")
    data.add_argument("--group", metavar="COLUMN",
                      help="--csv: a column naming each applicant's group, for the table by "
                      "group (a feature only if --features names it)")
    add_protocol_flags(data, default="holdout")
    run = lend.add_argument_group("run")
    run.add_argument("--learner", "-l", action="append", type=learner_name, metavar="NAME",
                     help="learner to compare (repeat; default: the logistic scorecards "
                     "(offset-logistic, the recommended one, first), SA-OLS, offset OLS, ETC, "
                     "the oracle, the non-strategic baselines, accept-all and reject-all)")
    run.add_argument("--delta", type=number("--delta"), action="append", metavar="DELTA",
                     help="agents' budget in standardized units (repeat; default 0.25)")
    run.add_argument("--delta-by-group", metavar="G=B,...", default=None,
                     help=DELTA_BY_GROUP_HELP)
    run.add_argument("--truthful", type=number("--truthful"), default=0.0,
                     help="probability that an applicant does not game (default 0)")
    run.add_argument("--horizon", "-T", type=positive_int("--horizon"), default=20_000,
                     help="applicants per run (default 20000)")
    run.add_argument("--delay", type=int_in("--delay", 0, 10**9), default=0,
                     help="rounds before a loan's outcome reaches the learner (default 0)")
    run.add_argument("--period", type=int_in("--period", 1, 10**9), default=1,
                     help="rounds a published rule stays in force (default 1)")
    run.add_argument("--seeds", type=positive_int("--seeds"), default=10,
                     help="seeds (default 10)")
    run.add_argument("--rewards", choices=REWARDS, default="recorded",
                     help="accepting earns the row's recorded outcome (default) or the "
                     "least-squares rule's prediction (linear: where that model is right)")
    run.add_argument("--threads", type=positive_int("--threads"), default=default_threads(),
                     help="worker threads (default: the CPUs available)")
    run.add_argument("--out", "-o", type=Path,
                     help="also write every run's totals here (.csv or .parquet)")
    run.add_argument("--estimate-delta", action="store_true",
                     help="estimate the budget from the applicants (they answer the "
                     "least-squares rule), run the strategy-aware learners with the budget "
                     "estimated as they play, and recommend the learner with the highest "
                     "profit on the data (the applicants still game with --delta)")
    run.add_argument("--backtest", action="store_true",
                     help="a lender's backtest instead: per seed, the rows split into a "
                     "history and new applicants; an incumbent logistic scorecard (fitted on "
                     "a share of the history) decides the history; each learner starts from "
                     "it and meets every new applicant once, beside the incumbent kept, with "
                     "its cutoff raised by the gaming allowance, and refitted")
    run.add_argument("--new-share", type=number("--new-share"), default=None,
                     help="--backtest: the share of rows that are new applicants (default 0.3)")
    run.add_argument("--incumbent-share", type=number("--incumbent-share"), default=None,
                     help="--backtest: the share of the history the incumbent was fitted on "
                     "(default 0.2)")
    run.add_argument("--refit-every", type=positive_int("--refit-every"), default=None,
                     help="--backtest: loans between the refitted incumbent's fits "
                     "(default 25)")
    run.add_argument("--history", type=_histories, default=None, metavar="H,...",
                     help="--backtest: the history each learner starts from, one arm per "
                     "learner and history: accepted (the incumbent's loans as they are, the "
                     "default), reweighted (reject inference: each loan weighs 1 / its score "
                     "band's acceptance share), or accepted,reweighted (both, paired)")
    run.add_argument("--report", type=Path, metavar="DIR",
                     help="also write an HTML report (the table, profit and regret curves) "
                     "in DIR")


def _gain_loss(text: str) -> tuple[float, float]:
    """``--cost-matrix``: 'GAIN,LOSS', two finite numbers."""
    parts = text.split(",")
    try:
        gain, loss = (float(v) for v in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--cost-matrix must be two numbers GAIN,LOSS (e.g. "
                                         f"1,-5), got {text!r}") from None
    if not (math.isfinite(gain) and math.isfinite(loss)):
        raise argparse.ArgumentTypeError(f"--cost-matrix must be two finite numbers, got "
                                         f"{text!r}")
    return gain, loss


def _histories(text: str) -> list[str]:
    """``--history``: a list of :data:`~..scenarios.backtest.HISTORIES`, each once."""
    from ..scenarios.backtest import HISTORIES

    names = [n.strip() for n in text.split(",")]
    if not all(n in HISTORIES for n in names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"--history must be {' or '.join(HISTORIES)} or both "
                                         f"separated by ',', got {text!r}")
    return names


#: :func:`~..scenarios.lending.load_csv`'s argument names, as this command spells them.
_CSV_FLAGS = {"path": "--csv", "label": "--label", "default_value": "--default-value",
              "features": "--features", "gameable": "--gameable", "amount": "--amount",
              "rate": "--rate", "missing": "--missing", "rewards": "--cost-matrix",
              "group": "--group", "time": "--time", "lgd": "--lgd"}


def cli_spelling(message: str) -> str:
    """A :func:`~..scenarios.lending.load_csv` error in the command line's words: the field
    that starts it named by its flag, and the advice to drop rows as ``--missing drop``.

    Examples
    --------
    >>> cli_spelling("features: column 'x' has 3 missing values; pass missing='drop' to drop them")
    "--features: column 'x' has 3 missing values; pass --missing drop to drop them"
    >>> cli_spelling("default_value must be one of the values of column 'bad' (0, 1), got 2")
    "--default-value must be one of the values of column 'bad' (0, 1), got 2"
    """
    head = re.match(r"(\w+)(:| must\b)", message)
    if head and head.group(1) in _CSV_FLAGS:
        message = _CSV_FLAGS[head.group(1)] + message[len(head.group(1)):]
    return (message.replace("missing='drop'", "--missing drop")
            .replace("rewards=", "--cost-matrix "))


@dataclass(frozen=True)
class LendingPlan:
    """What ``sat lending`` runs, every flag checked against the others and the learners
    against each game, the book loaded: :func:`make_plan` makes it before any work, so a
    command that cannot run stops in one line having done nothing.

    Attributes
    ----------
    data
        The book: a bundled data set or the ``--csv`` file's rows, as a data set.
    deltas
        The budgets, one run each (one entry, a group → budget mapping, for
        ``--delta-by-group``).
    learners
        The learners' names, as given (before ``--estimate-delta`` turns them into learners
        estimating the budget).
    protocol
        The evaluation protocol's settings (``protocol``, and ``holdout_share`` if given).
    backtest
        The backtest's settings (``new_share``, ``incumbent_share``, ``refit_every``,
        ``history``), or None for the comparison.
    """

    data: Any
    deltas: list
    learners: list[str]
    protocol: dict[str, Any]
    horizon: int
    seeds: int
    truthful: float
    rewards: str
    delay: int
    period: int
    threads: int
    estimate_delta: bool
    backtest: dict[str, Any] | None
    out: Path | None
    report: Path | None


def _check_flags(args: argparse.Namespace) -> None:
    """The flags against each other (``UsageError``) and their values (``ValueError``), and
    ``--out`` and ``--report`` writable: before the book is read."""
    csv_only = {"label": args.label, "default_value": args.default_value,
                "features": args.features, "amount": args.amount, "rate": args.rate,
                "cost_matrix": args.cost_matrix, "group": args.group, "time": args.time,
                "lgd": args.lgd}
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
    for d in args.delta or []:
        if not (d >= 0 and d != float("inf")):
            raise ValueError(f"--delta must be a finite number >= 0, got {d!r}")
    if args.delta and len(set(args.delta)) != len(args.delta):
        raise ValueError(f"--delta must not repeat a budget, got {args.delta!r}")
    if args.report is not None:
        prepare_out(args.report, force=True, holds="index.html", flag="--report")
    backtest_only = {"new_share": args.new_share, "incumbent_share": args.incumbent_share,
                     "refit_every": args.refit_every, "history": args.history}
    if not args.backtest:
        given = [k for k, v in backtest_only.items() if v is not None]
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} applies only with --backtest")
    else:
        for flag, given in (("--estimate-delta", args.estimate_delta),
                            ("--holdout-share", args.holdout_share)):
            if given:
                raise UsageError(f"{flag} does not apply with --backtest")
    if args.holdout_share is not None and args.protocol != "holdout":
        raise UsageError(f"--holdout-share applies only with --protocol holdout, got "
                         f"--protocol {args.protocol}")


def _load_book(args: argparse.Namespace) -> Any:
    """The applicants: a bundled data set, or the ``--csv`` file's rows (its errors in the
    command line's words)."""
    from ..scenarios import from_lending
    from ..scenarios.datasets import load_dataset
    from ..scenarios.lending import load_csv

    if args.csv is None:
        gameable = None if args.gameable is None else tuple(args.gameable)
        return load_dataset(args.data or "german-credit", gameable)
    try:
        book = load_csv(args.csv, label=args.label, default_value=args.default_value,
                        features=args.features, gameable=args.gameable or (),
                        amount=args.amount, rate=args.rate, missing=args.missing,
                        group=args.group, time=args.time, lgd=args.lgd,
                        rewards=args.cost_matrix or (1.0, -1.0))
    except ValueError as exc:
        raise ValueError(cli_spelling(str(exc))) from None
    return from_lending(book)


def _backtest_settings(args: argparse.Namespace, data: Any) -> dict[str, Any]:
    """``--backtest``'s settings, defaults filled; ``ValueError`` for a book it cannot split."""
    from ..scenarios.backtest import INCUMBENT_SHARE, NEW_SHARE, REFIT_EVERY

    if data.contexts.population:
        raise ValueError(f"--backtest needs applicants that are rows; {data.title}'s rows are "
                         "a population's cells drawn by weight")
    return {"new_share": NEW_SHARE if args.new_share is None else args.new_share,
            "incumbent_share": (INCUMBENT_SHARE if args.incumbent_share is None
                                else args.incumbent_share),
            "refit_every": REFIT_EVERY if args.refit_every is None else args.refit_every,
            "history": args.history or ["accepted"]}


def make_plan(args: argparse.Namespace) -> LendingPlan:
    """The command's plan: the flags checked, the book loaded, every group named and each
    budget >= 0, the protocol's settings and its limit on the horizon, and the learners'
    parameters in each game checked, before any work."""
    from ..engine.simulate import check_learners
    from ..learners import make_learner
    from ..scenarios import LEARNERS
    from ..scenarios.backtest import BACKTEST_LEARNERS
    from ..scenarios.datasets import data_game

    _check_flags(args)
    protocol: dict[str, Any] = {"protocol": args.protocol}
    if args.holdout_share is not None:
        protocol["holdout_share"] = args.holdout_share
    data = _load_book(args)
    deltas: list = args.delta or [0.25]
    if args.delta_by_group is not None:
        from ..experiments.settings import group_budget_setting

        deltas = [group_budget_setting(args.delta_by_group)]
    names: list = args.learner or list(BACKTEST_LEARNERS if args.backtest else LEARNERS)
    if args.estimate_delta and all(n == "oracle" for n in names):
        raise UsageError("--estimate-delta recommends a learner that estimates the budget; "
                         "the oracle knows it (a benchmark, never recommended): add another "
                         "with -l, got -l oracle")
    for delta in deltas:
        game = data_game(data, delta=delta, **protocol)
        check_learners(game, [make_learner(n) for n in names], args.horizon)
    game.contexts.check_horizon(args.horizon)
    return LendingPlan(
        data=data, deltas=deltas, learners=names, protocol=protocol, horizon=args.horizon,
        seeds=args.seeds, truthful=args.truthful, rewards=args.rewards, delay=args.delay,
        period=args.period, threads=args.threads, estimate_delta=args.estimate_delta,
        backtest=_backtest_settings(args, data) if args.backtest else None, out=args.out,
        report=args.report)


def cmd_lending(args: argparse.Namespace) -> int:
    """``sat lending``: parse (argparse) → :func:`make_plan` → run → print."""
    chosen = make_plan(args)
    data = chosen.data
    gameable_columns = data.notes.get("gameable_attributes", data.gameable_names())
    print(f"data: {data.source}; {data.n} rows, d = {data.d}, gameable: "
          f"{', '.join(gameable_columns) or 'none'}", flush=True)
    if chosen.backtest is not None:
        frame = _run_backtest(chosen)
        _print_backtest(chosen, frame)
    else:
        table = _run_comparison(chosen)
        _print_comparison(chosen, table)
    return 0


def _run_comparison(plan: LendingPlan) -> Any:
    """Every learner on every seed at each budget (the budget estimated first, with
    ``--estimate-delta``), with a progress line a second at most; the runs' table."""
    import pandas as pd

    from ..game.game import budget_label
    from ..scenarios import run_lending

    learners: list = plan.learners
    if plan.estimate_delta:
        from ..scenarios.budget import estimate_lending_budget, estimating, format_estimate

        for delta in plan.deltas:
            est = estimate_lending_budget(plan.data, delta=delta, truthful=plan.truthful,
                                          horizon=plan.horizon)
            print(f"applicants gaming with {budget_label(delta)}, answering the "
                  f"least-squares rule: "
                  f"{format_estimate(est)}", flush=True)
        learners = estimating(learners)
    deltas = plan.deltas
    runs = len(learners) * plan.seeds * len(deltas)
    at = (budget_label(deltas[0]) if isinstance(deltas[0], dict)
          else f"δ = {', '.join(f'{d:g}' for d in deltas)}")
    print(f"running {len(learners)} learners × {plan.seeds} seeds × {plan.horizon:,} "
          f"applicants at {at} ({runs} runs) on "
          f"{plan.threads} thread(s), protocol {plan.protocol['protocol']}", flush=True)
    start = time.perf_counter()
    shown = [-math.inf]  # when a progress line was last printed: one a second at most
    tables = []
    for i, delta in enumerate(deltas):
        before = i * len(learners) * plan.seeds

        def progress(done: int, total: int, before: int = before, delta: Any = delta
                     ) -> None:
            took = time.perf_counter() - start
            done_all = before + done
            if took - shown[0] < 1.0 and done_all < runs:
                return
            shown[0] = took
            # No guess before a tenth of the runs: the first ones carry the loading of
            # compiled code and each seed's searches, and would make it tens of times too long.
            tail = ""
            if runs // 10 <= done_all - 1 < runs - 1:
                tail = f", about {took / done_all * (runs - done_all):,.0f} s left"
            print(f"[{done_all}/{runs} runs] {budget_label(delta)}: {took:,.0f} s{tail}",
                  flush=True)
        tables.append(run_lending(plan.data, learners, horizon=plan.horizon, seeds=plan.seeds,
                                  delta=delta, truthful=plan.truthful, rewards=plan.rewards,
                                  delay=plan.delay, period=plan.period,
                                  per_decade=10, threads=plan.threads, progress=progress,
                                  **plan.protocol))
    table = pd.concat(tables, ignore_index=True)
    took = time.perf_counter() - start
    print(f"done in {took:,.1f} s (compilation included); money in the data's units, per "
          f"1,000 applicants for profit")
    return table


def _print_comparison(plan: LendingPlan, table: Any) -> None:
    """The comparison's summary, the recommendation (``--estimate-delta``), the table by
    group, and the files asked for."""
    from ..scenarios import compare_lending, format_table

    summary = compare_lending(table)
    print(format_table(summary))
    if plan.estimate_delta:
        from ..scenarios.budget import recommend

        for delta, part in summary.groupby("delta", sort=False):
            name, why = recommend(part)
            print(f"recommended at δ = {delta:g}: {name}: {why}")
    groups = plan.data.contexts.group_names
    if groups:
        from ..scenarios.groups import format_groups, group_summary

        print(f"by group ({', '.join(groups)}; the learners never see it):")
        print(format_groups(group_summary(table, groups)))
    if plan.out is not None:
        _write_table(table, plan.out)
    if plan.report is not None:
        from ..reports.lending import write_lending_report

        print(f"report: {write_lending_report(table, plan.data, plan.report)}")


def _run_backtest(plan: LendingPlan) -> Any:
    """``sat lending --backtest``: the lender's backtest at each budget; the runs' table."""
    import pandas as pd

    from ..game.game import budget_label
    from ..scenarios.backtest import BASELINES, backtest

    settings, data = plan.backtest, plan.data
    assert settings is not None  # (cmd_lending runs the backtest only when it is planned)
    new = round(settings["new_share"] * data.n)
    froms = settings["history"]
    each = ("" if froms == ["accepted"] else
            f" (each from the {' and the '.join(froms)} history)")
    print(f"backtest: {len(plan.learners)} learners{each} and {len(BASELINES)} incumbent "
          f"baselines × {plan.seeds} seeds × about {new:,} new applicants each, after a "
          f"history of about {data.n - new:,}, on {plan.threads} thread(s)", flush=True)
    start = time.perf_counter()
    frames = []
    for delta in plan.deltas:
        def progress(done: int, total: int, delta: Any = delta) -> None:
            took = time.perf_counter() - start
            print(f"[{done}/{total} seeds] {budget_label(delta)}: {took:,.0f} s", flush=True)
        frames.append(backtest(data, plan.learners, delta=delta, seeds=plan.seeds,
                               truthful=plan.truthful, threads=plan.threads,
                               progress=progress, **settings))
    frame = pd.concat(frames, ignore_index=True)
    print(f"done in {time.perf_counter() - start:,.1f} s")
    return frame


def _print_backtest(plan: LendingPlan, frame: Any) -> None:
    """The backtest's table, what deploying the best learner gains over the raised
    incumbent, and the files asked for."""
    from ..scenarios.backtest import compare_backtest, format_backtest, gain_sentence

    summary = compare_backtest(frame)
    print(format_backtest(summary))
    for line in gain_sentence(summary):
        print(line)
    if plan.out is not None:
        _write_table(frame, plan.out)
    if plan.report is not None:
        from ..reports.backtest import write_backtest_report

        print(f"report: {write_backtest_report(frame, plan.data, plan.report)}")


def _write_table(frame: Any, out: Path) -> None:
    """Every run's totals to ``out`` (.csv or .parquet, checked before the work), written to
    a temporary file and renamed, so a reader never sees half of it."""
    tmp = out.with_name(f".{out.name}.tmp")
    if out.suffix == ".csv":
        frame.to_csv(tmp, index=False)
    else:
        frame.to_parquet(tmp, index=False)
    tmp.replace(out)
    print(f"table: {out}")
