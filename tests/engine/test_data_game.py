"""Data games on the engine: both paths bit for bit, the benchmarks against a brute
force, the search against the exact optimum, and the lending scenario's old loop replayed."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.checks import tables_identical
from strategic_apple_tasting.engine.best_rule import exact_value, search_rules
from strategic_apple_tasting.engine.hindsight import hindsight
from strategic_apple_tasting.game import DataContexts, SubsetGaming
from tests.helpers import recorded_rows

ROOT = Path(__file__).resolve().parents[2]


_recorded = recorded_rows


def _weighted(seed=1):
    """FICO-like: one score, rows drawn by weight, outcomes drawn with a probability."""
    rng = np.random.default_rng(seed)
    z = np.linspace(-2, 2, 25)
    return DataContexts(rows=np.column_stack([np.ones(25), z]),
                        repaid=1 / (1 + np.exp(-2 * z - 1)), if_repaid=np.full(25, 0.2),
                        if_defaulted=np.full(25, -1.0), weights=rng.random(25),
                        groups=rng.integers(0, 2, 25), group_names=("a", "b"))


@pytest.mark.parametrize("which", ["recorded", "weighted"])
def test_a_data_game_is_the_same_on_both_paths(which):
    """The compiled loop and the reference loop (the decision API) give the same table, bit
    for bit, with the data game's columns, agents that game a subset, a truthful fraction,
    outcomes late and rules held; LinTS's rule takes the general-rule path."""
    if which == "recorded":
        data, mask = _recorded(), np.array([False, False, True, True])
        games = [Game(dimension=4, contexts=data, agents=SubsetGaming(gameable=mask),
                      delta=0.5, truthful=0.3, delay=3, delay_law="uniform", period=4)]
        learners = ["sa-ols", "naive-greedy", "oracle", "accept-all"]
    else:
        data, mask = _weighted(), np.array([False, True])
        games = [Game(dimension=2, contexts=data, agents=SubsetGaming(gameable=mask),
                      delta=0.3, truthful=0.3, delay=2)]
        learners = ["sa-ols", "lin-ts"]
    for game in games:
        a = simulate(game, learners, 600, seeds=[3, 4], engine="compiled")
        b = simulate(game, learners, 600, seeds=[3, 4], engine="reference")
        assert {"profit", "linear_regret", "ls_regret", "best_rule_profit"} <= set(
            a.column_names)
        for name in a.column_names:
            assert tables_identical(a.select([name]), b.select([name])), name
        moved = np.asarray(a.column("moved"))
        assert moved.max() > 0


def _replayed(game, seed, horizon):
    """Each round's row, whether its agent games, and its mean and realized reward, drawn
    from the seed's streams in Python, as the engine draws them."""
    inst = game.instance(seed)
    truthful = game.agents.truthful
    out = []
    for _ in range(horizon):
        x = inst.next_context()
        gamer = not (inst.rngs["agents"].random() < truthful) if 0 < truthful < 1 \
            else truthful == 0
        mean = inst.mean_reward(x)
        realized, _ = inst.next_rewards(x)
        out.append((inst._row, gamer, mean, realized))
    return out


def test_the_benchmarks_match_a_brute_force():
    """On one score (d = 2: an intercept and z) every linear rule is a threshold on z (or
    accepts all or none), so the best rule in hindsight is found by trying every threshold;
    a gamer answering (z ≥ t) reaches it from t − δ. The replay gives exactly those values,
    and the least-squares rule's."""
    data = _weighted()
    delta = 0.3
    game = Game(dimension=2, contexts=data, agents=SubsetGaming(gameable=np.array([False, True])),
                delta=delta, truthful=0.4)
    record = np.array([50, 400])
    got = hindsight(game, 5, record)
    rounds = _replayed(game, 5, int(record[-1]))
    z = data.rows[:, 1]
    cuts = np.unique(np.concatenate([z, z - delta, z + delta]))
    theta = game.theta1
    for k, t in enumerate(record):
        seen = rounds[:t]
        gain = np.array([m for _, _, m, _ in seen])
        zs = np.array([z[r] for r, _, _, _ in seen])
        gamer = np.array([g for _, g, _, _ in seen])
        positive = np.maximum(gain, 0).sum()
        true_best = game_best = 0.0
        for c in cuts:
            for sign in (1.0, -1.0):
                true_best = max(true_best, gain[sign * zs >= sign * c].sum())
                game_best = max(game_best, gain[sign * zs + delta * gamer >= sign * c].sum())
        assert got.linear[k] == pytest.approx(positive - true_best, abs=1e-10)
        assert got.stackelberg[k] == pytest.approx(positive - game_best, abs=1e-10)
        s = data.rows[[r for r, _, _, _ in seen]] @ theta
        reach = delta * abs(theta[1])
        assert got.ls[k] == pytest.approx(positive - gain[s >= 0].sum(), abs=1e-10)
        assert got.ls_stackelberg[k] == pytest.approx(
            positive - gain[(s >= reach) | (gamer & (s >= 0))].sum(), abs=1e-9)
        # The control: a gamer is accepted from further down, so the two versions differ.
        assert got.stackelberg[k] != got.linear[k]


def test_the_search_finds_the_best_rule_where_it_can_be_enumerated():
    """Two features and an intercept: the best half-space's boundary can be moved until it
    touches two points, so trying every direction normal to a line through two points (and a
    hair either way) with its best threshold is exhaustive. The search reaches that optimum;
    the least-squares rule, the control, does not."""
    rng = np.random.default_rng(7)
    n = 40
    xy = rng.normal(size=(n, 2))
    gains = np.where(np.sin(3 * xy[:, 0]) + xy[:, 1] > 0, 1.0, -1.5)
    rows = np.column_stack([np.ones(n), xy])
    w = np.full(n, 1 / n)
    best = 0.0
    for i, j in itertools.combinations(range(n), 2):
        normal = np.array([xy[i, 1] - xy[j, 1], xy[j, 0] - xy[i, 0]])
        for angle in (-1e-7, 1e-7):
            c, s = np.cos(angle), np.sin(angle)
            for sign in (1.0, -1.0):
                u = sign * np.array([c * normal[0] - s * normal[1], s * normal[0] + c * normal[1]])
                best = max(best, exact_value(xy @ u, w * gains)[0])
    found = search_rules(rows, gains, w, restarts=6)
    assert found.value == pytest.approx(best, abs=1e-12)
    assert found.bound >= found.value
    assert found.ls_value < best  # by one applicant (1/40) here


def test_the_old_lending_loop_replayed_through_the_engine_gives_its_numbers(tmp_path):
    """The lending scenario's own loop (before the data game, kept in benchmarks/) and the engine,
    on the same applicants (the old loop's rows, replayed in order): the same profit and
    counts to the bit, and the same regrets against the least-squares rule up to the order
    of summation (the engine subtracts the learner's total from the benchmark's)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import legacy_lending as old
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    from strategic_apple_tasting.scenarios import DataSet, data_game, from_lending, load_csv

    rng = np.random.default_rng(3)
    lines = ["bad,income,debt,cash"]
    for _ in range(200):
        income, debt, cash = rng.normal(50, 10), rng.normal(10, 3), rng.normal(5, 2)
        bad = int(rng.random() < 1 / (1 + np.exp(-(debt - 10) / 2 + (income - 50) / 10)))
        lines.append(f"{bad},{income:.3f},{debt:.3f},{cash:.3f}")
    path = tmp_path / "loans.csv"
    path.write_text("\n".join(lines) + "\n")
    loans = load_csv(path, label="bad", default_value=1, features=["income", "debt", "cash"],
                     gameable=["debt", "cash"], rewards=(1.0, -3.0))
    horizon, delta = 1500, 0.5
    learners = ["sa-ols", "naive-greedy", "oracle", "accept-all"]
    before = old.run_lending(loans, learners, horizon=horizon, seeds=[0, 1], delta=delta)
    data = from_lending(loans)
    agents = old.subset_agents(loans.gameable, delta)
    for s in (0, 1):
        rows = old._Streams.make(np.random.SeedSequence(0), s, loans, agents, horizon, 0.0).rows
        replay = DataSet(data.contexts._replace(order=rows.astype(np.int64)), data.gameable,
                         data.source)
        now = simulate(data_game(replay, delta=delta), learners, horizon, seeds=[s]
                       ).to_pandas()
        now = now[now.t == horizon].set_index("learner")
        was = before[before.seed == s].set_index("learner")
        for learner in learners:
            a, b = was.loc[learner], now.loc[learner]
            assert (a.reward, a.accepted, a.moved, a.clean, a.gamed_as_clean) == (
                b.profit, b.accepted, b.moved, b.clean, b.gamed_as_clean), learner
            assert a.regret == pytest.approx(b.ls_regret, abs=1e-9)
            assert a.stackelberg_regret == pytest.approx(b.ls_stackelberg_regret, abs=1e-9)
        assert was.loc["naive-greedy"].moved > 0
