"""The engine: determinism, common random numbers, the results table, bad input."""

import numpy as np
import pyarrow.compute as pc
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.engine import RESULT_COLUMNS, recording_grid
from tests.helpers import tables_identical


def test_same_seed_bit_identical_whatever_threads_or_batch():
    game = Game(dimension=4, delta=0.2)
    learners = ["sa-ols", "naive-greedy", "oracle"]
    one = simulate(game, learners, 5000, seeds=[0, 1, 2, 3], threads=1)
    two = simulate(game, learners, 5000, seeds=[0, 1, 2, 3], threads=2)
    assert tables_identical(one, two)
    alone = simulate(game, learners, 5000, seeds=[2], threads=1)
    in_batch = one.filter(pc.equal(one.column("seed"), 2))
    assert tables_identical(alone, in_batch)


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
def test_common_random_numbers_across_learners(feedback):
    """Accept-all and reject-all err on complementary rounds of the *same* agents: their
    regrets add up to Σ|gap| over one shared sequence of contexts."""
    game = Game(dimension=3, feedback=feedback, r0=0.2 if feedback == "apple" else 0.0)
    horizon = 3000
    table = simulate(game, ["accept-all", "reject-all"], horizon, seeds=[9]).to_pydict()
    inst = game.instance(9)
    gaps = [inst.gap(inst.next_context()) for _ in range(horizon)]
    grid = recording_grid(horizon)
    n = len(grid)
    total = np.cumsum(np.abs(gaps))[grid - 1]
    summed = np.array(table["regret"][:n]) + np.array(table["regret"][n:])
    assert np.allclose(summed, total, rtol=1e-12)


def test_results_table_columns():
    table = simulate(Game(dimension=2, delta=0.3), ["sa-ols"], 100, seeds=2)
    assert tuple(table.column_names[:len(RESULT_COLUMNS)]) == RESULT_COLUMNS
    for setting in ("dimension", "delta", "feedback", "r0", "sigma", "contexts", "truthful",
                    "radius", "horizon"):
        assert setting in table.column_names
    assert table.column("delta").to_pylist() == [0.3] * table.num_rows
    assert table.column("t").to_pylist()[-1] == 100


def test_duplicate_learners_are_labelled():
    from strategic_apple_tasting import SAOLS

    table = simulate(Game(dimension=2), [SAOLS(), SAOLS(delta=0.3)], 50, seeds=1)
    assert list(dict.fromkeys(table.column("learner").to_pylist())) == ["sa-ols#1", "sa-ols#2"]


def test_recording_grid_is_log_spaced_with_last():
    grid = recording_grid(10**6)
    assert grid[0] == 1 and grid[-1] == 10**6
    assert np.all(np.diff(grid) > 0)
    assert 100 <= len(grid) <= 125  # ≈ 20 a decade over 6 decades
    assert recording_grid(7).tolist()[-1] == 7


@pytest.mark.parametrize("kwargs, message", [
    ({"horizon": 0}, "horizon must be an integer from 1 to 10\\^12, got 0"),
    ({"seeds": 0}, "seeds must be >= 1"),
    ({"seeds": [1, 1]}, "seeds must be distinct"),
    ({"seeds": [-1]}, "each seed must be an integer from 0 to 2\\^63 - 1, got -1"),
    ({"learners": ["nope"]}, "learner must be one of"),
    ({"learners": []}, "learners must not be empty"),
    ({"threads": 0}, "threads must be an integer >= 1"),
])
def test_bad_input(kwargs, message):
    args = {"learners": ["sa-ols"], "horizon": 10, "seeds": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        simulate(Game(dimension=2), args.pop("learners"), args.pop("horizon"), **args)


def test_feedback_mismatch_is_refused():
    from strategic_apple_tasting import SAOLS

    with pytest.raises(ValueError, match="feedback='bandit' but the game has feedback='apple'"):
        simulate(Game(dimension=2), [SAOLS(feedback="bandit")], 10)


def test_clean_and_learned_mean_one_thing_each():
    """`clean` counts accepted points learned from (θ̂1's data; SA-OLS learns no moved point);
    `learned` every point learned from, which under bandit feedback includes the rejected
    points that fit θ̂0."""
    for feedback in ("apple", "bandit"):
        table = simulate(Game(dimension=3, feedback=feedback), ["sa-ols"], 3000, seeds=2)
        last = table.filter(pc.equal(table.column("t"), 3000)).to_pydict()
        clean, learned, accepted = (np.array(last[k]) for k in ("clean", "learned", "accepted"))
        assert np.all(clean <= accepted)
        if feedback == "apple":
            assert np.array_equal(clean, learned)
        else:  # nobody games to be rejected: every rejected point fits θ̂0
            assert np.array_equal(learned - clean, 3000 - accepted)


def test_clean_counts_no_gamed_point_for_any_learner():
    """`clean` counts learned, accepted points whose features are the agents' true ones (issue
    23): a learner that learns from gamed points (naive greedy, a peer's) gets no clean credit
    for them; those are `gamed_as_clean`, and under apple tasting the two make `learned`. The
    same on both engine paths."""
    game = Game(dimension=3, delta=0.5, truthful=0.5)
    for engine in ("compiled", "reference"):
        table = simulate(game, ["naive-greedy", "sa-ols"], 2000, seeds=2, engine=engine)
        last = table.filter(pc.equal(table.column("t"), 2000)).to_pydict()
        for k, name in enumerate(last["learner"]):
            clean, gamed, learned = last["clean"][k], last["gamed_as_clean"][k], \
                last["learned"][k]
            assert clean + gamed == learned, (engine, name)
            assert gamed > 0 if name == "naive-greedy" else gamed == 0, (engine, name)


def test_a_learners_phase_ends_are_recorded():
    """Explore-then-commit's T0 is a recorded round (the claims measure the commit phase from
    it), and only for that learner."""
    from strategic_apple_tasting import theory

    game = Game(dimension=2, sigma=0.01)
    table = simulate(game, ["etc", "sa-ols"], 30_000, seeds=1)
    t0 = theory.etc_exploration_rounds(2, 30_000, sigma=0.01)
    assert t0 not in recording_grid(30_000)
    rounds = {name: set(table.filter(pc.equal(table.column("learner"), name))
                        .column("t").to_pylist()) for name in ("etc", "sa-ols")}
    assert t0 in rounds["etc"] and t0 not in rounds["sa-ols"]
    at_t0 = table.filter(pc.and_(pc.equal(table.column("learner"), "etc"),
                                 pc.equal(table.column("t"), t0)))
    assert at_t0.column("accepted").to_pylist() == [t0]  # exploration accepts everyone


def test_only_a_learner_from_outside_the_package_calls_the_agents_response():
    """A compiled learner of a user's file gets a loop that calls the agents' compiled response
    to a linear rule (its first run compiles in half the time); the package's learners keep it
    inlined. The two give the same numbers: the public checks compare a user's compiled learner
    with its reference path (tests/learners/test_registry.py)."""
    from typing import NamedTuple

    from numba import typeof

    from strategic_apple_tasting.engine.kernel import _called
    from strategic_apple_tasting.learners import SAOLS

    class OutsideState(NamedTuple):  # defined in a test file: outside the package
        beta: np.ndarray

    assert _called(typeof(OutsideState(np.zeros(2))))
    assert not _called(typeof(SAOLS().bind(Game(dimension=2).instance(0), 10).reset(2).state))
