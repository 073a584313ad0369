"""The strategic game played against a running service, over HTTP (``sat serve play``).

Round by round, as the engine's decision-API loop
(:func:`~strategic_apple_tasting.engine.reference.play_published`) plays it in process: every
``period`` rounds the rule is published (``POST /publish``) and the agents read it
(``GET /policy``); each agent best-responds to the published rule and is decided by id
(``POST /decisions``); each observed outcome is reported ``delay`` rounds later
(``POST /outcomes``). The contexts, agents, noise and delays come from the game's seeded
streams, and the service's learner from the same seed's learner stream, so on the same seed
and settings the decisions and the regret are the engine's, bit for bit: the end-to-end check
of the whole service (:func:`compare_with_engine`).

The service must be fresh (no decisions yet), decide with the game's learner and parameters,
and publish by hand (``--publish manual``): its first rule, published when it started, is the
engine's first.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..game.game import Game
from ..game.policies import LinearThreshold, score


@dataclass
class WireRun:
    """What a game over the wire gave: per round, the decision and the rule's version; the
    totals as the engine sums them; each published rule's β and threshold."""

    accepted: list[bool] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    regret: float = 0.0
    realized: float = 0.0
    moved: int = 0
    rules: list[tuple[list[float], float]] = field(default_factory=list)
    requests: int = 0


class _Client:
    def __init__(self, url: str, key: str, timeout: float) -> None:
        import httpx

        self.http = httpx.Client(base_url=url.rstrip("/"), timeout=timeout,
                                 headers={"Authorization": f"Bearer {key}"})
        self.requests = 0

    def call(self, method: str, path: str, body: Any = None) -> Any:
        self.requests += 1
        response = self.http.request(method, path, json=body)
        if response.status_code >= 400:
            try:
                why = response.json().get("error", response.text)
            except ValueError:
                why = response.text
            raise ValueError(f"{method} {path}: the service answered {response.status_code}: "
                             f"{why}")
        return response.json()


def play_over_the_wire(url: str, key: str, game: Game, seed: int, horizon: int, *,
                       prefix: str = "round-", timeout: float = 30.0) -> WireRun:
    """Play ``horizon`` rounds of ``game`` (seed ``seed``) against the service at ``url``."""
    client = _Client(url, key, timeout)
    try:
        start = client.call("GET", "/metrics")
        if start["decisions"]:
            raise ValueError(f"the service at {url} has decided {start['decisions']} "
                             "applicants already: the game needs a fresh service")
        inst = game.instance(seed)
        bandit = game.feedback == "bandit"
        run = WireRun()
        arriving: defaultdict[int, list[tuple[str, float]]] = defaultdict(list)
        rule = None
        for t in range(1, horizon + 1):
            x = inst.next_context()
            if t == 1 or (t - 1) % game.period == 0:
                if t > 1:
                    client.call("POST", "/publish")
                doc = client.call("GET", "/policy")
                rule = LinearThreshold(np.asarray(doc["beta"], dtype=float),
                                       float(doc["threshold"]))
                run.rules.append((doc["beta"], doc["threshold"]))
            x_obs, moved = inst.next_response(rule, x)
            decision = client.call("POST", "/decisions",
                                   {"x": [float(v) for v in x_obs], "id": f"{prefix}{t}"})
            a = bool(decision["accepted"])
            run.accepted.append(a)
            run.versions.append(decision["version"])
            run.moved += bool(moved)
            r1, rew0 = inst.next_rewards(x)
            mean1 = score(inst.theta1, x)
            mean0 = score(inst.theta0, x) if bandit else game.r0
            best = mean1 >= mean0
            # The engine's order of sums (engine.reference.run_reference).
            run.regret += abs(mean1 - mean0) if a != best else 0.0
            run.realized += (r1 if best else rew0) - (r1 if a else rew0)
            late = inst.next_delay()
            if a or bandit:
                arriving[t + late].append((decision["id"], float(r1 if a else rew0)))
            due = arriving.pop(t, [])
            if due:
                client.call("POST", "/outcomes",
                            {"outcomes": [{"id": i, "outcome": v} for i, v in due]})
        run.requests = client.requests
        return run
    finally:
        client.http.close()


def play_in_process(game: Game, learner: Any, seed: int, horizon: int) -> WireRun:
    """The same game on the engine's decision-API loop, in process, summed the same way."""
    from ..engine.reference import play_published

    inst = game.instance(seed)
    bound = learner.bind(inst, horizon).reset(game.dimension, inst.rngs["learner"])
    run = WireRun()
    last = None
    for r in play_published(inst, bound, horizon):
        published = bound.rule_in_force()
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
