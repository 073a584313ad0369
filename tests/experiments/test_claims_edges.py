"""Every strict check of the claims table fails at its boundary value, and every check with a
stated width reads "not discriminating" on an interval exactly that wide: the words "more
than", "less than", "does not vanish" are open, and a covers check must not reward width."""

import math

import pytest

from strategic_apple_tasting.experiments.claims import (
    budget,
    delays,
    horizons,
    lending,
    stochastic,
)
from strategic_apple_tasting.metrics import Estimate

#: (name, check, its edge): each is strict, so the edge itself fails, on a value without an
#: interval and on an interval of width 0 at the edge.
STRICT = [
    ("OLS on every accepted point is inconsistent: > −0.1", stochastic.PLATEAU, -0.1),
    ("the lending gain: > 0", lending.GAIN, 0.0),
    ("the FICO burden: > 0", budget.LARGER, 0.0),
    ("a delay's staleness: < 0.1 of the term", delays.below("D", 0.19), delays.SHARE),
    ("a period's staleness: < 0.1 of the term", delays.below("P", 0.19), delays.SHARE),
]


@pytest.mark.parametrize(("name", "check", "edge"), STRICT, ids=[s[0] for s in STRICT])
def test_a_strict_check_fails_its_edge(name, check, edge):
    assert check.strict, name
    assert check.judge(Estimate(edge, seeds=8)) == "fail"
    assert check.judge(Estimate(edge, edge, edge, seeds=8)) == "fail"
    # Just inside the edge passes: the check is not simply unpassable.
    inside = edge + 1e-9 if math.isfinite(check.low) else edge - 1e-9
    assert check.judge(Estimate(inside, inside, inside, seeds=8)) == "pass"


#: (name, check, its width, a target inside it): an interval exactly the width is too wide.
WIDE = [
    ("SA-OLS's error rate covers −½", stochastic.ERROR_RATE, 0.5, -0.5),
    ("clean points cover the prediction", stochastic.count_check(14_000.0), 280.0, 0.0),
    ("the lock-in rate covers the prediction", stochastic.lock_check(0.016, 0.001), 0.016, 0.0),
    ("no seed locked", stochastic.unlocked_check(0.016), 0.016, 0.0),
    ("ETC's commit-phase slope ≤ ⅔", horizons.COMMIT_RATE, 2 / 3, 0.1),
]


@pytest.mark.parametrize(("name", "check", "width", "at"), WIDE, ids=[w[0] for w in WIDE])
def test_an_interval_as_wide_as_the_stated_width_is_too_wide(name, check, width, at):
    assert math.isclose(check.width, width), name
    edge = Estimate(at, at - width / 2, at + width / 2, seeds=8)
    assert check.judge(edge) == "pass" and check.too_wide(edge)
    narrower = Estimate(at, at - width * 0.49, at + width * 0.49, seeds=8)
    assert check.judge(narrower) == "pass" and not check.too_wide(narrower)


def test_etcs_near_zero_commit_slope_is_not_a_rate():
    """The quick run's commit-phase slope, [−0.275, 0.548], holds a constant's 0 and T^⅔'s ⅔:
    the check passes it, on an interval too wide to tell them apart."""
    noise = Estimate(0.15, -0.275, 0.548, seeds=32)
    assert horizons.COMMIT_RATE.judge(noise) == "pass"
    assert horizons.COMMIT_RATE.too_wide(noise)
