"""A history's warm start with reject inference: augmentation's weights, the copies they are
replayed as, and the replay itself."""

from __future__ import annotations

import numpy as np
import pytest

from strategic_apple_tasting.learners.history import (
    COPIES_PER_ROW,
    augmentation_weights,
    copies,
    replay_history,
)


def test_a_band_accepting_one_in_four_weighs_its_loans_four():
    # Three bands of four rows by score: the low one accepted 1 in 4, the middle 2 in 4, the
    # high one all four (as an incumbent accepting high scores does).
    scores = np.arange(12.0)
    accepted = np.array([1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1], dtype=bool)
    w = augmentation_weights(scores, accepted, bands=3)
    np.testing.assert_array_equal(w, [4, 1, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1])
    # A band's accepted loans weigh as many as its rows: they stand for its rejected ones.
    band = np.repeat(np.arange(3), 4)
    for b in range(3):
        assert w[(band == b) & accepted].sum() == 4
    # The order of the rows does not matter, only their scores.
    shuffle = np.random.default_rng(1).permutation(12)
    np.testing.assert_array_equal(augmentation_weights(scores[shuffle], accepted[shuffle], 3),
                                  w[shuffle])


def test_without_selection_every_weight_is_one():
    """The control: the same bands, every row accepted (the earlier era's all-granted loans
    alone), so there is no selection to undo and the check above could not pass."""
    rng = np.random.default_rng(0)
    scores = rng.normal(size=200)
    np.testing.assert_array_equal(augmentation_weights(scores, np.ones(200, dtype=bool)),
                                  np.ones(200))
    # Accepted at random, not by score: every band's share is about the overall one.
    accepted = rng.random(200) < 0.5
    w = augmentation_weights(scores, accepted, bands=1)
    np.testing.assert_allclose(w[accepted], 200 / accepted.sum())


def test_a_band_without_loans_is_merged_with_the_next_band_up():
    scores = np.arange(12.0)
    # The low band accepted nobody: it joins the middle one (2 of 8 accepted).
    low = np.array([0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0], dtype=bool)
    np.testing.assert_array_equal(augmentation_weights(scores, low, 3),
                                  [1, 1, 1, 1, 4, 1, 4, 1, 2, 2, 1, 1])
    # The top band accepted nobody: it has no band above, so it joins the one below.
    top = np.array([1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0], dtype=bool)
    np.testing.assert_array_equal(augmentation_weights(scores, top, 3),
                                  [2, 1, 2, 1, 4, 4, 1, 1, 1, 1, 1, 1])


def test_tied_scores_share_a_band():
    # Half the rows tie at one score: quantile edges cannot split them, so bands are empty,
    # and the tied rows all weigh alike.
    scores = np.r_[np.zeros(10), np.arange(1.0, 11.0)]
    accepted = np.r_[np.arange(10) < 5, np.ones(10, dtype=bool)]
    w = augmentation_weights(scores, accepted, bands=10)
    assert len(set(w[:5])) == 1 and w[0] == 2.0 and np.all(w[10:] == 1.0)


def test_the_copies_are_the_weights_in_expectation():
    """floor(w), and one more with probability frac(w): with a fixed seed, the total over
    10,000 rows of weight 2.3 lies within 4 standard deviations of 23,000 (a sum of 10,000
    coins of p = 0.3: sd sqrt(10,000 · 0.21) ≈ 46, so 4 sd is about 183)."""
    counts = copies(np.full(10_000, 2.3), np.random.default_rng(7))
    assert set(np.unique(counts)) == {2, 3}
    assert abs(counts.sum() - 23_000) < 4 * np.sqrt(10_000 * 0.3 * 0.7)
    # Whole weights are exact: no draw changes them.
    np.testing.assert_array_equal(copies([0.0, 1.0, 4.0], np.random.default_rng(7)), [0, 1, 4])


def test_the_copies_stay_within_the_cap():
    weights = np.r_[np.full(90, 1.0), np.full(10, 50.0)]  # 590 expected, 100 rows
    rng = np.random.default_rng(3)
    for cap in (100, 150, 400):
        counts = copies(weights, rng, max_copies=cap)
        # Even the largest draw stays within the cap, and the heavy rows stay the heavy ones.
        assert counts.sum() <= cap and counts[90:].mean() > counts[:90].mean()
    assert copies(weights, rng).sum() == 590  # the default cap (10 a row) does not bind
    assert COPIES_PER_ROW * len(weights) >= 590


@pytest.mark.parametrize("call, message", [
    (lambda: augmentation_weights([0.0, np.nan], [True, False]),
     "scores must be finite numbers, got nan at row 2"),
    (lambda: augmentation_weights([[0.0, 1.0]], [True, False]),
     r"scores must be a 1-D array of finite numbers, got shape \(1, 2\)"),
    (lambda: augmentation_weights([0.0, 1.0], [True]),
     r"accepted must be 2 booleans \(one per score\)"),
    (lambda: augmentation_weights([0.0, 1.0], [1, 0]), "accepted must be 2 booleans"),
    (lambda: augmentation_weights([0.0, 1.0], [False, False]),
     "accepted must hold at least one accepted row"),
    (lambda: augmentation_weights([0.0, 1.0], [True, False], bands=0),
     "bands must be an integer >= 1, got 0"),
    (lambda: augmentation_weights([0.0, 1.0], [True, False], bands=2.5),
     "bands must be an integer >= 1, got 2.5"),
    (lambda: copies([1.0, -1.0], np.random.default_rng(0)),
     "weights must be finite numbers >= 0, got -1.0 at row 2"),
    (lambda: copies([1.0], 0), "rng must be a numpy.random.Generator, got int"),
    (lambda: copies([1.0, 2.0, 0.0], np.random.default_rng(0), max_copies=1),
     r"max_copies must be an integer >= 2 \(one copy of each row with a weight\), got 1"),
    (lambda: copies([1.0], np.random.default_rng(0), max_copies=True),
     "max_copies must be an integer >= 1"),
])
def test_bad_input_is_one_line(call, message):
    with pytest.raises(ValueError, match=message) as caught:
        call()
    assert "\n" not in str(caught.value)


def _learner():
    from strategic_apple_tasting import NaiveGreedyOLS

    return NaiveGreedyOLS(delta=0.1, r0=0.0, feedback="apple").reset(d=2, rng=0)


def test_a_weighted_replay_learns_a_row_as_its_copies():
    """Replaying a row twice is the same as listing it twice: the copies are a weight."""
    # Three loans for two coefficients, so the fit does not pass through every one of them
    # and a weight moves it.
    features = [[1.0, 0.5], [1.0, -0.5], [1.0, 0.1], [1.0, 0.2]]
    accepted, outcomes = [True, True, True, False], [0.4, -0.1, 0.3, None]
    weighted = replay_history(_learner(), features, accepted, outcomes,
                              weights=[2.0, 1.0, 1.0, 1.0], rng=np.random.default_rng(0))
    listed = replay_history(_learner(), [features[0], *features], [True, *accepted],
                            [0.4, *outcomes])
    np.testing.assert_allclose(weighted.estimate(), listed.estimate())
    plain = replay_history(_learner(), features, accepted, outcomes)
    assert not np.allclose(plain.estimate(), weighted.estimate())
    assert weighted.pending() == []
    with pytest.raises(ValueError, match=r"rng must be a numpy\.random\.Generator when weights"):
        replay_history(_learner(), features, accepted, outcomes, weights=[1.0] * 4)
    with pytest.raises(ValueError, match=r"weights must be 4 numbers \(one per row\)"):
        replay_history(_learner(), features, accepted, outcomes, weights=[1.0],
                       rng=np.random.default_rng(0))
