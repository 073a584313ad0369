"""A game from flat, named settings: the names of ``sat run``'s flags, shared by specs.

One place turns ``{"dimension": 5, "agents": "trembling", "tremble": 0.1, ...}`` into a
:class:`~strategic_apple_tasting.game.Game`, so the command line and sweep specs agree on names,
defaults and checks. ``{"data": "german-credit", "delta": 0.25}`` is a data game
(:func:`~strategic_apple_tasting.scenarios.data_game`): the data set fixes the dimension, the
contexts and the agents (who game its ``gameable`` features), and ``rewards`` says whether
accepting earns the row's recorded outcome or the least-squares rule's prediction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..game import AGENTS, CONTEXTS, EllipsoidalCost, Game

#: Context models that flat settings can set up (empirical contexts and sequences need arrays:
#: use the Python API).
FLAG_CONTEXTS = ("uniform-ball", "uniform-sphere", "mixture", "greedy-trap", "orthogonal-traps")
FLAG_AGENTS = ("lazy", "trembling", "heterogeneous", "ellipsoid")

#: The largest dimension flat settings (the command line, specs) accept; the engine then checks
#: that a run's memory fits. Above it even the game's own vectors take gigabytes.
MAX_DIMENSION = 100_000

#: Game settings by flag name (underscores for hyphens) → default (None: required).
GAME_SETTINGS: dict[str, Any] = {
    "dimension": None,
    "delta": 0.1,
    "feedback": "apple",
    "r0": 0.0,
    "sigma": None,
    "contexts": "uniform-ball",
    "radius": 1.0,
    "c0": 0.5,
    "truthful": 0.0,
    "agents": "lazy",
    "tremble": 0.05,
    "adversarial_tremble": False,
    "budget_low": 0.0,
    "cost": None,
    "delay": 0,
    "delay_law": "fixed",
    "period": 1,
    "data": None,
    "gameable": None,
    "rewards": None,
    "delta_by_group": None,
    "protocol": None,
    "holdout_share": None,
}

#: Settings a data game fixes itself (its rows are the contexts; its agents game its gameable
#: features): given with ``data`` at another value than the default, they are an error.
DATA_FIXES = ("contexts", "agents", "radius", "c0", "tremble", "adversarial_tremble",
              "budget_low", "cost")


#: Settings that only some models read → those models (a changed value elsewhere is an error).
APPLIES_TO = {"radius": ("uniform-ball", "uniform-sphere", "mixture"), "c0": ("mixture",),
              "tremble": ("trembling",), "adversarial_tremble": ("trembling",),
              "budget_low": ("heterogeneous",), "cost": ("ellipsoid",)}
APPLIES_NAMES = {"radius": ("contexts = uniform-ball, uniform-sphere or mixture",),
                 "c0": ("contexts = mixture",), "tremble": ("agents = trembling",),
                 "adversarial_tremble": ("agents = trembling",),
                 "budget_low": ("agents = heterogeneous",), "cost": ("agents = ellipsoid",)}


def cost_matrix(cost: Any, d: int) -> np.ndarray:
    """The matrix A of an ellipsoidal cost from a setting: its diagonal (d numbers) or its d
    rows; ``ValueError`` saying what is allowed otherwise.

    Examples
    --------
    >>> cost_matrix([4, 1], 2).tolist()
    [[4.0, 0.0], [0.0, 1.0]]
    """
    allowed = (f"the diagonal of A ({d} numbers) or its {d} rows of {d} numbers, symmetric "
               f"positive definite")
    if cost is None:
        raise ValueError(f"cost must be given with agents = ellipsoid: {allowed}")
    try:
        a = np.asarray(cost, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"cost must be {allowed}, got {cost!r}") from None
    if a.shape == (d,):
        a = np.diag(a)
    if a.shape != (d, d) or not np.all(np.isfinite(a)):
        raise ValueError(f"cost must be {allowed}, got {cost!r}")
    if not np.allclose(a, a.T, rtol=1e-12, atol=0) or np.linalg.eigvalsh(a).min() <= 0:
        raise ValueError(f"cost must be {allowed}, got {cost!r}")
    return a


def game_from_settings(settings: dict[str, Any]) -> Game:
    """The game the flat ``settings`` describe (missing ones take :data:`GAME_SETTINGS`'s
    defaults); ``ValueError`` naming the setting when one is unknown or out of range.

    Examples
    --------
    >>> game = game_from_settings({"dimension": 3, "agents": "trembling", "tremble": 0.1})
    >>> game.agents.tremble, game.delta
    (0.1, 0.1)
    """
    unknown = sorted(set(settings) - set(GAME_SETTINGS))
    if unknown:
        raise ValueError(f"unknown game setting {unknown[0]!r}; allowed: "
                         f"{', '.join(GAME_SETTINGS)}")
    s = {**GAME_SETTINGS, **settings}
    if s["data"] is not None:
        return _data_game(s)
    for key in ("gameable", "rewards", "delta_by_group", "protocol", "holdout_share"):
        if s[key] is not None and not (key == "rewards" and s[key] == "linear"):
            raise ValueError(f"{key.replace('_', '-')} applies only to a data set's game (data = "
                             f"{', '.join(_datasets())}), got {key}={s[key]!r} without data")
    for key, models in APPLIES_TO.items():
        if s[key] != GAME_SETTINGS[key] and s["contexts"] not in models \
                and s["agents"] not in models:
            raise ValueError(f"{key.replace('_', '-')} applies only to "
                             f"{' or '.join(APPLIES_NAMES[key])}, got {key.replace('_', '-')}="
                             f"{s[key]!r} with contexts={s['contexts']!r}, agents={s['agents']!r}")
    if s["dimension"] is None:
        raise ValueError("dimension must be given")
    d = s["dimension"]
    if not (isinstance(d, int | np.integer) and not isinstance(d, bool)
            and 1 <= d <= MAX_DIMENSION):
        raise ValueError(f"dimension must be an integer from 1 to {MAX_DIMENSION:,}, got {d!r}")
    if s["contexts"] not in FLAG_CONTEXTS:
        raise ValueError(f"contexts must be one of {', '.join(FLAG_CONTEXTS)}, "
                         f"got {s['contexts']!r}")
    if s["agents"] not in FLAG_AGENTS:
        raise ValueError(f"agents must be one of {', '.join(FLAG_AGENTS)}, got {s['agents']!r}")
    cls = CONTEXTS[s["contexts"]]
    fields = {"radius": s["radius"], "c0": s["c0"]}
    contexts = cls(**{k: v for k, v in fields.items() if k in cls._fields})
    agent_cls = AGENTS[s["agents"]]
    if agent_cls is EllipsoidalCost:
        agents = EllipsoidalCost.from_cost(cost_matrix(s["cost"], s["dimension"]))
    else:
        fields = {"tremble": s["tremble"], "adversarial": s["adversarial_tremble"],
                  "low": s["budget_low"]}
        agents = agent_cls(**{k: v for k, v in fields.items() if k in agent_cls._fields})
    try:
        return Game(dimension=s["dimension"], delta=s["delta"], feedback=s["feedback"],
                    r0=s["r0"], sigma=s["sigma"], contexts=contexts, truthful=s["truthful"],
                    agents=agents, delay=s["delay"], delay_law=s["delay_law"],
                    period=s["period"])
    except ValueError as exc:
        raise _named(exc) from None


def _named(exc: ValueError) -> ValueError:
    """The error naming the setting, not the model's field it sets."""
    text = str(exc)
    for field, setting in _MODEL_FIELDS.items():
        if text.startswith(f"{field} "):
            text = setting + text[len(field):]
    return ValueError(text)


def _datasets() -> tuple[str, ...]:
    from ..scenarios.datasets import DATASETS

    return tuple(DATASETS)


def gameable_names(value: Any) -> tuple[str, ...] | None:
    """The ``gameable`` setting as names: ``"a, b"`` (or a list of names) → ("a", "b"); None
    keeps the data set's default; ``"none"``: no feature is gameable. An empty name list
    (``""``, ``","``) is refused: it read as the default, which a user meaning none did not
    get."""
    if value is None:
        return None
    if isinstance(value, str):
        names = [n.strip() for n in value.split(",") if n.strip()]
        if not names:
            raise ValueError(f"gameable must be feature names separated by ',' (or 'none' for "
                             f"none; leave it out for the data set's own), got {value!r}")
        return () if names == ["none"] else tuple(names)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"gameable must be feature names separated by ',' (or 'none'), "
                     f"got {value!r}")


def group_budget_setting(value: Any) -> dict[str, float] | None:
    """The ``delta_by_group`` setting as a mapping: ``"black=0.3,white=0.5"`` (the form of a
    results table's column) or a table of names to numbers → {name: budget}; None: one budget.
    Which names and budgets are allowed is the game's to say (every group once, each >= 0).

    Examples
    --------
    >>> group_budget_setting("black=0.3, white=0.5")
    {'black': 0.3, 'white': 0.5}
    """
    if value is None:
        return None
    allowed = ("group=budget pairs separated by ',' (e.g. 'black=0.3,white=0.5'), one for "
               "every group of the data")
    if isinstance(value, dict):
        return dict(value)
    if not isinstance(value, str):
        raise ValueError(f"delta-by-group must be {allowed}, got {value!r}")
    out: dict[str, float] = {}
    for item in value.split(","):
        name, sep, number = item.rpartition("=")
        name = name.strip()
        try:
            budget = float(number)
        except ValueError:
            budget = None
        if not sep or not name or budget is None:
            raise ValueError(f"delta-by-group must be {allowed}, got {value!r}")
        if name in out:
            raise ValueError(f"delta-by-group gives group {name!r} twice, got {value!r}")
        out[name] = budget
    return out


def _data_game(s: dict[str, Any]) -> Game:
    """The game of the data set ``s["data"]`` (settings it fixes must be left at default)."""
    from ..scenarios.datasets import data_game, load_dataset

    datasets = _datasets()
    if not isinstance(s["data"], str) or s["data"] not in datasets:
        raise ValueError(f"data must be one of {', '.join(datasets)}, got {s['data']!r}")
    for key in DATA_FIXES:
        if s[key] != GAME_SETTINGS[key]:
            raise ValueError(f"{key.replace('_', '-')} is fixed by the data set (its rows are "
                             f"the contexts, its agents game its gameable features), got "
                             f"{key.replace('_', '-')}={s[key]!r} with data={s['data']!r}")
    data = load_dataset(s["data"], gameable_names(s["gameable"]))
    d = s["dimension"]
    if d is not None and d != data.d:
        raise ValueError(f"dimension must be {data.d} for data={s['data']!r} (its features, "
                         f"the intercept included), or left out, got {d!r}")
    if s["feedback"] != "apple":
        raise ValueError(f"feedback must be apple with data={s['data']!r} (a loan's outcome "
                         f"is seen only if it was granted), got {s['feedback']!r}")
    delta = s["delta"]
    by_group = group_budget_setting(s["delta_by_group"])
    if by_group is not None:
        if delta != GAME_SETTINGS["delta"]:
            raise ValueError(f"delta and delta-by-group both give the budget: give one, got "
                             f"delta={delta!r} and delta-by-group={s['delta_by_group']!r}")
        delta = by_group
    protocol = {"protocol": "replay" if s["protocol"] is None else s["protocol"]}
    if s["holdout_share"] is not None:
        if protocol["protocol"] != "holdout":
            raise ValueError(f"holdout-share applies only with protocol = holdout, got "
                             f"holdout-share={s['holdout_share']!r} with protocol="
                             f"{protocol['protocol']!r}")
        protocol["holdout_share"] = s["holdout_share"]
    try:
        return data_game(data, delta=delta, truthful=s["truthful"], r0=s["r0"],
                         rewards="recorded" if s["rewards"] is None else s["rewards"],
                         sigma=s["sigma"], delay=s["delay"], delay_law=s["delay_law"],
                         period=s["period"], **protocol)
    except ValueError as exc:
        raise _named(exc) from None


#: Model fields whose settings have other names.
_MODEL_FIELDS = {"low": "budget-low", "adversarial": "adversarial-tremble",
                 "delay_law": "delay-law"}
