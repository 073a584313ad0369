"""Unknown-horizon specifics (the conformance suite covers the protocol)."""

import pytest

from strategic_apple_tasting.learners import UnknownHorizon


def test_unknown_horizon_needs_sigma_for_its_epochs():
    kw = {"delta": 0.1, "r0": 0.0, "feedback": "apple"}
    with pytest.raises(ValueError, match="unknown-horizon needs sigma to set each epoch's T0"):
        UnknownHorizon(switching_time=1000, **kw).reset(2)
    assert UnknownHorizon(switching_time=0, **kw).epochs(2) == []  # SA-OLS at once: no σ needed


def test_without_noise_it_explores_d_rounds_an_epoch_and_commits():
    """σ = 0: T0 is d (noise-free points fit θ exactly), so each epoch commits after d rounds;
    it once explored whole epochs, accepting everyone for ever (regret 3786 at T = 2·10⁴)."""
    from strategic_apple_tasting import Game, simulate

    kw = {"delta": 0.1, "r0": 0.0, "feedback": "apple", "sigma": 0.0}
    assert [t0 for _, t0 in UnknownHorizon(**kw).epochs(3)[:4]] == [2, 3, 3, 3]
    game = Game(dimension=3, delta=0.1, sigma=0.0)
    table = simulate(game, ["unknown-horizon", "accept-all"], 20_000, seeds=2).to_pydict()
    final = {n: r for n, t, r in zip(table["learner"], table["t"], table["regret"],
                                     strict=True) if t == 20_000}
    assert final["unknown-horizon"] < 0.01 * final["accept-all"], final


def test_it_runs_at_dimension_one():
    """Like SA-OLS and ETC; τ* uses E[x₁² | x₁ ≥ δ] where c2 has no second coordinate."""
    from strategic_apple_tasting import Game, simulate

    table = simulate(Game(dimension=1, delta=0.1, sigma=0.1), ["unknown-horizon"], 2000,
                     seeds=1)
    assert table.column("t").to_pylist()[-1] == 2000
    assert UnknownHorizon(delta=0.1, r0=0.0, feedback="apple", sigma=0.1).tau_star(1) > 1
