"""Claims that hold exactly, on every seed (the rest are measured by `sat reproduce`'s
claims table, tested in tests/test_reproduce.py)."""

from __future__ import annotations

import pyarrow.compute as pc
import pytest

from strategic_apple_tasting import BoundedRatioMixture, Game, UniformSphere, simulate


@pytest.mark.parametrize("kwargs", [
    {},
    {"feedback": "bandit"},
    {"r0": 0.25, "delta": 0.4},
    {"contexts": UniformSphere()},
    {"contexts": BoundedRatioMixture(c0=0.2, center=0.3, scale=0.1), "dimension": 2},
])
def test_oracle_regret_is_exactly_zero(kwargs):
    """With the true θ and the δ-shift, agents with ⟨θ, x⟩ ≥ r0 are accepted (movers reach
    the boundary) and no other can reach it: zero strategic regret, exactly."""
    game = Game(**{"dimension": 4, "delta": 0.2, **kwargs})
    table = simulate(game, ["oracle"], 50_000, seeds=3)
    assert not any(table.column("regret").to_pylist())


def test_oracle_shift_costs_regret_when_some_agents_are_truthful():
    """The shift assumes everyone games: a truthful agent in the band [r0, r0 + δ‖θ‖) is
    rejected. The oracle's regret is then positive (it is the oracle of the lazy model)."""
    table = simulate(Game(dimension=4, delta=0.2, truthful=0.3), ["oracle"], 20_000, seeds=2)
    assert min(_final_at(table, 20_000)) > 0


def _final_at(table, horizon):
    return table.filter(pc.equal(table.column("t"), horizon)).column("regret").to_pylist()
