"""The memory estimate that lets the engine refuse a run before allocating anything."""

from __future__ import annotations

import pytest

from strategic_apple_tasting import Game
from strategic_apple_tasting.engine import memory_needed, simulate
from strategic_apple_tasting.learners import LEARNERS, make_learner
from strategic_apple_tasting.learners.base import _nbytes


@pytest.mark.parametrize("name", sorted(LEARNERS))
@pytest.mark.parametrize("d", [5, 40])
def test_state_bytes_bounds_the_real_state_closely(name, d):
    """An upper bound (so a run that fits is never refused for its learner's state being
    underestimated) within 1.5× (+1 KiB for the fixed part) of the state reset builds."""
    learner = make_learner(name).bind(Game(dimension=d).instance(0), 10**5)
    real = _nbytes(learner.reset(d, rng=0).state)
    estimate = learner.state_bytes(d)
    assert real <= estimate <= 1.5 * real + 1024, (real, estimate)


def test_a_run_too_large_is_refused_before_anything_is_allocated():
    game = Game(dimension=100_000)
    need = memory_needed(game, [make_learner("sa-ols")], 10, 1, 1)
    assert need > 4 * 8 * 100_000**2 * 0.9  # d × d matrices of doubles, about 300 GiB
    with pytest.raises(ValueError, match=r"this run needs about [\d,.]+ GiB of memory"):
        simulate(game, "sa-ols", 10)
    # The control: the same check lets a small run through.
    assert simulate(Game(dimension=2), "oracle", 10, max_memory=10**7).num_rows > 0
