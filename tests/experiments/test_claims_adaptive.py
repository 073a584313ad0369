"""The adaptive-adversary part (experiments/claims/adaptive.py): its compiled loop is the
per-round API's game, its regret is against the best grid expert in hindsight, and its rows
move when the learner is swapped."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from strategic_apple_tasting.experiments.claims import NOT_DISCRIMINATING, adaptive
from strategic_apple_tasting.game import Game
from strategic_apple_tasting.learners import make_learner


def _per_round(name: str, seed: int, horizon: int) -> tuple[float, float]:
    """The oracle: the same game through the learner's per-round API and the adversary's
    Python side. Regret against π* and the learner's total gain."""
    game = Game(**adaptive.GAME)
    inst = game.instance(seed)
    learner = make_learner(name).bind(inst, horizon).reset(game.dimension, inst.rngs["learner"])
    play = adaptive.ADVERSARY.for_instance(inst, inst.rngs["contexts"])
    regret = gain = 0.0
    for _ in range(horizon):
        i, x = play.next_context()
        rule = learner.policy()
        x_obs, _ = inst.next_response(rule, x)
        a = learner.act(x_obs)
        r1, _r0 = inst.next_rewards(x)
        learner.update(x_obs, a, r1 if a else None)
        play.observe(i, a)
        g = float(play.gaps[i])
        gain += g if a else 0.0
        regret += abs(g) if a != play.best[i] else 0.0
    return regret, gain


@pytest.mark.parametrize("name", ["exp3p-sae", "sa-ols"])
def test_the_compiled_loop_plays_the_per_round_apis_game(name):
    regret, _ = _per_round(name, seed=1, horizon=400)
    got = adaptive.play_adaptive(Game(**adaptive.GAME), make_learner(name), 1, 400)
    assert got["regret"] == regret  # the same kernels, streams and sums: bit for bit
    # On the trap a grid expert is right on every point: against it, regret is π*'s.
    assert got["hindsight_regret"] == pytest.approx(regret, abs=1e-9)


def test_regret_in_hindsight_is_against_the_best_expert_on_the_realized_points():
    # The grid at d = 1 holds 0 (rejects all at r0 > 0), so the best expert's gain is ≥ 0 and
    # hindsight regret ≥ −(the learner's gain); never above regret against π*.
    for name in ("accept-all", "sa-ols"):
        got = adaptive.play_adaptive(Game(**adaptive.GAME), make_learner(name), 0, 2000)
        assert got["hindsight_regret"] <= got["regret"] + 1e-9
    grid = adaptive.expert_grid(2, 3)
    assert grid.shape == (9, 2) and {tuple(p) for p in grid} >= {(-1.0, 1.0), (0.0, 0.0)}


def test_play_adaptive_refuses_what_it_cannot_play():
    with pytest.raises(ValueError, match=r"^play_adaptive plays apple tasting with linear "
                                         r"rewards, got feedback='bandit'"):
        adaptive.play_adaptive(Game(dimension=2, feedback="bandit"), make_learner("exp3-sae"),
                               0, 10)
    with pytest.raises(ValueError, match=r"^learner must be a compiled learner of linear rules "
                                         r"with a known budget, got 'linucb'"):
        adaptive.play_adaptive(Game(**adaptive.GAME), make_learner("linucb"), 0, 10)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The part at two short horizons and two seeds (about 90,000 agent-rounds)."""
    part = adaptive.AdaptivePart("adaptive-small", horizons={"quick": (1_000, 10_000)},
                                 seeds={"quick": 2}, per_round={"quick": 3e-6})
    out = tmp_path_factory.mktemp("adaptive")
    part.run(out, "quick", say=lambda _: None)
    part.run(out, "quick", say=lambda _: None)  # resumes: nothing left to run
    assert part.write_report(out, "small").exists()
    return part.load(out)


def test_threads_do_not_change_the_rows(small, tmp_path):
    """The runs of a horizon on two threads give the rows of the runs one at a time."""
    part = adaptive.AdaptivePart("adaptive-small", horizons={"quick": (1_000, 10_000)},
                                 seeds={"quick": 2}, per_round={"quick": 3e-6})
    part.run(tmp_path, "quick", say=lambda _: None, threads=2)
    assert part.load(tmp_path).equals(small)


def _swap(table: pa.Table, measured: str, stand_in: str) -> pa.Table:
    learner = table.column("learner")
    copy = table.filter(pc.equal(learner, stand_in))
    copy = copy.set_column(copy.schema.get_field_index("learner"), "learner",
                           pa.array([measured] * copy.num_rows))
    return pa.concat_tables([table.filter(pc.not_equal(learner, measured)), copy])


def _row(rows, start):
    (found,) = [r for r in rows if getattr(r, "claim", getattr(r, "what", "")).startswith(start)]
    return found


def test_the_adversary_that_does_not_adapt_fails_the_consistency_check(small):
    """accept-all's share of the bad point replaced by EXP3.P-SAE's (an adversary playing
    every learner the same mix): the consistency row no longer holds."""
    start = "the adaptive adversary adapts"
    assert _row(adaptive.adaptive(small), start).holds
    same = _swap(small, "accept-all", "exp3p-sae")
    assert not _row(adaptive.adaptive(same), start).holds


def _sqrt_t(table: pa.Table, learner: str) -> pa.Table:
    """``learner``'s regret in hindsight replaced by √T on every seed."""
    mask = pc.equal(table.column("learner"), learner).to_numpy(zero_copy_only=False)
    horizon = table.column("horizon").to_numpy().astype(float)
    fake = np.where(mask, np.sqrt(horizon), table.column("hindsight_regret").to_numpy())
    return table.set_column(table.schema.get_field_index("hindsight_regret"),
                            "hindsight_regret", pa.array(fake))


@pytest.mark.parametrize(("learner", "start"), [
    ("exp3p-sae", "EXP3.P-SAE's regret against an adaptive adversary"),
    ("exp3-sae", "EXP3-SAE (plain EXP3"),
])
def test_the_rate_check_passes_sqrt_t_and_fails_a_learner_the_adversary_defeats(
        small, learner, start):
    """The same check on the same seeds: a regret of √T passes it, accept-all's rows in the
    learner's place (the adversary plays it the bad point: slope about 1, a little above at
    these T, as its first rounds cost it nothing) fail it."""
    assert _row(adaptive.adaptive(_sqrt_t(small, learner)), start).outcome == "pass"
    defeated = _row(adaptive.adaptive(_swap(small, learner, "accept-all")), start)
    assert defeated.outcome == "fail" and defeated.measured.value > 0.95


def test_a_rate_read_while_exp3p_sae_is_worse_than_accept_all_is_not_discriminating(small):
    """Where EXP3.P-SAE's regret at the largest T is still above accept-all's it has not begun
    to learn, and the row says so and why (its confidence bonus) instead of reading a rate;
    with a regret of √T in its place (below accept-all's) that reason is gone."""
    start = "EXP3.P-SAE's regret against an adaptive adversary"
    row = _row(adaptive.adaptive(small), start)
    assert row.regime.startswith("EXP3.P-SAE's regret is above accept-all's at the largest T")
    assert "it has not begun to learn" in row.regime and row.verdict == NOT_DISCRIMINATING
    learning = _row(adaptive.adaptive(_sqrt_t(small, "exp3p-sae")), start)
    assert "has not begun to learn" not in learning.regime
