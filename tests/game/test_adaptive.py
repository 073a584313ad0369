"""The adaptive adversary (game/adaptive.py): it plays what the learner lately gets wrong."""

from __future__ import annotations

import re

import numpy as np
import pytest

from strategic_apple_tasting.game import Game
from strategic_apple_tasting.game.adaptive import AdaptiveTrap

TRAP = Game(dimension=1, delta=0.1, sigma=0.1, r0=0.2)


def _play(decide, rounds=2000, seed=0):
    """The rows it plays over ``rounds`` rounds to a learner deciding ``decide(row, best)``."""
    play = AdaptiveTrap().for_instance(TRAP.instance(seed), np.random.default_rng(seed))
    out = []
    for _ in range(rounds):
        i, x = play.next_context()
        assert np.array_equal(x, play.points[i])
        play.observe(i, decide(i, bool(play.best[i])))
        out.append(i)
    return play, np.array(out)


def test_the_warm_up_comes_first_then_the_trap_points():
    play, rows = _play(lambda i, best: best, rounds=50)
    assert rows[0] == 0 and set(rows[1:]) <= {1, 2}
    good, bad = 1, 2  # the trap's cycle: the good point, then the bad one
    assert play.gaps[good] > 0 > play.gaps[bad]


def test_it_plays_accept_all_the_bad_point_and_a_trapped_learner_the_good_one():
    # Both rates of wrong decisions start at 1, so it first plays the good point (|gap| 0.3
    # against 0.1) for about memory·ln 3 = 110 rounds: the shares are counted from round 500.
    # Accept-all errs on the bad point only: all but the uniform rounds go there, a share
    # 1 − explore/2 = 0.95 in expectation; over 1,500 rounds the binomial s.e. is 0.0056, and
    # 4 of them is the margin.
    _, rows = _play(lambda i, best: True)
    assert abs(np.mean(rows[500:] == 2) - 0.95) < 0.0225
    # Reject-all (a trapped learner) errs on the good point only: the mirror image.
    _, rows = _play(lambda i, best: False)
    assert abs(np.mean(rows[500:] == 1) - 0.95) < 0.0225
    # The control: a learner right on every point lets each rate decay only when its point is
    # played, and the adversary keeps 0.3·w_good near 0.1·w_bad: about half and half (0.50
    # measured), far from accept-all's mix.
    _, rows = _play(lambda i, best: best)
    assert 0.3 < np.mean(rows[500:] == 2) < 0.7


def test_it_is_deterministic_given_its_generator_and_the_decisions():
    def flip(i, best):
        return i % 2 == 0

    _, a = _play(flip, seed=3)
    _, b = _play(flip, seed=3)
    _, c = _play(flip, seed=4)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize(("field", "value", "allowed"), [
    ("memory", 0.5, "a finite number >= 1"),
    ("explore", 1.5, "a finite number >= 0 and <= 1"),
    ("margin", 0.0, "in (0, 1]"),
])
def test_bad_settings_are_refused_in_one_line(field, value, allowed):
    with pytest.raises(ValueError, match="^" + re.escape(f"{field} must be {allowed}")):
        AdaptiveTrap(**{field: value}).check()


def test_it_refuses_the_games_the_trap_refuses():
    game = Game(dimension=1, delta=0.1, r0=0.0)
    with pytest.raises(ValueError, match="greedy-trap at dimension 1 needs apple feedback and "
                                         "r0 > 0"):
        AdaptiveTrap().for_instance(game.instance(0), np.random.default_rng(0))
