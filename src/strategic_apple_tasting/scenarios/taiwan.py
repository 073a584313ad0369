"""The UCI "default of credit card clients" data (Taiwan, 2005) as a lending data set.

30,000 card holders of a Taiwanese bank (Yeh & Lien 2009; CC BY 4.0, UCI Machine Learning
Repository), each with 23 attributes and whether they defaulted on the next month's payment
(22.12 % did). The CSV that the package ``westat`` 0.3.3 ships is vendored, gzip-compressed
and otherwise unchanged, in ``data/taiwan-credit/`` (provenance, licences and checksums in its
README) and read as a file; nothing is downloaded. It goes the way of German credit: a
:class:`~.lending.LendingData` of standardized features with an intercept first and each
row's recorded reward, then a :class:`~.dataset.DataSet` as :func:`~.datasets.from_lending`
makes one. Each choice, and why:

* ``ID`` is dropped: it numbers the rows and says nothing about the holder.
* ``SEX``, ``EDUCATION`` and ``MARRIAGE`` are categories (one 0/1 column per level but the
  most frequent): their codes name classes, they do not measure anything.
* Every code the data's documentation calls unknown or leaves undocumented (``EDUCATION`` 0, 5
  and 6, ``MARRIAGE`` 0) is the one level ``unknown``: nothing tells those codes apart.
* The repayment statuses ``PAY_0``, ``PAY_2`` … ``PAY_6`` stay numbers: they are ordered (−1
  paid duly, then months late), as Yeh & Lien use them.
* Amounts (``LIMIT_BAL``, ``BILL_AMT*``, ``PAY_AMT*``) and ``AGE`` stay as recorded, only
  standardized, as German credit's are: a transform would be a model handed to the learners.
* Rewards are +1 for a repaid and −5 for a defaulted account (:data:`TAIWAN_REWARDS`): the
  data publish no cost matrix (Yeh & Lien score probabilities, not decisions), so the one UCI
  states for consumer credit, German credit's, is used, which also keeps the three bundled
  books' profits on one scale. A card lender can defend its order: a default loses about the
  balance, while a paying holder earns a margin on it, a fraction of it a year.
* Applicants can game the latest statement's balance and the latest payment
  (:data:`TAIWAN_GAMEABLE`): paying the card down just before applying lowers one and raises
  the other, at the cost of cash they have. The repayment history, older statements, the limit
  (the lender's own decision), age, sex, education and marriage cannot be changed at will.
* Each row's group is its ``SEX`` (:data:`TAIWAN_GROUPS`), the data's one protected attribute,
  for the table by group. It is also a feature, as sex is in German credit and in Yeh & Lien's
  models; no learner is shown it as a group.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from importlib import resources

import numpy as np
import pandas as pd

from .dataset import DataSet
from .lending import _assemble, _columns, _one_hot, _rewards

#: The vendored file, in the package's ``scenarios/data/taiwan-credit/``.
TAIWAN_DIR = ("data", "taiwan-credit")
TAIWAN_FILE = "UCI_Credit_Card.csv.gz"
#: The name of the data set in results tables and ``--data``.
TAIWAN_TITLE = "taiwan-credit"
TAIWAN_LABEL = "target"
#: The identifier column, not an attribute.
TAIWAN_ID = "ID"
#: The attributes, in the file's order.
TAIWAN_ATTRIBUTES = ("LIMIT_BAL", "SEX", "EDUCATION", "MARRIAGE", "AGE",
                     "PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6",
                     *(f"BILL_AMT{i}" for i in range(1, 7)), *(f"PAY_AMT{i}" for i in range(1, 7)))
#: The categorical attributes' codes → level names (UCI's documentation; unknown and
#: undocumented codes are one level, ``unknown``).
TAIWAN_CATEGORIES = {
    "SEX": {1: "male", 2: "female"},
    "EDUCATION": {1: "graduate", 2: "university", 3: "high-school", 4: "other", 5: "unknown",
                  6: "unknown", 0: "unknown"},
    "MARRIAGE": {1: "married", 2: "single", 3: "other", 0: "unknown"},
}
#: What an applicant can change cheaply before applying: pay the card down (module docstring).
TAIWAN_GAMEABLE = ("BILL_AMT1", "PAY_AMT1")
#: Repaid and defaulted rewards: UCI's German-credit cost matrix (module docstring).
TAIWAN_REWARDS = (1.0, -5.0)
#: The groups of the table by group: ``SEX``'s levels, in the order of its codes.
TAIWAN_GROUPS = ("male", "female")
SOURCE = ("UCI default of credit card clients (Yeh & Lien 2009; CC BY 4.0), as westat 0.3.3 "
          "(GPL-3.0) ships it: westat/data/UCI_Credit_Card.csv; vendored in "
          "strategic_apple_tasting/scenarios/data/taiwan-credit")


def taiwan_frame() -> pd.DataFrame:
    """The vendored CSV as it is: ``ID``, the 23 attributes and ``target``, 30,000 rows.

    Examples
    --------
    >>> frame = taiwan_frame()
    >>> frame.shape, int(frame["target"].sum())
    ((30000, 25), 6636)
    """
    path = resources.files("strategic_apple_tasting.scenarios").joinpath(*TAIWAN_DIR,
                                                                         TAIWAN_FILE)
    with resources.as_file(path) as file:
        frame = pd.read_csv(file)
    expected = [TAIWAN_ID, *TAIWAN_ATTRIBUTES, TAIWAN_LABEL]
    if list(frame.columns) != expected:  # a damaged or replaced file, not a user's input
        raise ValueError(f"{TAIWAN_FILE}: columns must be {', '.join(expected)}, got "
                         f"{', '.join(map(str, frame.columns))}")
    return frame


def _levels(frame: pd.DataFrame, column: str) -> pd.Series:
    """A categorical attribute's codes as level names; ``ValueError`` for a code it has not."""
    codes = TAIWAN_CATEGORIES[column]
    unknown = ~frame[column].isin(list(codes))
    if unknown.any():
        raise ValueError(f"{column}: code {frame[column][unknown].iloc[0]!r} is not one of "
                         f"{sorted(codes)}")
    return frame[column].map(codes)


def load_taiwan_credit(gameable: Sequence[str] = TAIWAN_GAMEABLE,
                       rewards: tuple[float, float] = TAIWAN_REWARDS) -> DataSet:
    """The default of credit card clients data (module docstring) as a data set.

    Parameters
    ----------
    gameable : sequence of str
        The attributes agents can game (names of the file's columns; a categorical attribute
        makes all its level columns gameable). Default: the latest statement's balance and the
        latest payment (:data:`TAIWAN_GAMEABLE`).
    rewards : (float, float)
        The reward of accepting a repaid and a defaulted account, before scaling into [−1, 1]
        (default +1 and −5, :data:`TAIWAN_REWARDS`).

    Returns
    -------
    DataSet
        30,000 rows, d = 29 (the intercept, 20 numeric attributes, 8 level columns), titled
        ``taiwan-credit``; each row's ``SEX`` in ``contexts.groups``.

    Raises
    ------
    ValueError
        For an unknown gameable attribute or rewards that are not two finite numbers.

    Examples
    --------
    >>> data = load_taiwan_credit()
    >>> data.n, data.d, data.gameable_names(), data.contexts.group_names
    (30000, 29, ('BILL_AMT1', 'PAY_AMT1'), ('male', 'female'))
    >>> round(float(np.mean(data.contexts.repaid == 0)), 4)  # the default rate
    0.2212
    """
    gain, loss = _rewards(rewards)
    gameable = _columns("gameable", gameable, TAIWAN_ATTRIBUTES, allow_empty=True)
    frame = taiwan_frame()
    blocks, names, game_names = [], [], []
    for column in TAIWAN_ATTRIBUTES:
        if column in TAIWAN_CATEGORIES:
            block, block_names = _one_hot(frame.assign(**{column: _levels(frame, column)}),
                                          column)
        else:
            block, block_names = frame[column].to_numpy(dtype=float)[:, None], [column]
        blocks.append(block)
        names += block_names
        if column in gameable:
            game_names += block_names
    defaulted = (frame[TAIWAN_LABEL] == 1).to_numpy()
    reward = np.where(defaulted, loss, gain)
    data = _assemble(np.column_stack(blocks), names, game_names, reward, defaulted, SOURCE,
                     {"rewards": (gain, loss), "gameable_attributes": tuple(gameable)})
    index = {name: g for g, name in enumerate(TAIWAN_GROUPS)}
    groups = _levels(frame, "SEX").map(index).to_numpy(dtype=np.int64)
    return dataclasses.replace(data, groups=groups,
                               group_names=TAIWAN_GROUPS).data_set(TAIWAN_TITLE)
