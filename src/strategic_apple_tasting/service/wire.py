"""The strategic game played against a running service, over HTTP (``sat serve play``).

The engine's own decision-API loop
(:func:`~strategic_apple_tasting.engine.reference.play_published`) plays it, with a
:class:`RemoteDesk` in the learner's place: every ``period`` rounds the rule is published
(``POST /publish``) and the agents read it (``GET /policy``); each agent best-responds to the
published rule and is decided by id (``POST /decisions``); each observed outcome is reported
``delay`` rounds later (``POST /outcomes``). The contexts, agents, noise and delays come from
the game's seeded streams, and the service's learner from the same seed's learner stream, so
on the same seed and settings the decisions and the regret are the engine's, bit for bit: the
end-to-end check of the whole service (:func:`compare_with_engine`).

The service must be fresh (no decisions yet), decide with the game's learner and parameters,
and publish by hand (``--publish manual``): its first rule, published when it started, is the
engine's first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..game.game import Game
from ..game.policies import LinearThreshold
from ..learners.decisions import Decision, PublishedRule


@dataclass
class WireRun:
    """What a game gave: per round, the decision and the rule's version; the totals as the
    engine sums them; each published rule's β and threshold."""

    accepted: list[bool] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    regret: float = 0.0
    realized: float = 0.0
    moved: int = 0
    rules: list[tuple[list[float], float]] = field(default_factory=list)
    requests: int = 0


class RemoteDesk:
    """A running service in a learner's place in the engine's decision-API loop: ``publish``,
    ``rule_in_force``, ``decide`` and ``report`` over HTTP. Whether the service used an
    outcome is not said over the wire (it learns in its own time): ``report`` gives False, and
    a decision's ``used`` is None."""

    prefix = "round-"  # decision ids: round-1, round-2, ...

    def __init__(self, url: str, key: str, timeout: float = 30.0) -> None:
        import httpx

        self.url = url
        self.http = httpx.Client(base_url=url.rstrip("/"), timeout=timeout,
                                 headers={"Authorization": f"Bearer {key}"})
        self.requests = 0
        self._rule: PublishedRule | None = None

    def call(self, method: str, path: str, body: Any = None) -> Any:
        import httpx

        self.requests += 1
        try:
            response = self.http.request(method, path, json=body)
        except httpx.TransportError as exc:
            raise ValueError(f"{method} {path}: cannot reach the service at {self.url} "
                             f"({type(exc).__name__}: {exc})") from None
        if response.status_code >= 400:
            try:
                why = response.json().get("error", response.text)
            except ValueError:
                why = response.text
            raise ValueError(f"{method} {path}: the service answered {response.status_code}: "
                             f"{why}")
        return response.json()

    def publish(self) -> PublishedRule:
        """The service's first rule was published when it started (the engine's first);
        later ones on request. The agents then read the rule: ``GET /policy``."""
        if self._rule is not None:
            # A new version every period, as the engine publishes (even with no outcome
            # learned since the last, when the service would keep the rule in force).
            self.call("POST", "/publish?force=true")
        doc = self.call("GET", "/policy")
        self._rule = PublishedRule(doc["version"], LinearThreshold(
            np.asarray(doc["beta"], dtype=float), float(doc["threshold"])),
            doc["effective_unix"], doc["learner"], doc["params"])
        return self._rule

    def rule_in_force(self) -> PublishedRule | None:
        return self._rule  # by hand only (--publish manual): it changes when we publish

    def decide(self, x_obs: np.ndarray, id: int) -> Decision:
        doc = self.call("POST", "/decisions", {"x": [float(v) for v in x_obs],
                                               "id": f"{self.prefix}{id}"})
        return Decision(id, bool(doc["accepted"]), doc["version"], 0.0, None)

    def report(self, id: int, outcome: float) -> bool:
        self.call("POST", "/outcomes", {"id": f"{self.prefix}{id}", "outcome": float(outcome)})
        return False

    def close(self) -> None:
        self.http.close()


def _play(game: Game, seed: int, horizon: int, desk: Any, learner: Any) -> WireRun:
    """The engine's decision-API loop with ``desk`` deciding, summed as the engine sums."""
    from ..engine.reference import play_published

    inst = game.instance(seed)
    if learner is not None:  # in process: the learner bound and reset as the engine does
        desk = learner.bind(inst, horizon).reset(game.dimension, inst.rngs["learner"]).desk
    run = WireRun()
    last = None
    for r in play_published(inst, desk, horizon):
        published = desk.rule_in_force()
        if published.version != last:
            last = published.version
            run.rules.append(([float(b) for b in published.rule.beta],
                              float(published.rule.threshold)))
        run.accepted.append(r.accepted)
        run.versions.append(published.version)
        run.moved += r.moved
        run.regret += r.regret
        run.realized += r.realized
    return run


def play_over_the_wire(url: str, key: str, game: Game, seed: int, horizon: int, *,
                       timeout: float = 30.0) -> WireRun:
    """Play ``horizon`` rounds of ``game`` (seed ``seed``) against the service at ``url``."""
    desk = RemoteDesk(url, key, timeout)
    try:
        start = desk.call("GET", "/metrics")
        if start["decisions"]:
            raise ValueError(f"the service at {url} has decided {start['decisions']} "
                             "applicants already: the game needs a fresh service")
        run = _play(game, seed, horizon, desk, None)
        run.requests = desk.requests
        return run
    finally:
        desk.close()


def play_in_process(game: Game, learner: Any, seed: int, horizon: int) -> WireRun:
    """The same game with ``learner`` in process."""
    return _play(game, seed, horizon, None, learner)


def compare_with_engine(wire: WireRun, engine: WireRun) -> list[str]:
    """Where a game over the wire and the engine's differ (empty if nowhere)."""
    out = []
    if wire.accepted != engine.accepted:
        first = next((t for t, (a, b) in enumerate(zip(wire.accepted, engine.accepted,
                                                       strict=False), start=1) if a != b),
                     min(len(wire.accepted), len(engine.accepted)) + 1)
        out.append(f"decisions differ from round {first} on")
    if wire.rules != engine.rules:
        out.append("published rules differ")
    for name in ("regret", "realized", "moved"):
        if getattr(wire, name) != getattr(engine, name):
            out.append(f"{name}: {getattr(wire, name)!r} over the wire, "
                       f"{getattr(engine, name)!r} in process")
    return out
