"""Unknown-horizon specifics (the conformance suite covers the protocol)."""

import pytest

from strategic_apple_tasting.learners import UnknownHorizon


def test_unknown_horizon_needs_sigma_for_its_epochs():
    kw = {"delta": 0.1, "r0": 0.0, "feedback": "apple"}
    with pytest.raises(ValueError, match="unknown-horizon needs sigma to set each epoch's T0"):
        UnknownHorizon(switching_time=1000, **kw).reset(2)
    assert UnknownHorizon(switching_time=0, **kw).epochs(2) == []  # SA-OLS at once: no σ needed
