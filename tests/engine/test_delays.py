"""The engine with outcomes learned late and rules published for a period.

Compiled and reference paths agreeing on delayed games is a public check run for every
learner (``check_compiled_matches_reference``); these tests cover what the delays mean."""

from __future__ import annotations

import re

import numpy as np
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.checks import tables_identical
from strategic_apple_tasting.engine import play, play_published
from strategic_apple_tasting.learners import SAOLS


def _final(table, learner, column="regret"):
    t = table.to_pandas()
    last = t[(t.learner == learner) & (t.t == t.t.max())].sort_values("seed")
    return last[column].to_numpy()


def test_the_papers_game_is_the_special_case():
    """delay 0 and period 1 give the table the engine gave before delays existed: the
    reference loop through the decision API equals the per-round API's loop, and the
    compiled loop equals both."""
    game = Game(dimension=3, delta=0.2, truthful=0.3)
    inst_a, inst_b = game.instance(4), game.instance(4)
    a = SAOLS().bind(inst_a, 500).reset(3, inst_a.rngs["learner"])
    b = SAOLS().bind(inst_b, 500).reset(3, inst_b.rngs["learner"])
    assert list(play(inst_a, a, 500)) == list(play_published(inst_b, b.desk, 500))
    compiled = simulate(game, "sa-ols", 500, seeds=[4], engine="compiled")
    reference = simulate(game, "sa-ols", 500, seeds=[4], engine="reference")
    assert tables_identical(compiled, reference)


def test_a_delay_of_d_rounds_means_the_outcome_is_learned_d_rounds_later():
    """Round by round: with delay 3, the feedback learned at the end of round t is that of
    round t − 3's decision (apple tasting: a rejection is learned at once)."""
    game = Game(dimension=2, delta=0.1, delay=3)
    inst = game.instance(0)
    lr = SAOLS().bind(inst, 60).reset(2, inst.rngs["learner"])
    rounds = list(play_published(inst, lr.desk, 60))
    for t, r in enumerate(rounds, start=1):
        accepted_before = rounds[t - 4].accepted if t > 3 else False
        arrivals = [a for (_, a, _) in r.learned if a]
        assert len(arrivals) == int(accepted_before), t
        assert sum(1 for (_, a, _) in r.learned if not a) == int(not r.accepted)


def test_regret_grows_with_the_delay_and_the_period_and_accept_all_pays_nothing():
    """SA-OLS learns later, so it pays more; accept-all learns nothing, so its regret is the
    same at every delay (the control: the delays change nothing else in the game). Fixed
    seeds; the margins are wide: 8 seeds at T = 20000 give SA-OLS extra regret of about 0.2
    per round of delay, with a spread of a few units (measured: 1.9 ± 0.7 at D = 10, 18 ± 3
    at D = 100, 188 ± 7 at D = 1000 at T = 50000)."""
    tables = {kw: simulate(Game(dimension=3, delta=0.3, **dict([kw])),
                           ["sa-ols", "accept-all"], 20000, seeds=8)
              for kw in (("delay", 0), ("delay", 200), ("period", 200),
                         ("delay_law", "uniform"))}
    zero = tables[("delay", 0)]
    for key in (("delay", 200), ("period", 200)):
        extra = _final(tables[key], "sa-ols") - _final(zero, "sa-ols")
        assert extra.mean() > 10, (key, extra)
        assert np.array_equal(_final(tables[key], "accept-all"), _final(zero, "accept-all"))
    # delay_law uniform with delay 0 draws nothing: the paper's game exactly.
    keep = [c for c in zero.column_names if c != "delay_law"]
    assert tables_identical(tables[("delay_law", "uniform")].select(keep), zero.select(keep))


def test_the_compiled_loop_refuses_what_it_cannot_run_and_auto_runs_it_on_the_reference():
    period = Game(dimension=2, period=5)
    delayed = Game(dimension=2, delay=5)
    with pytest.raises(ValueError, match=r"engine 'compiled' cannot run this: linucb publishes "
                                         r"a general rule.*period = 5"):
        simulate(period, "linucb", 50, engine="compiled")
    with pytest.raises(ValueError, match=r"engine 'compiled' cannot run this: exp3-sae learns "
                                         r"with what its policy drew.*delay = 5"):
        simulate(delayed, "exp3-sae", 50, engine="compiled")
    for game, name in ((period, "linucb"), (delayed, "exp3-sae")):
        assert tables_identical(simulate(game, name, 50, seeds=[1]),
                                simulate(game, name, 50, seeds=[1], engine="reference"))
    simulate(delayed, "linucb", 50, engine="compiled")  # delay alone: the compiled loop can
    simulate(period, "exp3-sae", 50, engine="compiled")  # period alone: it can


def test_the_per_round_loop_refuses_a_delayed_game():
    inst = Game(dimension=2, delay=2).instance(0)
    with pytest.raises(ValueError, match="the per-round API plays the paper's game only"):
        next(play(inst, SAOLS().bind(inst, 10).reset(2, 0), 10))


@pytest.mark.parametrize(("kw", "message"), [
    ({"delay": -1}, "delay must be an integer from 0 to 10^9, got -1"),
    ({"delay": 1.5}, "delay must be an integer from 0 to 10^9, got 1.5"),
    ({"delay": True}, "delay must be an integer"),
    ({"period": 0}, "period must be an integer from 1 to 10^9, got 0"),
    ({"period": 10**10}, "period must be an integer from 1 to 10^9"),
    ({"delay_law": "poisson"}, "delay_law must be one of fixed, uniform, got 'poisson'"),
])
def test_bad_delay_settings_are_one_line(kw, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Game(dimension=2, **kw)


def test_the_pending_decisions_count_in_the_memory_estimate():
    from strategic_apple_tasting.engine import memory_needed

    small = memory_needed(Game(dimension=50), [SAOLS()], 1000, 1, 1)
    large = memory_needed(Game(dimension=50, delay=10**7), [SAOLS()], 1000, 1, 1)
    assert large - small == 10**7 * 8 * (2 * 50 + 5)
    with pytest.raises(ValueError, match="this run needs about"):
        simulate(Game(dimension=50, delay=10**9), "sa-ols", 1000, max_memory=2**30)
