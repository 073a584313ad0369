"""Sweep specs: a TOML file naming learners, game settings, horizon and seeds; lists sweep.

A spec::

    horizon = 100000          # rounds per run (a list sweeps, as everywhere)
    seeds = 8                 # a count (seeds 0..7) or a list of seeds
    seeds_per_cell = 4        # seeds run (and saved) together; default 4
    per_decade = 20           # recorded rounds per decade

    [game]                    # the settings of `sat run`, by flag name (- or _)
    dimension = [2, 5]        # a list sweeps
    delta = 0.1
    agents = "trembling"
    tremble = [0.01, 0.05]
    # agents = "ellipsoid"    # cost = [[4.0, 1.0]]: the diagonal of A (or [[rows...]])

    [[learners]]
    name = "sa-ols"

    [[learners]]
    name = "etc"
    exploration_rounds = [100, 1000]   # learner parameters sweep too
    label = "etc (fixed T0)"           # optional: how results name it

The sweep is the product of every list (a parameter whose value is itself a vector is
written as a list of one list). :func:`load_spec` checks the whole spec before
anything runs: a wrong key, type or value is one ``SpecError`` line naming its key path
(``game.delta[1]``), the value and what is allowed.

Limits, checked before the sweep is expanded: at most :data:`MAX_CELLS` cells and as many
seeds (``max_cells`` raises both; ``sat sweep --max-cells``), horizons from 1 to 10^12, and
seeds small enough for the results' int64 ``seed`` column. Each learner's label (its
``label``, else its name, with its parameters when they sweep) names exactly one learner
and parameter combination, and a list may not repeat a value: either would silently merge
two rows of results into one.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..engine import MAX_HORIZON, MAX_PER_DECADE, MAX_SEED, memory_needed, physical_memory
from ..game import Game
from ..learners import Learner, learner_class
from ..learners.introspect import param_names
from .settings import GAME_SETTINGS, cost_matrix, game_from_settings

TOP_KEYS = ("horizon", "seeds", "seeds_per_cell", "per_decade", "game", "learners")
DEFAULT_SEEDS_PER_CELL = 4
#: The most cells (and seeds) a spec may expand to unless ``max_cells`` says otherwise: a
#: cell is a few kilobytes of spec and one file, so a million of them takes minutes and
#: gigabytes before the first one runs, which is almost always a typo.
MAX_CELLS = 100_000


class SpecError(ValueError):
    """A spec mistake: one line naming the key path, the value and what is allowed."""


@dataclass(frozen=True)
class Cell:
    """One unit of work: one game, one learner (with parameters), a batch of seeds."""

    game: dict[str, Any]
    learner: str
    params: dict[str, Any]
    label: str
    seeds: tuple[int, ...]
    horizon: int
    per_decade: int

    @property
    def key(self) -> str:
        """A stable name for the cell, from everything that determines its results."""
        blob = json.dumps([self.game, self.learner, self.params, self.label, self.seeds,
                           self.horizon, self.per_decade], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    def build(self) -> tuple[Game, Learner]:
        return game_from_settings(self.game), learner_class(self.learner)(**self.params)


@dataclass(frozen=True)
class Spec:
    """A checked spec: its canonical form and the cells of its sweep."""

    canonical: dict[str, Any]
    cells: tuple[Cell, ...]

    @property
    def rounds(self) -> int:
        return sum(len(c.seeds) * c.horizon for c in self.cells)


def _show(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str | list) else repr(value)


def _int(path: str, value: Any, low: int) -> int:
    if not (isinstance(value, int) and not isinstance(value, bool) and value >= low):
        raise SpecError(f"{path} must be an integer >= {low}, got {_show(value)}")
    return value


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def _values(path: str, value: Any) -> list[Any]:
    """A setting's values: a list sweeps, anything else is one value."""
    if isinstance(value, list):
        if not value:
            raise SpecError(f"{path} must not be an empty list")
        seen: dict[Any, int] = {}
        for i, v in enumerate(value):
            first = seen.setdefault(_hashable(v), i)
            if first != i:  # equal values give equal cells, merged into one row of results
                raise SpecError(f"{path}[{i}] repeats {path}[{first}] ({_show(v)}): "
                                "the values of a list must be distinct")
        return value
    return [value]


def _expected_type(default: Any) -> tuple[type, ...]:
    if isinstance(default, bool):
        return (bool,)
    if isinstance(default, str):
        return (str,)
    if isinstance(default, float):
        return (int, float)
    return (int,)


def _type_name(types: tuple[type, ...]) -> str:
    return {(bool,): "true or false", (str,): "a string", (int, float): "a number",
            (int,): "an integer"}[types]


#: Order in which game settings are checked: the models first, so that a setting that only
#: some model reads is judged against the model the spec chose (a data set first of all: it
#: fixes the dimension and the models).
_ORDER = ("data", "gameable", "dimension", "feedback", "r0", "contexts", "agents")

#: The types of the game settings whose default (None) does not say it.
_NONE_TYPES: dict[str, tuple[type, ...]] = {
    "dimension": (int,), "sigma": (int, float), "data": (str,), "gameable": (str,),
    "rewards": (str,), "delta_by_group": (str,), "protocol": (str,),
    "holdout_share": (int, float)}


def _check_game(table: Any) -> dict[str, list[Any]]:
    if not isinstance(table, dict):
        raise SpecError(f"game must be a table ([game]), got {_show(table)}")
    game: dict[str, list[Any]] = {}
    paths: dict[str, str] = {}
    for raw_key, raw in table.items():
        key = raw_key.replace("-", "_")
        if key not in GAME_SETTINGS:
            raise SpecError(f"game.{raw_key} is not a game setting; allowed: "
                            f"{', '.join(k.replace('_', '-') for k in GAME_SETTINGS)}")
        types = _NONE_TYPES.get(key) or _expected_type(GAME_SETTINGS[key])
        values = _values(f"game.{raw_key}", raw)
        for i, v in enumerate(values):
            path = f"game.{raw_key}" + (f"[{i}]" if isinstance(raw, list) else "")
            if key == "cost":  # a vector or a matrix: a list of one of them, as any vector
                if not isinstance(v, list):
                    raise SpecError(f"{path} must be a list (the diagonal of A, or its rows) "
                                    f"inside the list of values, e.g. cost = [[4.0, 1.0]], "
                                    f"got {_show(v)}")
            elif not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
                raise SpecError(f"{path} must be {_type_name(types)}, got {_show(v)}")
        game[key] = values
        paths[key] = f"game.{raw_key}" + ("[{}]" if isinstance(raw, list) else "")
    if "dimension" not in game and "data" not in game:
        raise SpecError("game.dimension must be given (or game.data)")
    # Each value alone, with the settings checked before it at their first values, so that an
    # error names the value that causes it. An ellipsoid's cost is needed to build its agents,
    # so its values are checked first.
    for i, v in enumerate(game.get("cost", [])):
        try:
            cost_matrix(v, game.get("dimension", [2])[0])
        except ValueError as exc:
            raise SpecError(f"{paths['cost'].format(i)}: {exc}") from None
    checked: dict[str, Any] = {}
    for key in sorted(game, key=lambda k: (*_ORDER, k).index(k)):
        for i, v in enumerate(game[key]):
            trial = {**({} if "data" in game else {"dimension": 2}), **checked, key: v}
            if trial.get("agents") == "ellipsoid" and "cost" in game:  # needed to build it
                trial.setdefault("cost", game["cost"][0])
            try:
                game_from_settings(trial)
            except ValueError as exc:
                raise SpecError(f"{paths[key].format(i)}: {exc}") from None
        checked[key] = game[key][0]
    return game


def _check_learner(i: int, entry: Any) -> tuple[str, str | None, dict[str, list[Any]]]:
    path = f"learners[{i}]"
    if not isinstance(entry, dict):
        raise SpecError(f"{path} must be a table ([[learners]]), got {_show(entry)}")
    entry = dict(entry)
    name = entry.pop("name", None)
    try:
        cls = learner_class(name)
    except ValueError as exc:
        raise SpecError(f"{path}.name: {exc}") from None
    label = entry.pop("label", None)
    if label is not None and not isinstance(label, str):
        raise SpecError(f"{path}.label must be a string, got {_show(label)}")
    allowed = list(param_names(cls))
    params = {}
    for key, raw in entry.items():
        if key not in allowed:
            raise SpecError(f"{path}.{key} is not a parameter of {name}; allowed: "
                            f"{', '.join(['label', *allowed])}")
        params[key] = _values(f"{path}.{key}", raw)
    return name, label, params


def _horizon(path: str, value: Any) -> int:
    if not (isinstance(value, int) and not isinstance(value, bool)
            and 1 <= value <= MAX_HORIZON):
        raise SpecError(f"{path} must be an integer from 1 to 10^12, got {_show(value)}")
    return value


def _seeds(raw: Any) -> tuple[int, list[Any] | None]:
    """The number of seeds, and the list if one is given (not yet checked seed by seed)."""
    if isinstance(raw, list):
        if not raw:
            raise SpecError(f"seeds must be a count >= 1 or a non-empty list of distinct "
                            f"seeds, got {_show(raw)}")
        return len(raw), raw
    return _int("seeds", raw, 1), None


def _labels(learners: list[tuple[str, str | None, dict[str, list[Any]]]]
            ) -> list[list[tuple[dict[str, Any], str]]]:
    """Each learner entry's (parameters, label) combinations; ``SpecError`` if two share a
    label, as their results would be merged into one row."""
    owner: dict[str, int] = {}
    out = []
    for i, (name, label, options) in enumerate(learners):
        combos = _product(options)
        tagged = []
        for params in combos:
            shown = ", ".join(f"{k}={v}" for k, v in params.items())
            tag = label or name
            if shown and (label is None or len(combos) > 1):
                tag = f"{tag}({shown})"
            # Within one entry the lists' values are distinct, so only another entry clashes.
            first = owner.setdefault(tag, i)
            if first != i:
                what = (f"learners[{i}].label {_show(label)}" if label is not None
                        else f"learners[{i}] (no label, named {_show(tag)})")
                raise SpecError(f"{what} clashes with learners[{first}]: labels must be "
                                "unique (give one of them another label)")
            tagged.append((params, tag))
        out.append(tagged)
    return out


def _product(options: dict[str, list[Any]]) -> list[dict[str, Any]]:
    keys = list(options)
    return [dict(zip(keys, combo, strict=True))
            for combo in itertools.product(*(options[k] for k in keys))]


def check_spec(raw: dict[str, Any], *, max_cells: int | None = MAX_CELLS) -> Spec:
    """Check a parsed spec and expand it into cells.

    Parameters
    ----------
    raw : dict
        The spec as parsed from TOML (or a :attr:`Spec.canonical` form).
    max_cells : int or None
        The most cells, and the most seeds, the spec may have (default :data:`MAX_CELLS`);
        counted from the lists' lengths before anything is expanded. ``None``: no limit.

    Returns
    -------
    Spec
        The canonical form and the cells.

    Raises
    ------
    SpecError
        On the first mistake: one line naming the key path, the value and what is allowed.
    """
    for key in raw:
        if key not in TOP_KEYS:
            raise SpecError(f"{key} is not a spec key; allowed: {', '.join(TOP_KEYS)}")
    for key in ("horizon", "game", "learners"):
        if key not in raw:
            raise SpecError(f"{key} must be given")
    horizons = [_horizon(f"horizon[{i}]" if isinstance(raw["horizon"], list) else "horizon", h)
                for i, h in enumerate(_values("horizon", raw["horizon"]))]
    per_decade = raw.get("per_decade", 20)
    if not (isinstance(per_decade, int) and not isinstance(per_decade, bool)
            and 1 <= per_decade <= MAX_PER_DECADE):
        raise SpecError(f"per_decade must be an integer from 1 to {MAX_PER_DECADE:,}, "
                        f"got {_show(per_decade)}")
    n_seeds, seed_list = _seeds(raw.get("seeds", 1))
    per_cell = _int("seeds_per_cell", raw.get("seeds_per_cell", DEFAULT_SEEDS_PER_CELL), 1)
    game_options = _check_game(raw["game"])
    learners_raw = raw["learners"]
    if not isinstance(learners_raw, list) or not learners_raw:
        raise SpecError("learners must be a non-empty array of tables ([[learners]])")
    learners = [_check_learner(i, e) for i, e in enumerate(learners_raw)]

    # Counted from the lengths, before any list is built: a typo's million cells (or
    # seeds) would otherwise take minutes and gigabytes before the limit could be checked.
    n_cells = (math.prod(len(v) for v in game_options.values()) * len(horizons)
               * sum(math.prod(len(v) for v in o.values()) for _, _, o in learners)
               * -(-n_seeds // per_cell))
    if max_cells is not None:
        for count, what in ((n_cells, "cells"), (n_seeds, "seeds")):
            if count > max_cells:
                raise SpecError(f"the spec has {count:,} {what}, above the limit of "
                                f"{max_cells:,}: shrink its lists, or allow more with "
                                f"--max-cells (max_cells=) if that many are meant")
    if seed_list is None:
        seeds = list(range(n_seeds))
    else:
        # Each seed's streams and its int64 column need room for the seeds after it.
        top = MAX_SEED - n_seeds
        for i, s in enumerate(seed_list):
            if not (isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= top):
                raise SpecError(f"seeds[{i}] must be an integer from 0 to 2^63 - 1 - "
                                f"{n_seeds} (the number of seeds) = {top}, got {_show(s)}")
        if len(set(seed_list)) != n_seeds:
            raise SpecError(f"seeds must be a count >= 1 or a non-empty list of distinct "
                            f"seeds, got {_show(seed_list)}")
        seeds = list(seed_list)
    labelled = _labels(learners)

    batches = [tuple(seeds[i:i + per_cell]) for i in range(0, len(seeds), per_cell)]
    cells = []
    memory = physical_memory()
    for settings in _product(game_options):
        try:
            game = game_from_settings(settings)
        except ValueError as exc:
            combo = ", ".join(f"{k}={_show(v)}" for k, v in settings.items())
            raise SpecError(f"game ({combo}): {exc}") from None
        inst = game.instance(seeds[0])
        for (i, (name, _, _)), horizon in itertools.product(enumerate(learners), horizons):
            for params, tag in labelled[i]:
                try:  # binding and resetting checks every parameter, without compiling
                    learner = learner_class(name)(**params)
                    # A cell's memory first: resetting allocates the learner's state.
                    need = memory_needed(game, [learner], horizon, len(batches[0]), 1,
                                         per_decade)
                    if need > memory:
                        raise ValueError(
                            f"a cell at dimension {game.dimension}, horizon {horizon:,} needs "
                            f"about {need / 2**30:,.1f} GiB of memory, more than this "
                            f"machine's {memory / 2**30:,.1f} GiB: lower game.dimension or the "
                            f"horizon")
                    learner.bind(inst, horizon).reset(game.dimension, np.random.default_rng(0))
                except ValueError as exc:
                    raise SpecError(f"learners[{i}] ({name}): {exc}") from None
                for batch in batches:
                    cells.append(Cell(game=settings, learner=name, params=params, label=tag,
                                      seeds=batch, horizon=horizon, per_decade=per_decade))
    canonical = {"horizon": horizons, "seeds": seeds, "seeds_per_cell": per_cell,
                 "per_decade": per_decade, "game": game_options,
                 "learners": [{"name": n, "label": lb, **o} for n, lb, o in learners]}
    return Spec(canonical=canonical, cells=tuple(cells))


def load_spec(path: str | Path, *, max_cells: int | None = MAX_CELLS) -> Spec:
    """Read and check a spec: TOML, or the JSON of a sweep directory's ``specs/``.

    Parameters
    ----------
    path : str or Path
        The spec file; a ``.json`` file is read as a :attr:`Spec.canonical` form (as a sweep
        directory keeps each spec it ran), anything else as TOML.
    max_cells : int or None
        As for :func:`check_spec`.

    Raises
    ------
    SpecError
        One line: the file is missing, a directory, unreadable, not UTF-8 or not valid
        TOML/JSON, or the spec is wrong (see :func:`check_spec`).
    """
    path = Path(path)
    name = repr(str(path))
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise SpecError(f"spec {name} does not exist") from None
    except IsADirectoryError:
        raise SpecError(f"spec {name} is a directory, not a spec file") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"spec {name} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
                        f"offset {exc.start})") from None
    except OSError as exc:
        raise SpecError(f"spec {name} cannot be read: {exc.strerror or exc}") from None
    if path.suffix == ".json":
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecError(f"spec {name} is not valid JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise SpecError(f"spec {name} must hold a JSON object, got {type(raw).__name__}")
        # A sweep directory's record holds the spec beside its cells' keys.
        raw = raw.get("spec", raw) if isinstance(raw.get("spec"), dict) else raw
    else:
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SpecError(f"spec {name} is not valid TOML: {exc}") from None
    return check_spec(raw, max_cells=max_cells)
