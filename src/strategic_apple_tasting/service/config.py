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

The learner, its parameters, the dimension and the seed are written into the database when it
is created; a later start against it must give the same (the log means nothing to another
learner). The cadence, the limits and the address may change between starts.
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
#: The settings a database remembers from its creation.
FIXED = ("learner", "params", "dimension", "seed")
#: Parameters a simulation takes from the game (``Learner.bind``): a service must be given them.
UNBOUND = ("delta", "r0", "sigma", "horizon")


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
    if kind == "period" and 0 < value < math.inf:
        return kind, value
    raise ValueError(f"publish must be one of {', '.join(CADENCES)} (K an integer >= 1, "
                     f"SECONDS > 0), got {text!r}")


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

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> ServiceConfig:
        """Read a TOML file; ``overrides`` (given flags) win over it."""
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
        doc.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**doc)

    def cadence(self) -> tuple[str, float]:
        return parse_cadence(self.publish)

    def check(self) -> ServiceConfig:
        """``self`` if every setting is allowed and the learner can be built; else a
        ``ValueError`` in one line naming the setting."""
        from .store import check_url

        if isinstance(self.dimension, bool) or not isinstance(self.dimension, int) \
                or not 1 <= self.dimension <= 10_000:
            raise ValueError(f"dimension must be an integer from 1 to 10,000, got "
                             f"{self.dimension!r}")
        if self.features is not None:
            if not isinstance(self.features, list) or not all(
                    isinstance(f, str) and f for f in self.features):
                raise ValueError(f"features must be a list of names, got {self.features!r}")
            if len(self.features) != self.dimension:
                raise ValueError(f"features names {len(self.features)} features, but dimension "
                                 f"is {self.dimension}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")
        if not isinstance(self.params, dict):
            raise ValueError(f"params must be a table of the learner's parameters, got "
                             f"{self.params!r}")
        for name, low in (("max_batch", 1), ("max_body", 1024), ("snapshot_every", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        value = self.body_timeout
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not 0 < value <= 3600:
            raise ValueError(f"body_timeout must be a number of seconds from 0 (excluded) to "
                             f"3600, got {value!r}")
        self.cadence()
        check_url(self.database)
        from ..game.policies import LinearThreshold

        learner = self.make_learner()
        try:
            rule = learner.publish().rule
        except (TypeError, ValueError) as exc:
            raise ValueError(f"learner {self.learner!r} cannot publish a rule: {exc}") from None
        try:
            from ..learners.persistence import dumps

            dumps(learner)
        except ValueError as exc:
            raise ValueError(f"learner {self.learner!r} cannot run in the service: its state "
                             f"cannot be saved ({exc})") from None
        if not isinstance(rule, LinearThreshold):
            raise ValueError(f"learner {self.learner!r} publishes a general (non-linear) rule: "
                             "the service publishes linear rules (β, threshold) that any "
                             "worker can apply; choose a learner with linear rules")
        return self

    def make_learner(self) -> Any:
        """The learner, reset on the service's own stream (the engine's learner stream of
        ``seed``, so a game played over the wire draws as the engine does)."""
        from ..game.game import STREAMS
        from ..learners import make_learner

        try:
            learner = make_learner(self.learner, **self.params)
        except TypeError as exc:
            raise ValueError(f"params of learner {self.learner!r}: {exc}") from None
        params = learner.get_params()
        unset = [k for k in UNBOUND if k in params and params[k] is None]
        if unset:
            raise ValueError(f"params.{unset[0]} of learner {self.learner!r} must be given: "
                             "a service has no game to take it from")
        if "feedback" in params and params["feedback"] is None:
            learner = learner.clone(feedback="apple")
        sequence = np.random.SeedSequence(self.seed).spawn(len(STREAMS))[
            STREAMS.index("learner")]
        return learner.reset(self.dimension, np.random.Generator(np.random.PCG64(sequence)))

    def fixed(self) -> dict[str, Any]:
        """The settings the database remembers."""
        from ..learners.persistence import jsonable

        doc = asdict(self)
        return {k: jsonable(doc[k]) for k in FIXED}
