"""The data games' evaluation protocols: ``once`` plays each row at most once, ``holdout``
never lets a seed learn from its held-out rows and scores the rule in force on them as the
agents answer it (against a naive per-applicant oracle), on both of the engine's paths."""

from __future__ import annotations

import numpy as np
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.checks import tables_identical
from strategic_apple_tasting.engine.holdout import (
    HOLDOUT_COLUMNS,
    cross_fitted,
    held_out,
    score_rules,
)
from strategic_apple_tasting.game import SubsetGaming
from strategic_apple_tasting.game.data import holdout_split
from tests.helpers import recorded_rows


def _rows(n=80, d=4, seed=0, **protocol):
    return recorded_rows(n, d, seed, **protocol)


def _game(contexts, delta=0.5, truthful=0.0):
    mask = np.zeros(contexts.dimension, dtype=bool)
    mask[-2:] = True
    return Game(dimension=contexts.dimension, contexts=contexts, delta=delta,
                truthful=truthful, agents=SubsetGaming(gameable=mask))


def _drawn(game, seed, rounds):
    inst = game.instance(seed)
    rows = np.empty(rounds, dtype=np.int64)
    inst.next_rounds(rounds, rows)
    return rows


def test_the_split_is_stratified_disjoint_and_its_seeds_own():
    repaid = np.r_[np.ones(70), np.zeros(30)]
    learn, held = holdout_split(repaid, 0.3, np.random.default_rng(1))
    assert len(np.intersect1d(learn, held)) == 0
    assert sorted(np.r_[learn, held].tolist()) == list(range(100))
    assert (repaid[held] == 1).sum() == 21 and (repaid[held] == 0).sum() == 9
    again, _ = holdout_split(repaid, 0.3, np.random.default_rng(1))
    other, _ = holdout_split(repaid, 0.3, np.random.default_rng(2))
    assert np.array_equal(learn, again) and not np.array_equal(learn, other)


def test_a_seed_never_draws_its_held_out_rows_and_fits_theta_on_the_rest():
    game = _game(_rows(protocol="holdout", holdout_share=0.25))
    for seed in (0, 1):
        part = held_out(game, seed)
        drawn = _drawn(game, seed, 4000)
        assert len(part.held) == 20 and not np.isin(drawn, part.held).any()
        assert set(drawn.tolist()) == set(part.learn.tolist())  # every learning row comes up
        rows, mean = game.contexts.rows, part.mean
        theta, *_ = np.linalg.lstsq(rows[part.learn], mean[part.learn], rcond=None)
        assert np.allclose(game.instance(seed).theta1, theta, atol=1e-12)
        # Control: the game's own θ1 is fitted on every row, held-out ones included.
        assert not np.allclose(game.theta1, theta, atol=1e-6)
    assert not np.array_equal(held_out(game, 0).held, held_out(game, 1).held)


def test_once_plays_each_row_at_most_once_in_a_fresh_order_per_seed():
    game = _game(_rows(protocol="once"))
    a, b = _drawn(game, 0, 80), _drawn(game, 1, 80)
    assert sorted(a.tolist()) == list(range(80)) and not np.array_equal(a, b)
    replay = _drawn(_game(_rows()), 0, 80)
    assert len(set(replay.tolist())) < 80  # control: redrawn rows repeat
    with pytest.raises(ValueError, match="horizon must be at most the 80 rows under protocol"):
        simulate(game, ["accept-all"], 81, seeds=1)
    # A given order (a book's time order) is played as it is, on every seed.
    order = np.arange(79, 19, -1)
    timed = _game(_rows(protocol="once", order=order))
    assert np.array_equal(_drawn(timed, 0, 60), order)
    assert np.array_equal(_drawn(timed, 1, 60), order)
    with pytest.raises(ValueError, match="horizon must be at most the 60 rows under protocol"):
        simulate(timed, ["accept-all"], 61, seeds=1)


@pytest.mark.parametrize("bad, match", [
    ({"protocol": "kfold"}, "protocol must be one of replay, once, holdout"),
    ({"protocol": "holdout", "holdout_share": 1.0}, r"holdout_share must be a number in \(0, 1\)"),
    ({"protocol": "once", "weights": np.ones(80)}, "protocol 'once' needs rows that are"),
    ({"protocol": "holdout", "order": np.arange(5)},
     "order is played under protocols 'replay' and 'once' only"),
    ({"protocol": "once", "order": np.array([3, 1, 3])},
     "order must name each row at most once under protocol 'once'"),
])
def test_a_protocol_it_cannot_play_is_refused_in_one_line(bad, match):
    with pytest.raises(ValueError, match=match):
        _rows(**bad).check()


def _naive_score(game, part, beta, threshold):
    """Each held-out applicant answering the rule one at a time, as the per-round API does."""
    total = 0.0
    for i, w in zip(part.held, part.weights, strict=True):
        x_obs, _ = game.agents._replace(delta=game.delta).respond_once(
            np.asarray(beta), threshold, part.rows[i])
        total += w * (part.mean[i] if x_obs @ beta >= threshold else part.r0)
    return total


def test_held_out_scores_are_the_applicants_answers_one_by_one():
    game = _game(_rows(protocol="holdout"), delta=0.7)
    part = held_out(game, 3)
    rng = np.random.default_rng(5)
    rules = np.column_stack([rng.normal(size=(6, 4)), rng.normal(size=6)])
    rules = np.vstack([rules, cross_fitted(game, part)])
    got = score_rules(part, rules)
    want = [_naive_score(game, part, r[:-1], r[-1]) for r in rules]
    assert np.allclose(got, want, rtol=0, atol=1e-12)
    # Control: the same rules answered by applicants who do not game score otherwise.
    calm = held_out(_game(_rows(protocol="holdout"), delta=0.0), 3)
    assert not np.allclose(score_rules(calm, rules), want, atol=1e-6)


def test_the_oracle_on_held_out_rows_is_the_cross_fitted_least_squares_rule():
    """The oracle plays θ1 shifted; under holdout θ1 is fitted on the learning rows, so its
    held-out profit is the cross-fitted least-squares rule's, seed by seed. A θ1 fitted on
    every row (the held-out ones leaked into it) would not be."""
    game = _game(_rows(n=200, d=5, protocol="holdout"), delta=0.4)
    table = simulate(game, ["oracle", "accept-all", "reject-all"], 300, seeds=[0, 1, 2])
    frame = table.to_pandas()
    last = frame[frame.t == 300].set_index(["learner", "seed"])
    leaks = []
    for seed in (0, 1, 2):
        assert last.loc[("oracle", seed), "holdout_profit"] == pytest.approx(
            last.loc[("oracle", seed), "holdout_ls_profit"], abs=1e-12)
        assert last.loc[("reject-all", seed), "holdout_profit"] == 0.0
        part = held_out(game, seed)
        assert last.loc[("accept-all", seed), "holdout_profit"] == pytest.approx(
            float(part.weights @ part.mean[part.held]), abs=1e-12)
        leaked = np.r_[game.theta1, game.r0 + game.delta * np.linalg.norm(game.theta1[-2:])]
        leaks.append(score_rules(part, leaked[None])[0]
                     - last.loc[("oracle", seed), "holdout_profit"])
    # Control: the rule fitted on every row scores otherwise on held-out rows (on 60 of them
    # two rules may accept the same set on a seed, so on some seed, not on each).
    assert np.abs(leaks).max() > 1e-3
    assert set(HOLDOUT_COLUMNS) <= set(frame.columns)
    assert (frame["protocol"] == "holdout").all()


def test_held_out_scores_are_the_same_on_both_paths():
    game = _game(_rows(protocol="holdout"), delta=0.5, truthful=0.3)
    learners = ["sa-ols", "naive-greedy", "accept-all"]
    a = simulate(game, learners, 400, seeds=[1, 2], engine="compiled")
    b = simulate(game, learners, 400, seeds=[1, 2], engine="reference")
    assert tables_identical(a, b)
    assert np.isfinite(a.column("holdout_profit").to_numpy()).all()
