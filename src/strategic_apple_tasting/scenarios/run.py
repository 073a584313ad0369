"""The lending comparison on the engine: learners on a data game, and the table a lender reads.

:func:`run_lending` plays a data set's game (:func:`~.datasets.data_game`) with the compiled
engine (``simulate``: every learner meets the same applicants, agents and outcomes on a seed),
and :func:`compare_lending` summarizes it per budget and learner in money, the data's own units
(German credit: +1 a repaid loan, −5 a default):

* **profit** per 1,000 applicants: the sum of the real rewards the learner earned;
* **regret against the best linear rule**: the rule found by a search over the rows
  (:mod:`~strategic_apple_tasting.engine.best_rule`) with its threshold chosen in hindsight
  on the seed's applicants, published and answered by the agents (the Stackelberg version,
  what a lender could have earned with one fixed rule), and the same rule on the applicants'
  true features. The search gives a lower bound on the best linear rule, so these regrets are
  lower bounds;
* **regret against the least-squares rule**: θ* fitted on every row's outcome, shifted by the
  budget and answered by the agents, and on the true features (the benchmark of the scenario
  before the data game; a learner can beat it: it is not the best linear rule).

Beside the learners, each budget has a row for the best linear rule itself (its profit
answered by the agents).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..engine import simulate
from ..game import SubsetGaming
from ..game.data import HOLDOUT_SHARE
from ..learners import Learner, make_learner
from ..metrics import mean_ci
from .datasets import DataSet, data_game, from_lending
from .lending import LendingData

#: The lender's comparison: the logistic scorecards learned online (offset-logistic, the one
#: docs/lending.md recommends, first), SA-OLS, offset OLS, explore-then-commit, the oracle (θ*
#: shifted: the Stackelberg least-squares benchmark itself, a control whose regret against it
#: must be 0) and the learners unaware of gaming, accept-all and reject-all.
LEARNERS = ("offset-logistic", "naive-logistic", "sa-logistic", "sa-ols", "offset-ols", "etc",
            "oracle", "naive-greedy", "shifted-ols", "lin-ts", "epsilon-greedy", "accept-all",
            "reject-all")

#: The row standing for the best linear rule found by the search (answered by the agents),
#: searched and scored on the applicants of the run: an in-sample reference.
BEST_RULE = "best linear rule (search)"
#: Under the ``holdout`` protocol, the rows of the two rules chosen on each seed's learning
#: rows and scored on its held-out ones (:mod:`~strategic_apple_tasting.engine.holdout`).
CROSS_FITTED = {"holdout_best_rule_profit": "best linear rule (cross-fitted)",
                "holdout_ls_profit": "least-squares rule (cross-fitted)"}
#: What each protocol's profit and regret columns are measured on, for captions.
PROTOCOL_NOTES = {
    "replay": "protocol replay: rows redrawn with replacement, so every profit and regret is "
              "in-sample (on applicants the learner has learned from)",
    "once": "protocol once: each row at most once per run, in a fresh order per seed; "
            "profit and regret are online, on applicants met for the first time",
    "holdout": "protocol holdout: per seed a share of rows, stratified by outcome, is held "
               "out; the learner meets the others (redrawn: online profit and regrets are "
               "in-sample), and held-out profit is the rule in force at the end scored on "
               "the held-out applicants, out of sample",
}


def subset_agents(gameable: np.ndarray, delta: float, truthful: float = 0.0) -> SubsetGaming:
    """Agents that game only the features where ``gameable`` is True, within budget ``delta``.

    Examples
    --------
    >>> agents = subset_agents(np.array([False, True]), delta=0.5)
    >>> x_obs, moved = agents.respond_once(np.array([1.0, 1.0]), 0.4, np.zeros(2))
    >>> moved, float(x_obs[0]), round(float(x_obs[1]), 12)
    (True, 0.0, 0.4)
    """
    model = SubsetGaming(delta=delta, truthful=truthful,
                         gameable=np.asarray(gameable, dtype=bool))
    model.check()
    return model


def fitted_rule(data: LendingData | DataSet) -> tuple[np.ndarray, float]:
    """θ*, the least-squares fit of the reward on the features over all rows, and the spread
    of the rewards about it (the noise level σ that learners tuned to σ are told).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from strategic_apple_tasting.scenarios import load_csv
    >>> csv = pathlib.Path(tempfile.mkdtemp()) / "loans.csv"
    >>> _ = csv.write_text("bad,income\\n0,3\\n1,1\\n0,2\\n1,0\\n")
    >>> theta, sigma = fitted_rule(load_csv(csv, label="bad", default_value=1,
    ...                                     features=["income"]))
    >>> theta.round(3).tolist(), round(sigma, 3)
    ([0.0, 0.894], 0.447)
    """
    data = from_lending(data) if isinstance(data, LendingData) else data
    return data.contexts.fitted()


def resolve_learner(given: Any) -> tuple[str, Learner]:
    """A learner spec (a name, a Learner, or a (label, name or Learner) pair) → label, learner."""
    label, spec = given if isinstance(given, tuple) and len(given) == 2 else (None, given)
    learner = make_learner(spec) if isinstance(spec, str) else spec
    if not isinstance(learner, Learner) or not (label is None or isinstance(label, str)):
        raise ValueError(f"learners must be names, Learner instances or (label, learner) "
                         f"pairs, got {given!r}")
    return (label or (spec if isinstance(spec, str) else learner.name)), learner


def run_lending(data: LendingData | DataSet, learners: Sequence[Any] = LEARNERS, *,
                horizon: int, seeds: int | Sequence[int], delta: float, r0: float = 0.0,
                truthful: float = 0.0, rewards: str = "recorded", delay: int = 0,
                period: int = 1, per_decade: int = 20, threads: int = 1,
                progress: Callable[[int, int], None] | None = None,
                protocol: str = "replay", holdout_share: float = HOLDOUT_SHARE
                ) -> pd.DataFrame:
    """Play a data set's game with ``learners`` on the compiled engine.

    Parameters
    ----------
    data : LendingData or DataSet
        The applicants (:func:`~.lending.load_german_credit`, :func:`~.lending.load_csv`,
        :func:`~.datasets.load_dataset`, :func:`~.fico.load_fico`).
    learners : sequence of str, Learner or (str, str or Learner)
        Registry names, learner instances, or (label, learner) pairs to tell apart two
        configurations of one learner. Default :data:`LEARNERS`.
    horizon : int
        Applicants per run.
    seeds : int or sequence of int
        How many seeds (0, 1, ...), or which: the engine's seeds (a seed's streams spawn
        from ``SeedSequence(seed)``).
    delta, r0, truthful, rewards, delay, period, protocol, holdout_share
        The game's settings (:func:`~.datasets.data_game`); ``protocol`` says how each
        seed's applicants come from the rows (``replay``: redrawn, in-sample; ``once``; or
        ``holdout``: a share held out and the learners' rules scored on it).
    per_decade, threads, progress
        As for :func:`~strategic_apple_tasting.simulate`.

    Returns
    -------
    pandas.DataFrame
        The engine's table (one row per learner × seed × recorded round, with a data game's
        columns ``profit``, ``linear_regret``, ``stackelberg_regret``, ``ls_regret``,
        ``ls_stackelberg_regret`` and ``best_rule_profit``, in reward units: multiply by
        ``reward_scale`` for the data's; under ``holdout`` also ``holdout_profit``,
        ``holdout_best_rule_profit`` and ``holdout_ls_profit``, per held-out applicant),
        learners labelled as given.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from strategic_apple_tasting.scenarios import load_csv
    >>> csv = pathlib.Path(tempfile.mkdtemp()) / "loans.csv"
    >>> _ = csv.write_text("bad,income,cash\\n0,3,1\\n1,1,0\\n0,2,2\\n1,0,1\\n")
    >>> data = load_csv(csv, label="bad", default_value=1, features=["income", "cash"],
    ...                 gameable=["cash"])
    >>> table = run_lending(data, ["oracle", "accept-all"], horizon=50, seeds=2, delta=0.5)
    >>> last = table[table.t == 50]
    >>> last.groupby("learner", sort=False)["ls_regret"].max().abs().round(9).tolist()
    [0.0, 25.0]
    """
    if isinstance(learners, str) or not learners:
        raise ValueError(f"learners must be a non-empty list of learners (names, Learner "
                         f"instances or (label, learner) pairs), got {learners!r}")
    specs = [resolve_learner(given) for given in learners]
    labels = [label for label, _ in specs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"learners must have distinct labels (give (label, learner) pairs), "
                         f"got {labels!r}")
    game = data_game(data, delta=delta, truthful=truthful, r0=r0, rewards=rewards,
                     delay=delay, period=period, protocol=protocol,
                     holdout_share=holdout_share)
    table = simulate(game, [lr for _, lr in specs], horizon, seeds, threads=threads,
                     per_decade=per_decade, progress=progress).to_pandas()
    # The engine labels by name (numbered when a name repeats); the caller's labels replace
    # them in the engine's order of learners.
    engine_labels = list(dict.fromkeys(table["learner"]))
    table["learner"] = table["learner"].map(dict(zip(engine_labels, labels, strict=True)))
    return table


def compare_lending(table: pd.DataFrame) -> pd.DataFrame:
    """The lender's summary of :func:`run_lending`'s tables (concatenated over budgets): per
    budget and learner, means over seeds at the last round with 95% Student-t half-widths, in
    the data's units, and a row for the best linear rule (:data:`BEST_RULE`).

    Returns
    -------
    pandas.DataFrame
        Columns ``delta, protocol, learner, seeds, T, profit, profit_ci`` (online, per 1,000
        applicants), ``holdout, holdout_ci`` (under ``holdout``: the rule in force at the
        last round on the held-out applicants, per 1,000; NaN otherwise), ``regret,
        regret_ci`` (against the best linear rule answered by the agents), ``linear_regret,
        linear_regret_ci`` (that rule on true features), ``ls_regret, ls_regret_ci`` (the
        least-squares rule answered by the agents), ``ls_true_regret, ls_true_regret_ci`` (on
        true features), regrets per 1,000 applicants, ``accepted, moved, clean,
        gamed_as_clean`` (counts: means, gamed as clean the largest over seeds). Money is
        rounded to 10⁻⁶ of the data's unit; NaN where a row has no value (the best rule's
        regrets, its counts). Under ``holdout`` two more rows (:data:`CROSS_FITTED`) give the
        rules chosen on the learning rows, scored on the held-out ones.
    """
    if "protocol" not in table:  # a table from before the protocols: redrawn rows
        table = table.assign(protocol="replay")
    last = table[table["t"] == table.groupby(["delta", "learner", "seed"])["t"].transform("max")]
    out = []
    for delta, at in last.groupby("delta", sort=False):
        scale = float(at["reward_scale"].iloc[0])
        t = int(at["t"].max())
        per = 1000.0 * scale / t
        protocol = str(at["protocol"].iloc[0])
        held = "holdout_profit" in at and protocol == "holdout"

        def money(values: pd.Series, unit: float) -> tuple[float, float]:
            # To 10⁻⁶ of the data's unit: a regret against a rule the learner plays (the
            # oracle's against the least-squares rule) is 0 up to the order of summation.
            mean, half = mean_ci(np.round(values.to_numpy() * unit, 6))
            return mean, half

        for learner, group in at.groupby("learner", sort=False):
            row: dict[str, Any] = {"delta": delta, "protocol": protocol, "learner": learner,
                                   "seeds": int(group["seed"].nunique()), "T": t}
            row["profit"], row["profit_ci"] = money(group["profit"], per)
            row["holdout"], row["holdout_ci"] = (money(group["holdout_profit"], 1000.0 * scale)
                                                 if held else (math.nan, math.nan))
            for key, column in (("regret", "stackelberg_regret"),
                                ("linear_regret", "linear_regret"),
                                ("ls_regret", "ls_stackelberg_regret"),
                                ("ls_true_regret", "ls_regret")):
                row[key], row[f"{key}_ci"] = money(group[column], per)
            row.update(accepted=group["accepted"].mean(), moved=group["moved"].mean(),
                       clean=group["clean"].mean(),
                       gamed_as_clean=int(group["gamed_as_clean"].max()))
            out.append(row)
        best = at.drop_duplicates("seed")
        mean, half = money(best["best_rule_profit"], per)
        seeds = int(best["seed"].nunique())
        out.append({"delta": delta, "protocol": protocol, "learner": BEST_RULE,
                    "seeds": seeds, "T": t, "profit": mean, "profit_ci": half,
                    "holdout": math.nan, "holdout_ci": math.nan})
        if held:
            for column, label in CROSS_FITTED.items():
                mean, half = money(best[column], 1000.0 * scale)
                out.append({"delta": delta, "protocol": protocol, "learner": label,
                            "seeds": seeds, "T": t, "profit": math.nan,
                            "profit_ci": math.nan, "holdout": mean, "holdout_ci": half})
    return pd.DataFrame(out)


def shown_mean(value: float, half: float, digits: int = 4) -> str:
    """A mean with its interval's half-width; never "± 0", which would claim a precision:
    a value that is the same on every seed says so, one seed has no interval."""
    if isinstance(value, float) and math.isnan(value):
        return "-"
    if math.isnan(half):
        return f"{value:.{digits}g} (one seed)"
    if half == 0:
        return f"{value:.{digits}g} (on every seed)"
    return f"{value:.{digits}g} ± {half:.2g}"


#: The lender's table's columns: header → (summary column, is it a mean with an interval).
#: Money is per 1,000 applicants; the held-out column is shown under ``holdout`` only.
TABLE_COLUMNS = {
    "held-out profit per 1,000": ("holdout", True),
    "online profit per 1,000": ("profit", True),
    "regret per 1,000 vs best linear rule (Stackelberg)": ("regret", True),
    "vs best linear rule (true features)": ("linear_regret", True),
    "vs least-squares rule (Stackelberg)": ("ls_regret", True),
    "vs least-squares rule (true features)": ("ls_true_regret", True),
    "accepted": ("accepted", False), "moved": ("moved", False),
    "gamed as clean": ("gamed_as_clean", False),
}


def table_columns(summary: pd.DataFrame) -> dict[str, tuple[str, bool]]:
    """:data:`TABLE_COLUMNS` for this summary: the held-out column only if it has values."""
    held = "holdout" in summary and bool(summary["holdout"].notna().any())
    return {k: v for k, v in TABLE_COLUMNS.items() if held or v[0] != "holdout"}


def protocol_caption(summary: pd.DataFrame) -> str:
    """One line naming the summary's protocol(s) and what its columns are measured on."""
    protocols = (list(dict.fromkeys(summary["protocol"])) if "protocol" in summary
                 else ["replay"])
    return "; ".join(PROTOCOL_NOTES.get(p, f"protocol {p}") for p in protocols) + "."


def format_table(summary: pd.DataFrame | Mapping[str, Any]) -> str:
    """:func:`compare_lending`'s summary as a Markdown table (means ± 95% half-widths), under a
    line naming its protocol.

    Examples
    --------
    >>> print(format_table(pd.DataFrame([{"delta": 0.5, "protocol": "replay",
    ...     "learner": "oracle", "seeds": 2, "T": 100, "profit": 12.0, "profit_ci": 1.0,
    ...     "regret": 3.0, "regret_ci": 0.5, "linear_regret": 3.0, "linear_regret_ci": 0.5,
    ...     "ls_regret": 0.0, "ls_regret_ci": 0.0, "ls_true_regret": 0.0,
    ...     "ls_true_regret_ci": 0.0, "accepted": 10.0, "moved": 2.0,
    ...     "gamed_as_clean": 0}])).splitlines()[3][:67])
    | 0.5 | oracle | 2 | 12 ± 1 | 3 ± 0.5 | 3 ± 0.5 | 0 (on every seed)
    """
    frame = pd.DataFrame(summary)
    columns = table_columns(frame)
    head = "| δ | learner | seeds | " + " | ".join(columns) + " |"
    lines = [protocol_caption(frame), head, "|" + "---|" * (3 + len(columns))]
    for r in frame.to_dict("records"):
        cells = [f"{r['delta']:g}", str(r["learner"]), str(r["seeds"])]
        for key, interval in columns.values():
            value = r.get(key, math.nan)
            if value is None or (isinstance(value, float) and math.isnan(value)):
                cells.append("-")
            elif interval:
                cells.append(shown_mean(float(value), float(r[f"{key}_ci"])))
            else:
                cells.append(f"{value:.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
