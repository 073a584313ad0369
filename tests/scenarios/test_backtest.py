"""The lender's backtest: its arms meet the same applicants, its fixed baselines agree with the
refitting loop's arithmetic, and the learners start from the incumbent's history."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest

from strategic_apple_tasting.game import DataContexts
from strategic_apple_tasting.scenarios import DataSet
from strategic_apple_tasting.scenarios.backtest import (
    BASELINES,
    REFERENCE,
    REWEIGHTED,
    backtest,
    compare_backtest,
    fit_scorecard,
    format_backtest,
)


def _loans(n=400, seed=0):
    """Applicants whose default is likelier with a low first feature; +1 repaid, −5 default
    (scaled), the last two features gameable."""
    rng = np.random.default_rng(seed)
    rows = np.column_stack([np.ones(n), rng.normal(size=(n, 3))])
    repaid = (rng.random(n) < 1 / (1 + np.exp(-1.5 - 2 * rows[:, 1]))).astype(float)
    contexts = DataContexts(rows=rows, repaid=repaid, if_repaid=np.full(n, 0.2),
                            if_defaulted=np.full(n, -1.0), reward_scale=5.0, title="loans")
    return DataSet(contexts=contexts, gameable=np.array([False, False, True, True]),
                   source="synthetic")


def test_every_arm_meets_each_seeds_new_applicants_and_the_baselines_agree():
    data = _loans()
    frame = backtest(data, ["naive-logistic", "reject-all", "accept-all"], delta=0.0,
                     seeds=[0, 1], refit_every=10**6)
    assert frame.groupby("seed")["arm"].apply(list).tolist() == [
        ["naive-logistic", "reject-all", "accept-all", *BASELINES]] * 2
    assert set(frame["new"]) == {120} and set(frame["history"]) == {280}
    arms = frame.set_index(["seed", "arm"])["profit"]
    for seed in (0, 1):
        assert arms[(seed, "reject-all")] == 0.0
        # Applicants who cannot game: raising the cutoff by δ = 0 changes nothing, and the
        # refitting loop that never refits (its own Python arithmetic, applicant by applicant)
        # earns what the compiled scorer gives the raised incumbent.
        assert arms[(seed, "incumbent")] == arms[(seed, "incumbent, cutoff raised")]
        assert arms[(seed, "incumbent, refitted")] == pytest.approx(
            arms[(seed, "incumbent, cutoff raised")], abs=1e-9)
    # accept-all earns every new applicant's reward: the stratified split holds the same
    # outcomes out on each seed, so the same total.
    assert arms[(0, "accept-all")] == pytest.approx(arms[(1, "accept-all")], abs=1e-9)


def test_gaming_costs_the_incumbent_and_raising_its_cutoff_answers_it():
    data = _loans()
    frame = backtest(data, ["reject-all"], delta=1.0, seeds=[0, 1, 2])
    arms = frame.set_index(["seed", "arm"])["profit"].unstack()
    # Control for the one above: with gaming, the raised cutoff is another rule (on a seed
    # whose scorecard puts little weight on the gameable features, the same decisions).
    assert (arms["incumbent"] != arms["incumbent, cutoff raised"]).any()
    assert arms["incumbent"].mean() < arms["incumbent, cutoff raised"].mean()


def test_learners_start_from_the_history():
    """The new applicants do not depend on how the history was decided (accept-all earns the
    same), but a learner warm-started from that history does: an incumbent fitted on another
    share of it leaves other loans with known outcomes, and naive-logistic decides otherwise.
    Started cold, it would meet the same applicants the same way under both."""
    data = _loans()
    a, b = (backtest(data, ["naive-logistic", "accept-all"], delta=0.0, seeds=[0],
                     incumbent_share=share).set_index("arm") for share in (0.2, 0.8))
    assert a.loc["accept-all", "profit"] == b.loc["accept-all", "profit"]
    assert (a.loc["naive-logistic", ["profit", "accepted"]].tolist()
            != b.loc["naive-logistic", ["profit", "accepted"]].tolist())
    assert int(a["history_loans"].iloc[0]) < int(a["history"].iloc[0])  # some refused


def test_the_summary_pairs_every_arm_with_the_raised_incumbent():
    frame = backtest(_loans(), ["reject-all"], delta=0.5, seeds=[0, 1, 2])
    summary = compare_backtest(frame)
    ref = summary.set_index("arm").loc[REFERENCE]
    assert ref["vs_reference"] == 0.0
    rej = summary.set_index("arm").loc["reject-all"]
    assert rej["vs_reference"] == pytest.approx(-ref["profit"], abs=1e-6)
    text = format_backtest(summary)
    assert "| 0.5 | incumbent, cutoff raised | 3 |" in text and "(the reference)" in text


@pytest.mark.parametrize("kwargs, message", [
    ({"new_share": 1.0}, r"new_share must be a number in \(0, 1\), got 1.0"),
    ({"incumbent_share": 0}, r"incumbent_share must be a number in \(0, 1\), got 0"),
    ({"refit_every": 0}, "refit_every must be an integer >= 1, got 0"),
    ({"learners": [("incumbent", "reject-all")]}, "learners must have distinct labels"),
    ({"delta": -1.0}, "delta must be a finite number >= 0"),
    ({"history": "both"},
     r"history must be one of accepted, reweighted or a list of both, got 'both'"),
    ({"history": ["reweighted", "reweighted"]}, "history must be one of accepted, reweighted"),
    ({"history": []}, "history must be one of accepted, reweighted"),
    ({"bands": 0}, "bands must be an integer >= 1, got 0"),
    ({"folds": 0}, "folds must be an integer >= 1, got 0"),
    ({"folds": True}, "folds must be an integer >= 1, got True"),
    ({"learners": ["reject-all", ("reject-all, reweighted history", "accept-all")],
      "history": ["accepted", "reweighted"]}, "learners must have distinct labels"),
])
def test_bad_backtest_input_is_one_line(kwargs, message):
    args = {"learners": ["reject-all"], "delta": 0.5, "seeds": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        backtest(_loans(), args.pop("learners"), **args)
    weighted = _loans()
    weighted = DataSet(contexts=weighted.contexts._replace(weights=np.ones(400)),
                       gameable=weighted.gameable, source="synthetic")
    with pytest.raises(ValueError, match="must be applicants"):
        backtest(weighted, ["reject-all"], delta=0.5, seeds=1)


def test_the_scorecard_fit_is_a_logistic_regression():
    rng = np.random.default_rng(3)
    rows = np.column_stack([np.ones(4000), rng.normal(size=(4000, 2))])
    truth = np.array([0.5, 1.5, -1.0])
    repaid = (rng.random(4000) < 1 / (1 + np.exp(-rows @ truth))).astype(float)
    # 4,000 draws: each coefficient's standard error is about 0.05, so 0.2 is four of them.
    assert np.abs(fit_scorecard(rows, repaid, ridge=1e-6) - truth).max() < 0.2


def test_a_time_ordered_book_is_backtested_in_its_order_one_window_a_seed():
    """With a time order, seed k meets the k-th window of the newest rows, in time order,
    after every older row; every seed's incumbent is the same scorecard (fitted on the oldest
    rows); the windows cover the newest rows once. Without the order (the control), the split
    is random per seed."""
    import dataclasses

    from strategic_apple_tasting.scenarios.backtest import _Seed, break_even, time_fold

    data = _loans()
    time = np.random.default_rng(5).permutation(len(data.contexts.rows)).astype(float)
    timed = dataclasses.replace(data, time=time)
    cut = break_even(data, 0.0)
    parts = [_Seed(timed, s, 0.3, 0.2, cut, fold=(k, 3)) for k, s in enumerate([7, 8, 9])]
    newest = np.argsort(time)[-120:]
    assert np.array_equal(np.concatenate([p.new for p in parts]), newest)
    for part in parts:
        assert np.all(np.diff(time[part.new]) > 0)  # met in time order
        assert len(part.features) == int(np.sum(time < time[part.new[0]]))  # every older row
    assert all(np.array_equal(p.w, parts[0].w) for p in parts)
    era, _, _ = time_fold(time, 0.3, 0.2, 0, 3)
    assert np.array_equal(era, np.argsort(time)[:56])  # the oldest fifth of the 280 before
    frame = backtest(timed, ["accept-all"], delta=0.5, seeds=3)
    assert set(frame["order"]) == {"time"} and set(frame["new"]) == {40}  # 120 / 3 a window
    assert "the newest rows cut into one window per seed" in format_backtest(
        compare_backtest(frame))
    # Accept-all's profit in a window is the window's mean reward: the windows differ.
    accept = frame[frame["arm"] == "accept-all"].sort_values("seed")["profit"].to_numpy()
    reward = np.where(data.contexts.repaid > 0, 0.2, -1.0) * 5.0
    expected = [1000.0 * reward[p.new].mean() for p in parts]
    np.testing.assert_allclose(accept, expected, atol=1e-9)
    shuffled = [_Seed(data, s, 0.3, 0.2, cut) for s in (7, 8)]
    assert not np.array_equal(np.sort(shuffled[0].new), np.sort(shuffled[1].new))


def test_each_learner_runs_from_both_histories_paired_by_seed():
    """history=("accepted", "reweighted"): one arm per learner and history, on the same
    applicants. Accept-all learns nothing, so both of its arms earn the same (the pairing);
    naive-logistic learns its history, so reweighting it changes what it does; and the
    summary pairs each reweighted arm with its accepted one."""
    frame = backtest(_loans(), ["naive-logistic", "accept-all"], delta=0.5, seeds=[0, 1],
                     history=("accepted", "reweighted"))
    learners = ["naive-logistic", "accept-all", "naive-logistic" + REWEIGHTED,
                "accept-all" + REWEIGHTED]
    assert frame.groupby("seed")["arm"].apply(list).tolist() == [[*learners, *BASELINES]] * 2
    warm = frame.drop_duplicates("arm")["warm_start"]
    assert warm[:4].tolist() == ["accepted", "accepted", "reweighted", "reweighted"]
    assert warm[4:].isna().all()  # the baselines replay no history
    arms = frame.set_index(["arm", "seed"])[["profit", "accepted"]]
    np.testing.assert_array_equal(arms.loc["accept-all"], arms.loc["accept-all" + REWEIGHTED])
    assert not np.array_equal(arms.loc["naive-logistic"],
                              arms.loc["naive-logistic" + REWEIGHTED])
    summary = compare_backtest(frame).set_index("arm")
    diff = (arms.loc["naive-logistic" + REWEIGHTED, "profit"]
            - arms.loc["naive-logistic", "profit"])
    assert summary.loc["naive-logistic" + REWEIGHTED, "vs_accepted"] == pytest.approx(
        diff.mean(), abs=1e-6)
    assert summary.loc["accept-all" + REWEIGHTED, "vs_accepted"] == 0.0
    assert summary["vs_accepted"].isna().sum() == 5  # the accepted arms and the baselines
    text = format_backtest(compare_backtest(frame))
    assert "vs accepted-only history" in text and "reject inference" in text
    assert "| 0.5 | accept-all, reweighted history | 2 |" in text
    # A reweighted history alone: the arm is labelled as such, and the accepted-only table
    # (the default) keeps its columns.
    alone = backtest(_loans(), ["naive-logistic"], delta=0.5, seeds=[0], history="reweighted")
    assert alone["arm"].iloc[0] == "naive-logistic" + REWEIGHTED
    assert alone["profit"].iloc[0] == arms.loc[("naive-logistic" + REWEIGHTED, 0), "profit"]
    plain = format_backtest(compare_backtest(backtest(_loans(), ["reject-all"], delta=0.5,
                                                      seeds=[0])))
    assert "vs accepted-only history" not in plain


def test_the_reweighted_history_weighs_the_incumbents_rejected_bands():
    """A seed's weights are augmentation's on the incumbent's scores over the whole history:
    every band's accepted loans weigh as many as its rows, and the copies come from the
    seed's own stream, the same on every call (so every learner of a seed replays them)."""
    from strategic_apple_tasting import NaiveGreedyOLS
    from strategic_apple_tasting.learners.history import augmentation_weights
    from strategic_apple_tasting.scenarios.backtest import _Seed, break_even

    data = _loans()
    part = _Seed(data, 4, 0.3, 0.2, break_even(data, 0.0))
    w = augmentation_weights(part.features @ part.w, part.accepted, 5)
    assert w.shape == (280,) and np.all(w[~part.accepted] == 1.0)
    assert w[part.accepted].sum() == pytest.approx(280.0)
    assert w.max() > 1.5  # the incumbent rejected some: its low bands' loans weigh more
    assert np.all(w[:56] >= 1.0)  # the earlier era's loans, each accepted, at least once

    def started(warm):
        learner = NaiveGreedyOLS(delta=0.1, r0=0.0, feedback="apple").reset(d=4, rng=0)
        warm(learner, None)
        return learner.estimate()

    reweighted = functools.partial(part.warm, weights=w)
    np.testing.assert_array_equal(started(reweighted), started(reweighted))
    assert not np.allclose(started(reweighted), started(part.warm))


def _own_break_even_book(n=400, seed=0):
    """Loans of their own amounts and rates (each its own break-even, 0.5 to 0.95, in a last,
    not-gameable column, as a lender's CSV with amounts gives), repaid likelier with a high
    first feature."""
    from strategic_apple_tasting.game.data import break_even_logodds

    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    amount, rate, lgd = rng.uniform(1, 10, n), rng.uniform(0.05, 0.5, n), rng.uniform(0.5, 1, n)
    repaid = (rng.random(n) < 1 / (1 + np.exp(-2 * x[:, 1] - 1.5))).astype(float)
    gain, loss = amount * rate / 10, -amount * lgd / 10
    contexts = DataContexts(rows=np.column_stack([x, break_even_logodds(gain, loss)]),
                            repaid=repaid, if_repaid=gain, if_defaulted=loss,
                            break_even_column=3, title="own break-even")
    return DataSet(contexts=contexts, gameable=np.array([False, False, True, False]),
                   source="synthetic")


def test_the_incumbent_lends_at_each_loans_own_break_even():
    """On a book whose loans each have their own break-even, the scorecard is fitted on the
    other columns and weighs the break-even −1, so it grants a loan iff its predicted
    log-odds clear that loan's break-even (cutoff 0). Control: fitted as one more feature
    under one cutoff (the old incumbent), its grants differ."""
    from strategic_apple_tasting.scenarios.backtest import _Seed, break_even

    data = _own_break_even_book()
    c = data.contexts
    assert break_even(data, 0.0) == 0.0
    w = fit_scorecard(c.rows, c.repaid, own=3)
    assert w[3] == -1.0
    # (to rounding: the sliced rows are summed in another order)
    np.testing.assert_allclose(w[:3], fit_scorecard(c.rows[:, :3], c.repaid), rtol=1e-12)
    p = 1 / (1 + np.exp(-(c.rows[:, :3] @ w[:3])))
    own = -c.if_defaulted / (c.if_repaid - c.if_defaulted)  # each loan's p* at r0 = 0
    granted = c.rows @ w >= 0.0
    assert np.array_equal(granted, p >= own - 1e-12) and 0 < granted.sum() < len(granted)
    part = _Seed(data, 3, 0.3, 0.2, break_even(data, 0.0))
    assert part.w[3] == -1.0
    old = fit_scorecard(c.rows, c.repaid)
    assert not np.array_equal(c.rows @ old >= math.log(5.0), granted)  # the control
    # End to end: every arm and baseline runs, and at r0 ≠ 0 the column moves with r0.
    frame = backtest(data, ["naive-logistic"], delta=0.5, seeds=[0], r0=0.01)
    assert frame["profit"].notna().all() and len(frame) == 1 + len(BASELINES)


def test_a_seed_run_alone_meets_the_window_it_meets_among_all_the_seeds():
    """A task of a backtest part runs one seed: on a time-ordered book, told the seeds' count
    (``folds``), seed s alone gives the rows it has in the run of every seed in one call, bit
    for bit. The control: alone without ``folds``, it is a run of one window, other rows."""
    import dataclasses

    data = _loans()
    time = np.random.default_rng(5).permutation(len(data.contexts.rows)).astype(float)
    timed = dataclasses.replace(data, time=time)
    learners = ["naive-logistic", "accept-all"]
    every = backtest(timed, learners, delta=0.5, seeds=3)
    alone = pd.concat([backtest(timed, learners, delta=0.5, seeds=[s], folds=3)
                       for s in range(3)], ignore_index=True)
    pd.testing.assert_frame_equal(alone, every, check_exact=True)
    one = backtest(timed, learners, delta=0.5, seeds=[1])
    assert not np.array_equal(one["profit"], every[every["seed"] == 1]["profit"])
    assert set(one["new"]) == {120} and set(every["new"]) == {40}
    # A book without a time order: each seed's split is its own, folds or not.
    pd.testing.assert_frame_equal(backtest(data, learners, delta=0.5, seeds=[2], folds=3),
                                  backtest(data, learners, delta=0.5, seeds=[2]),
                                  check_exact=True)
    with pytest.raises(ValueError, match=r"^seeds must each name one of the 3 window\(s\) of a "
                                         r"time-ordered book \(0\.\.2\), got 3$"):
        backtest(timed, learners, delta=0.5, seeds=[1, 3], folds=3)
