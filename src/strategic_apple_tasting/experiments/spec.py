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
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..game import Game
from ..learners import LEARNERS, Learner
from .settings import GAME_SETTINGS, cost_matrix, game_from_settings

TOP_KEYS = ("horizon", "seeds", "seeds_per_cell", "per_decade", "game", "learners")
DEFAULT_SEEDS_PER_CELL = 4


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
        return game_from_settings(self.game), LEARNERS[self.learner](**self.params)


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


def _values(path: str, value: Any) -> list[Any]:
    """A setting's values: a list sweeps, anything else is one value."""
    if isinstance(value, list):
        if not value:
            raise SpecError(f"{path} must not be an empty list")
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
#: some model reads is judged against the model the spec chose.
_ORDER = ("dimension", "feedback", "r0", "contexts", "agents")


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
        types = _expected_type(GAME_SETTINGS[key] if key != "dimension" else 1)
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
    if "dimension" not in game:
        raise SpecError("game.dimension must be given")
    # Each value alone, with the settings checked before it at their first values, so that an
    # error names the value that causes it. An ellipsoid's cost is needed to build its agents,
    # so its values are checked first.
    for i, v in enumerate(game.get("cost", [])):
        try:
            cost_matrix(v, game["dimension"][0])
        except ValueError as exc:
            raise SpecError(f"{paths['cost'].format(i)}: {exc}") from None
    checked: dict[str, Any] = {}
    for key in sorted(game, key=lambda k: (*_ORDER, k).index(k)):
        for i, v in enumerate(game[key]):
            trial = {"dimension": 2, **checked, key: v}
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
    if name not in LEARNERS:
        raise SpecError(f"{path}.name must be one of {', '.join(sorted(LEARNERS))}, "
                        f"got {_show(name)}")
    label = entry.pop("label", None)
    if label is not None and not isinstance(label, str):
        raise SpecError(f"{path}.label must be a string, got {_show(label)}")
    allowed = LEARNERS[name]._param_names()
    params = {}
    for key, raw in entry.items():
        if key not in allowed:
            raise SpecError(f"{path}.{key} is not a parameter of {name}; allowed: "
                            f"{', '.join(['label', *allowed])}")
        params[key] = _values(f"{path}.{key}", raw)
    return name, label, params


def _product(options: dict[str, list[Any]]) -> list[dict[str, Any]]:
    keys = list(options)
    return [dict(zip(keys, combo, strict=True))
            for combo in itertools.product(*(options[k] for k in keys))]


def check_spec(raw: dict[str, Any]) -> Spec:
    """Check a parsed spec and expand it into cells (``SpecError`` on the first mistake)."""
    for key in raw:
        if key not in TOP_KEYS:
            raise SpecError(f"{key} is not a spec key; allowed: {', '.join(TOP_KEYS)}")
    for key in ("horizon", "game", "learners"):
        if key not in raw:
            raise SpecError(f"{key} must be given")
    horizons = [_int(f"horizon[{i}]" if isinstance(raw["horizon"], list) else "horizon", h, 1)
                for i, h in enumerate(_values("horizon", raw["horizon"]))]
    per_decade = _int("per_decade", raw.get("per_decade", 20), 1)
    seeds_raw = raw.get("seeds", 1)
    if isinstance(seeds_raw, list):
        seeds = [_int(f"seeds[{i}]", s, 0) for i, s in enumerate(seeds_raw)]
        if not seeds or len(set(seeds)) != len(seeds):
            raise SpecError(f"seeds must be a count >= 1 or a non-empty list of distinct "
                            f"seeds, got {_show(seeds_raw)}")
    else:
        seeds = list(range(_int("seeds", seeds_raw, 1)))
    per_cell = _int("seeds_per_cell", raw.get("seeds_per_cell", DEFAULT_SEEDS_PER_CELL), 1)
    game_options = _check_game(raw["game"])
    learners_raw = raw["learners"]
    if not isinstance(learners_raw, list) or not learners_raw:
        raise SpecError("learners must be a non-empty array of tables ([[learners]])")
    learners = [_check_learner(i, e) for i, e in enumerate(learners_raw)]

    batches = [tuple(seeds[i:i + per_cell]) for i in range(0, len(seeds), per_cell)]
    cells = []
    for settings in _product(game_options):
        try:
            game = game_from_settings(settings)
        except ValueError as exc:
            combo = ", ".join(f"{k}={_show(v)}" for k, v in settings.items())
            raise SpecError(f"game ({combo}): {exc}") from None
        inst = game.instance(seeds[0])
        for (i, (name, label, options)), horizon in itertools.product(enumerate(learners),
                                                                      horizons):
            combos = _product(options)
            for params in combos:
                try:  # binding and resetting checks every parameter, without compiling
                    learner = LEARNERS[name](**params)
                    learner.bind(inst, horizon).reset(game.dimension, np.random.default_rng(0))
                except ValueError as exc:
                    raise SpecError(f"learners[{i}] ({name}): {exc}") from None
                shown = ", ".join(f"{k}={v}" for k, v in params.items())
                tag = label or name
                if shown and (label is None or len(combos) > 1):
                    tag = f"{tag}({shown})"
                for batch in batches:
                    cells.append(Cell(game=settings, learner=name, params=params, label=tag,
                                      seeds=batch, horizon=horizon, per_decade=per_decade))
    canonical = {"horizon": horizons, "seeds": seeds, "seeds_per_cell": per_cell,
                 "per_decade": per_decade, "game": game_options,
                 "learners": [{"name": n, "label": lb, **o} for n, lb, o in learners]}
    return Spec(canonical=canonical, cells=tuple(cells))


def load_spec(path: str | Path) -> Spec:
    """Read and check a TOML spec."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SpecError(f"spec {str(path)!r} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"spec {str(path)!r} is not valid TOML: {exc}") from None
    return check_spec(raw)
