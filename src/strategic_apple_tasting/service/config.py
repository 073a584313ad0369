"""What a decision service runs: the learner, the applicants' features, the cadence, the database.

Given as ``sat serve`` flags or a small TOML file (``sat serve --config service.toml``)::

    learner = "sa-ols"
    dimension = 3
    features = ["checking", "savings", "income"]
    seed = 0
    publish = "outcomes:100"      # "manual", "outcomes:K" or "period:SECONDS"
    database = "sqlite:///decisions.db"

    [params]
    delta = 0.3
    r0 = 0.0

The database keeps every setting (:mod:`.settings`): a restart needs only ``--database`` and
takes the rest from it. The learner, its parameters, the dimension, the seed, the shadow and
the features' means and scales are fixed by the log (it means nothing to another learner);
the features' words, the cadence, retention, the cap and the limits may change at a start,
which says so. The address is given at each start.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: How a published rule is replaced: by hand (``POST /publish``), after every K outcomes
#: learned, or once a period (seconds of wall-clock time) has passed.
CADENCES = ("manual", "outcomes:K", "period:SECONDS")
#: The shortest period: an idle service publishes a new version each period, and a period of
#: 1e-9 s made 161 identical versions in 12 s.
MIN_PERIOD = 1.0
#: The settings a database remembers from its creation.
FIXED = ("learner", "params", "dimension", "seed")
#: Parameters a simulation takes from the game (``Learner.bind``): a service must be given them.
UNBOUND = ("delta", "r0", "sigma", "horizon")


def parse_cadences(text: str) -> dict[str, float]:
    """One cadence, or two joined by a comma (``"outcomes:100,period:3600"``: after 100
    outcomes or an hour, whichever comes first), as {kind: amount}."""
    parts = [parse_cadence(p.strip()) for p in str(text).split(",")]
    kinds = [k for k, _ in parts]
    if len(parts) > 1 and ("manual" in kinds or len(set(kinds)) != len(kinds)):
        raise ValueError(f"publish joins at most one outcomes:K and one period:SECONDS with a "
                         f"comma, got {text!r}")
    return {k: v for k, v in parts if k != "manual"}


def parse_cadence(text: str) -> tuple[str, float]:
    """``"manual"``, ``"outcomes:K"`` or ``"period:SECONDS"`` as (kind, amount)."""
    if text == "manual":
        return "manual", 0.0
    kind, _, amount = str(text).partition(":")
    try:
        value = float(amount)
    except ValueError:
        value = math.nan
    if kind == "outcomes" and value >= 1 and value == int(value):
        return kind, value
    if kind == "period" and MIN_PERIOD <= value < math.inf:
        return kind, value
    raise ValueError(f"publish must be one of {', '.join(CADENCES)} (K an integer >= 1, "
                     f"SECONDS a finite number >= {MIN_PERIOD:g}), got {text!r}")


#: The largest share of rejected applicants the service may accept at random: exploration
#: costs at most that share times a default's loss on each such applicant.
MAX_EXPLORE = 0.2

#: What a feature of the settings may say (``[[features]]`` tables), besides its name.
FEATURE_KEYS = ("name", "unit", "definition", "mean", "scale")
#: Columns the service's files give a meaning of their own (an export's decisions, a warm
#: start's log): a feature of that name would be read as the other column.
RESERVED_NAMES = ("id", "seq", "time", "version", "accepted", "capped", "key_id", "group",
                  "band", "outcome")


@dataclass(frozen=True)
class Feature:
    """One feature as a lender declares it: its name, its unit and its definition (shown to
    applicants), and the mean and scale that standardize it (the learner and the rule see
    ``(x - mean) / scale``; 0 and 1 leave it as given)."""

    name: str
    unit: str = ""
    definition: str = ""
    mean: float = 0.0
    scale: float = 1.0


class Scaling:
    """The declared standardization: features as applicants give them (raw, in their units)
    to what the learner and the rule see. One function, so the deciders, the learner, a
    replay and an explanation compute the same bits."""

    def __init__(self, features: list[Feature]) -> None:
        self.means = np.array([f.mean for f in features], dtype=float)
        self.scales = np.array([f.scale for f in features], dtype=float)
        self.identity = bool(np.all(self.means == 0.0) and np.all(self.scales == 1.0))

    def __call__(self, x: Any) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return x if self.identity else (x - self.means) / self.scales


@dataclass
class ServiceConfig:
    """A decision service's settings (see the module's description).

    Examples
    --------
    >>> config = ServiceConfig(learner="sa-ols", dimension=2,
    ...                        params={"delta": 0.2, "r0": 0.0})
    >>> config.check().cadence()
    ('outcomes', 100.0)
    """

    learner: str = "sa-ols"
    dimension: int = 2
    params: dict[str, Any] = field(default_factory=dict)
    features: list[str] | None = None
    seed: int = 0
    publish: str = "outcomes:100"
    database: str = "sqlite:///sat-service.db"
    #: Applicants in one ``POST /decisions`` (and outcomes in one ``POST /outcomes``).
    max_batch: int = 10_000
    #: Bytes of one request's body.
    max_body: int = 4 * 1024 * 1024
    #: Seconds a request's whole body may take to arrive (else 408): a client trickling bytes
    #: cannot hold a connection.
    body_timeout: float = 10.0
    #: Log positions between two saved learner states (restarts replay at most this many).
    snapshot_every: int = 10_000
    #: Minutes at most between two saved learner states while the log grows (whichever of
    #: this and ``snapshot_every`` comes first): retention and ``sat serve check`` then have a
    #: recent base at any volume.
    snapshot_minutes: float = 60.0
    #: Distinct group labels counted at most (a request bringing one more is refused): the
    #: figures by group, and ``/metrics``, stay bounded.
    max_groups: int = 1_000
    #: Seconds at least between two publications by the cadence (``POST /publish`` is not
    #: held): a batch of outcomes does not publish a burst of rules.
    min_interval: float = 0.0
    #: Acceptances allowed under rules published before the learner learned any outcome
    #: (None: no cap); past it such a rule's acceptances are rejections marked ``capped``.
    warm_cap: int | None = None
    #: Days a log entry is kept once a saved state includes it (None: for ever).
    retain_days: float | None = None
    #: The share of the applicants a learned rule rejects that are accepted at random
    #: (exploration: each decision's propensity logged, for off-policy evaluation), at most
    #: :data:`MAX_EXPLORE`; 0: none.
    explore: float = 0.0
    #: How a rejected applicant reaches the lender (shown on the applicants' page).
    contact: str | None = None
    #: Requests a second each API key may make on average, per worker (a token bucket of
    #: one second's worth: :mod:`.ratelimit`); past it 429 with ``Retry-After``. 0: no limit.
    rate_limit: float = 0.0
    #: A candidate learner fed the same log, never answering (its name; None: no shadow).
    shadow: str | None = None
    shadow_params: dict[str, Any] = field(default_factory=dict)
    #: Warm starts of a new database (one at most): a rule (JSON), a saved learner, a log.
    start_rule: str | None = None
    start_learner: str | None = None
    start_log: str | None = None

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> ServiceConfig:
        """Read a TOML file; ``overrides`` (given flags) win over it."""
        doc = cls.read_file(path)
        doc.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**doc)

    @classmethod
    def read_file(cls, path: str | Path) -> dict[str, Any]:
        """The settings a TOML file states (only those: a restart takes the rest from the
        database); a ``ValueError`` in one line for a file that is not TOML or names an
        unknown setting."""
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"--config {str(path)!r} is not a file")
        try:
            doc = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"--config {str(path)!r} is not TOML ({exc})") from None
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(doc) - known)
        if unknown:
            raise ValueError(f"--config {str(path)!r}: unknown setting {unknown[0]!r}; allowed: "
                             f"{', '.join(sorted(known))}")
        return doc

    def cadence(self) -> tuple[str, float]:
        """The first cadence of ``publish`` (see :meth:`cadences`)."""
        return parse_cadence(str(self.publish).split(",")[0].strip())

    def cadences(self) -> dict[str, float]:
        """{"outcomes": K, "period": SECONDS}, either or both (none: by hand only)."""
        return parse_cadences(self.publish)

    def feature_list(self) -> list[Feature]:
        """Each feature as declared (names ``x1``, ``x2``, ... where none are given)."""
        if self.features is None:
            return [Feature(f"x{i + 1}") for i in range(self.dimension)]
        return [Feature(f) if isinstance(f, str) else Feature(**f) for f in self.features]

    def names(self) -> list[str]:
        return [f.name for f in self.feature_list()]

    def feature_tables(self) -> list[dict[str, Any]] | None:
        """Each declared feature as a whole table (every key of :data:`FEATURE_KEYS`), as a
        database keeps them; None where none are declared."""
        if self.features is None:
            return None
        return [asdict(f) for f in self.feature_list()]

    def scaling(self) -> Scaling:
        return Scaling(self.feature_list())

    def _check_features(self) -> None:
        if not isinstance(self.features, list) or not self.features:
            raise ValueError(f"features must be a list of names or of tables (name, unit, "
                             f"definition, mean, scale), got {self.features!r}")
        if len(self.features) != self.dimension:
            raise ValueError(f"features names {len(self.features)} features, but dimension "
                             f"is {self.dimension}")
        for k, f in enumerate(self.features):
            where = f"features[{k}]"
            if isinstance(f, str):
                f = {"name": f}
            if not isinstance(f, dict):
                raise ValueError(f"{where} must be a name or a table, got {f!r}")
            unknown = sorted(set(f) - set(FEATURE_KEYS))
            if unknown:
                raise ValueError(f"{where}: unknown key {unknown[0]!r}; allowed: "
                                 f"{', '.join(FEATURE_KEYS)}")
            for key in ("name", "unit", "definition"):
                value = f.get(key, "" if key != "name" else None)
                if not isinstance(value, str) or (key == "name" and not value) \
                        or len(value) > 500:
                    raise ValueError(f"{where}.{key} must be text (a name: not empty), at "
                                     f"most 500 characters, got {value!r:.60}")
            for key, low in (("mean", None), ("scale", 0.0)):
                value = f.get(key, 0.0 if key == "mean" else 1.0)
                if isinstance(value, bool) or not isinstance(value, int | float) \
                        or not math.isfinite(value) or abs(value) > 1e100 \
                        or (low is not None and value <= low):
                    allowed = "a finite number > 0" if low is not None else "a finite number"
                    raise ValueError(f"{where}.{key} ({f['name']!r}) must be {allowed}, at "
                                     f"most 1e100 in magnitude, got {value!r}")
        names = self.names()
        if len(set(names)) != len(names):
            twice = next(n for n in names if names.count(n) > 1)
            raise ValueError(f"features names {twice!r} twice")
        taken = [n for n in names if n in RESERVED_NAMES]
        if taken:
            raise ValueError(f"features names {taken[0]!r}, a column of the service's own in "
                             f"its exports and warm-start logs; call it otherwise (reserved: "
                             f"{', '.join(RESERVED_NAMES)})")

    def check(self) -> ServiceConfig:
        """``self`` if every setting is allowed and the learner can be built; else a
        ``ValueError`` in one line naming the setting."""
        from .store import check_url

        if isinstance(self.dimension, bool) or not isinstance(self.dimension, int) \
                or not 1 <= self.dimension <= 10_000:
            raise ValueError(f"dimension must be an integer from 1 to 10,000, got "
                             f"{self.dimension!r}")
        if self.features is not None:
            self._check_features()
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")
        if not isinstance(self.params, dict):
            raise ValueError(f"params must be a table of the learner's parameters, got "
                             f"{self.params!r}")
        for name, low in (("max_batch", 1), ("max_body", 1024), ("snapshot_every", 1),
                          ("max_groups", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        value = self.body_timeout
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not 0 < value <= 3600:
            raise ValueError(f"body_timeout must be a number of seconds from 0 (excluded) to "
                             f"3600, got {value!r}")
        value = self.snapshot_minutes
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not 0 < value <= 1e9:
            raise ValueError(f"snapshot_minutes must be a number of minutes from 0 (excluded) "
                             f"to 1e9, got {value!r}")
        self.cadences()
        for name in ("min_interval", "retain_days"):
            value = getattr(self, name)
            if value is None and name == "retain_days":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not 0 <= value <= 1e9 or (name == "retain_days" and value == 0):
                low = "0 (excluded)" if name == "retain_days" else "0"
                raise ValueError(f"{name} must be a number from {low} to 1e9, got {value!r}")
        if self.contact is not None and (not isinstance(self.contact, str)
                                         or not 0 < len(self.contact) <= 500):
            raise ValueError(f"contact must be text of 1 to 500 characters (how a rejected "
                             f"applicant reaches the lender), got {self.contact!r:.60}")
        value = self.rate_limit
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not 0 <= value <= 1e6:
            raise ValueError(f"rate_limit must be requests a second per key from 0 (no limit) "
                             f"to 1e6, got {value!r}")
        value = self.explore
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not 0 <= value <= MAX_EXPLORE:
            raise ValueError(f"explore must be a share from 0 to {MAX_EXPLORE:g} (of the "
                             f"applicants the rule rejects, accepted at random), got {value!r}")
        value = self.warm_cap
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 0):
            raise ValueError(f"warm_cap must be an integer >= 0, got {value!r}")
        starts = [k for k in ("start_rule", "start_learner", "start_log")
                  if getattr(self, k) is not None]
        if len(starts) > 1:
            raise ValueError(f"give one warm start, not {' and '.join(starts)}")
        check_url(self.database)
        self.check_learner(self.learner, self.make_learner(), "learner")
        if self.explore and self.bandit():
            raise ValueError("explore is for apple tasting: a learner under bandit feedback "
                             "observes every applicant's outcome, so give explore = 0")
        if self.shadow is not None:
            if not isinstance(self.shadow, str) or not isinstance(self.shadow_params, dict):
                raise ValueError(f"shadow must name a learner and shadow_params be a table of "
                                 f"its parameters, got {self.shadow!r}")
            self.check_learner(self.shadow, self.make_shadow(), "shadow")
        elif self.shadow_params:
            raise ValueError("shadow_params given without a shadow learner")
        return self

    def check_learner(self, name: str, learner: Any, what: str) -> None:
        """A ``ValueError`` in one line unless ``learner`` (named ``name``; ``what``:
        ``learner`` or ``shadow``) can serve: it publishes a linear rule and can be saved."""
        from ..game.policies import LinearThreshold

        word = "learner" if what == "learner" else "shadow learner"
        try:
            rule = learner.desk.publish().rule
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{word} {name!r} cannot publish a rule: {exc}") from None
        try:
            from ..persistence import dumps

            dumps(learner)
        except ValueError as exc:
            raise ValueError(f"{word} {name!r} cannot run in the service: its state "
                             f"cannot be saved ({exc})") from None
        if not isinstance(rule, LinearThreshold):
            raise ValueError(f"{word} {name!r} publishes a general (non-linear) rule: "
                             "the service publishes linear rules (β, threshold) that any "
                             "worker can apply; choose a learner with linear rules")

    def make_learner(self, history: int | None = None) -> Any:
        """The learner, reset on the service's own stream (the engine's learner stream of
        ``seed``, so a game played over the wire draws as the engine does). ``history``: the
        rows of a history it will replay (a logistic learner then keeps them all for an exact
        refit: :func:`~..learners.history.keeping_history`)."""
        return self._make(self.learner, self.params, "learner", "params", history)

    def bandit(self) -> bool:
        """Whether the service's learner learns under bandit feedback (every applicant's
        outcome observed), as the learner it makes says (a learner's own default counts)."""
        return self.make_learner().get_params().get("feedback") == "bandit"

    def make_shadow(self, history: int | None = None) -> Any:
        """The shadow learner (None without one), reset on the next stream of the seed."""
        if self.shadow is None:
            return None
        return self._make(self.shadow, self.shadow_params, "shadow", "shadow_params", history)

    def _make(self, name: str, given: dict[str, Any], what: str, where: str,
              history: int | None = None) -> Any:
        from ..game.game import STREAMS
        from ..learners import make_learner

        word = "learner" if what == "learner" else "shadow learner"
        try:
            learner = make_learner(name, **given)
        except TypeError as exc:
            raise ValueError(f"{where} of {word} {name!r}: {exc}") from None
        params = learner.get_params()
        unset = [k for k in UNBOUND if k in params and params[k] is None]
        if unset:
            raise ValueError(f"{where}.{unset[0]} of {word} {name!r} must be given: "
                             "a service has no game to take it from")
        if "feedback" in params and params["feedback"] is None:
            learner = learner.clone(feedback="apple")
        if history is not None:
            from ..learners.history import keeping_history

            learner = keeping_history(learner, history)
        streams = np.random.SeedSequence(self.seed).spawn(len(STREAMS) + 1)
        sequence = streams[STREAMS.index("learner") if what == "learner" else len(STREAMS)]
        try:
            return learner.reset(self.dimension, np.random.Generator(np.random.PCG64(sequence)))
        except ValueError as exc:
            if what == "learner":
                raise
            # The shadow's parameters, named as the shadow's (not mistaken for the learner's).
            raise ValueError(f"{where} of {word} {name!r}: {exc}") from None

    def fixed(self) -> dict[str, Any]:
        """The settings the database remembers (the scaling and the shadow only when there
        are any, so a database made before them compares equal)."""
        from ..learners.encoding import jsonable

        doc = asdict(self)
        out = {k: jsonable(doc[k]) for k in FIXED}
        scaling = self.scaling()
        if not scaling.identity:
            out["scaling"] = {"means": scaling.means.tolist(),
                              "scales": scaling.scales.tolist()}
        if self.shadow is not None:
            out["shadow"] = {"learner": self.shadow, "params": jsonable(self.shadow_params)}
        return out
