"""A budget per group in a data game: each applicant games with its group's budget on
both engine paths, to the bit; the replay's benchmarks against a brute force over every
threshold with per-group shifts; learners are told the largest budget."""

from __future__ import annotations

import numpy as np
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.checks import tables_identical
from strategic_apple_tasting.engine.hindsight import hindsight
from strategic_apple_tasting.game import SubsetGaming
from strategic_apple_tasting.scenarios import group_summary

# FICO-like rows: one score z, drawn by weight, two groups spread over the scores.
from .test_data_game import _weighted

MASK = np.array([False, True])


def _game(budgets, **kw):
    return Game(dimension=2, contexts=_weighted(), agents=SubsetGaming(gameable=MASK),
                delta=budgets, **kw)


def test_both_paths_agree_to_the_bit_with_a_budget_per_group():
    """The compiled loop and the reference loop (the decision API) give the same table, bit for
    bit, with a truthful fraction and late outcomes; LinTS's rule takes the general-rule
    path. The control: the same game with one budget, the largest, gives another table (the
    groups' budgets are used)."""
    game = _game({"a": 0.1, "b": 0.5}, truthful=0.3, delay=2)
    learners = ["sa-ols", "lin-ts", "oracle"]
    a = simulate(game, learners, 600, seeds=[3, 4], engine="compiled")
    b = simulate(game, learners, 600, seeds=[3, 4], engine="reference")
    for name in a.column_names:
        assert tables_identical(a.select([name]), b.select([name])), name
    one = simulate(_game(0.5, truthful=0.3, delay=2), learners, 600, seeds=[3, 4])
    assert not tables_identical(a.select(["group_distance"]), one.select(["group_distance"]))


@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_each_applicant_games_with_its_groups_budget(engine):
    """A group of budget 0 never moves; the other group's movers move at most its budget
    (0.5); the results name each group's budget, and learners are told the largest."""
    game = _game({"a": 0.0, "b": 0.5})
    assert game.delta == 0.5 and game.group_budgets == (0.0, 0.5)
    table = simulate(game, ["sa-ols", "naive-greedy"], 800, seeds=[2], engine=engine)
    frame = table.to_pandas()
    assert set(frame["delta_by_group"]) == {"a=0.0,b=0.5"}
    last = frame[frame["t"] == 800]
    for _, run in last.iterrows():
        moved, distance = np.asarray(run["group_moved"]), np.asarray(run["group_distance"])
        assert moved[0] == 0 and moved[1] > 0
        assert distance[1] <= 0.5 * moved[1] * (1 + 1e-12)
    summary = group_summary(frame, ("a", "b"))
    assert summary["budget"].tolist() == [0.0, 0.5, 0.0, 0.5]
    assert set(summary["delta"]) == {0.5}


def test_learners_are_told_the_largest_budget():
    from strategic_apple_tasting.learners import SAOLS

    game = _game({"a": 0.2, "b": 0.4})
    bound = SAOLS().bind(game.instance(0), 100)
    assert bound.get_params()["delta"] == 0.4


def _replayed(game, seed, horizon):
    """Each round's row, whether its agent games, and its mean and realized reward, drawn from
    the seed's streams in Python, as the engine draws them."""
    inst = game.instance(seed)
    truthful = game.agents.truthful
    out = []
    for _ in range(horizon):
        x = inst.next_context()
        gamer = not (inst.rngs["agents"].random() < truthful)
        mean = inst.mean_reward(x)
        realized, _ = inst.next_rewards(x)
        out.append((inst._row, gamer, mean, realized))
    return out


def test_the_benchmarks_with_a_budget_per_group_match_a_brute_force():
    """On one score every linear rule is a threshold on z (or accepts all or none); a gamer of
    group g answering (z ≥ c) reaches it from c − δ_g. Trying every threshold gives the best
    rule in hindsight answered by the agents; the replay's exact sweep over the per-group
    shifted scores gives the same, and the least-squares rule shifted by the largest budget
    is answered the same way. The control: the budgets matter (the replay with one budget,
    the largest, differs)."""
    budgets = {"a": 0.1, "b": 0.6}
    game = _game(budgets, truthful=0.4)
    data = game.contexts
    record = np.array([50, 400])
    got = hindsight(game, 5, record)
    one = hindsight(_game(0.6, truthful=0.4), 5, record)
    rounds = _replayed(game, 5, int(record[-1]))
    z = data.rows[:, 1]
    row_budget = np.array([budgets[data.group_names[g]] for g in data.groups])
    cuts = np.unique(np.concatenate([z, z - 0.1, z - 0.6, z + 0.1, z + 0.6]))
    theta = game.theta1
    for k, t in enumerate(record):
        seen = rounds[:t]
        rows = np.array([r for r, _, _, _ in seen])
        gain = np.array([m for _, _, m, _ in seen])
        gamer = np.array([g for _, g, _, _ in seen])
        zs, shift = z[rows], row_budget[rows] * gamer
        positive = np.maximum(gain, 0).sum()
        game_best = 0.0
        for c in cuts:
            for sign in (1.0, -1.0):
                # A mover raises ⟨β, x⟩ by δ_g·‖β_G‖ = δ_g whatever β's sign on z.
                game_best = max(game_best, gain[sign * zs + shift >= sign * c].sum())
        assert got.stackelberg[k] == pytest.approx(positive - game_best, abs=1e-10)
        s = data.rows[rows] @ theta
        unit = abs(theta[1])
        accepted = (s >= 0.6 * unit) | (gamer & (s + row_budget[rows] * unit >= 0.6 * unit))
        assert got.ls_stackelberg[k] == pytest.approx(positive - gain[accepted].sum(),
                                                      abs=1e-9)
        assert got.linear[k] == one.linear[k]  # true features: no budget enters
    assert (got.stackelberg != one.stackelberg).all()
    assert got.ls_stackelberg[-1] != one.ls_stackelberg[-1]


def test_the_table_by_group_tells_two_sets_of_budgets_apart():
    """Two runs whose budgets per group differ but share their largest (the table's delta)
    are two rows per group, each with its own budgets (pooled, they would mix them)."""
    import pandas as pd

    base = {"learner": "sa-ols", "delta": 0.5, "seed": 0, "t": 10,
            "group_applicants": [6.0, 4.0], "group_accepted": [3.0, 1.0],
            "group_repaid": [3.0, 0.0], "group_moved": [1.0, 0.0],
            "group_distance": [0.5, 0.0], "group_burden": [0.0, 1.0]}
    runs = pd.DataFrame([{**base, "delta_by_group": "a=0.5,b=0.0"},
                         {**base, "delta_by_group": "a=0.0,b=0.5"}])
    summary = group_summary(runs, ("a", "b"))
    assert summary["budget"].tolist() == [0.5, 0.0, 0.0, 0.5]
    assert summary["seeds"].tolist() == [1, 1, 1, 1]
