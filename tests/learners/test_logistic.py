"""The logistic learners against a naive version written straight from their
definition, their online fit against the batch maximum likelihood, and the rewards they take from
a lending game."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.checks import tables_identical
from strategic_apple_tasting.game import DataContexts, LinearThreshold, SubsetGaming
from strategic_apple_tasting.game.data import break_even_logodds
from strategic_apple_tasting.learners import NaiveLogistic, OffsetLogistic, SALogistic
from tests.helpers import replay


def _irls_row(u: np.ndarray, s: float, y: float) -> tuple[np.ndarray, float]:
    """a·uuᵀ's and u·(a·s + y − p)'s terms of a point linearized at log-odds s (clipped)."""
    s = float(np.clip(s, -30, 30))
    p = 1 / (1 + math.exp(-s))
    a = p * (1 - p)
    return a * np.outer(u, u), u * (a * s + y - p)


def naive_logistic(game: Game, seed: int, horizon: int, *, shift: bool, clean_only: bool,
                   offset: bool, ridge: float = 1.0, repaid: float = 1.0,
                   defaulted: float = -1.0, batch_points: int | None = None,
                   at_zero: bool = False, explore: float = 0.05, patience: int = 100):
    """The logistic learners as their docstrings define them, in numpy's normal equations:
    w solves (ridge·I + Σ a·uuᵀ) w = Σ u·(a·s + y − p) over the learned rows u ([x'] or
    [x', g]), each linearized at the log-odds s its rule gave it (``at_zero``: at s = 0, the
    control); the first ``batch_points`` are kept and, each time the count of learned points
    doubles from d, w becomes the minimizer of their negative log-likelihood plus the later
    rows' quadratic (Newton with backtracking) and the kept rows are linearized at it. After
    ``patience`` rounds past the warm-up with no loan granted by a rule that is not accept-all,
    each round publishes accept-all with probability ``explore`` (a coin from the learner's
    generator). Returns the decisions, the final coefficients and the rounds explored."""
    inst = game.instance(seed)
    d, bandit = game.dimension, game.feedback == "bandit"
    k = d + offset
    size = 5 * d if batch_points is None else batch_points
    late_gram, late_vec = ridge * np.eye(k), np.zeros(k)
    gram, vec = late_gram.copy(), late_vec.copy()
    kept: list[tuple[np.ndarray, float]] = []
    learned, next_refit = 0, d
    rejected, n_rejected = 0.0, 0
    rng, idle, explored = inst.rngs["learner"], 0, 0

    def linearized(w):
        g, v = late_gram.copy(), late_vec.copy()
        for u, y in kept:
            dg, dv = _irls_row(u, 0.0 if at_zero else float(u @ w), y)
            g, v = g + dg, v + dv
        return g, v

    def objective(w):
        s = np.array([u @ w for u, _ in kept])
        y = np.array([y for _, y in kept])
        return float(np.sum(np.logaddexp(0.0, s) - y * s) + w @ late_gram @ w / 2
                     - late_vec @ w)

    def refit(w):
        value = objective(w)
        for _ in range(50):
            target = np.linalg.solve(*linearized(w))
            t = 1.0
            while objective(w + t * (target - w)) > value and t >= 1e-10:
                t /= 2
            if t < 1e-10:
                break
            step = t * (target - w)
            w, value = w + step, objective(w + step)
            if np.abs(step).max() <= 1e-10 * (1 + np.abs(w - step).max()):
                break
        return linearized(w)

    decisions = []
    for t in range(horizon):
        coef = np.linalg.solve(gram, vec)
        r0 = rejected / n_rejected if n_rejected else game.r0
        p_star = (r0 - defaulted) / (repaid - defaulted)
        if t < d or p_star <= 0 or p_star >= 1:
            beta, c = np.zeros(d), -1.0 if t < d or p_star <= 0 else 1.0
        elif idle >= patience and explore > 0 and rng.random() < explore:
            beta, c = np.zeros(d), -1.0
            explored += 1
        else:
            beta = coef[:d]
            c = math.log(p_star / (1 - p_star)) + (game.delta * np.linalg.norm(beta)
                                                  if shift else 0.0)
        x = inst.next_context()
        x_obs, moved = inst.next_response(LinearThreshold(beta, c), x)
        accepted = moved or float(beta @ x_obs) >= c
        r1, r_reject = inst.next_rewards(x)
        decisions.append(accepted)
        if accepted and (c >= 0 or np.any(beta != 0)):
            idle = 0
        elif t >= d:
            idle += 1
        if accepted:
            margin = 1e-9 * (abs(c) + np.linalg.norm(beta) * np.linalg.norm(x_obs))
            clean = float(beta @ x_obs) > c + margin
            if clean or not clean_only:
                y = min(max((r1 - defaulted) / (repaid - defaulted), 0.0), 1.0)
                u = np.append(x_obs, 0.0 if clean else 1.0) if offset else x_obs
                dg, dv = _irls_row(u, 0.0 if at_zero else float(beta @ x_obs), y)
                gram, vec = gram + dg, vec + dv
                if len(kept) < size:
                    kept.append((u, y))
                else:
                    late_gram, late_vec = late_gram + dg, late_vec + dv
                learned += 1
                if size and learned >= next_refit:
                    next_refit *= 2
                    gram, vec = refit(np.linalg.solve(gram, vec))
        elif bandit:
            rejected += r_reject
            n_rejected += 1
    return np.array(decisions), np.linalg.solve(gram, vec), explored


KINDS = {SALogistic: dict(shift=True, clean_only=True, offset=False),
         OffsetLogistic: dict(shift=True, clean_only=False, offset=True),
         NaiveLogistic: dict(shift=False, clean_only=False, offset=False)}


@pytest.mark.parametrize("cls", list(KINDS), ids=lambda c: c.name)
@pytest.mark.parametrize("feedback, r0", [("apple", 0.0), ("apple", -0.2), ("bandit", 0.0)])
def test_logistic_learners_decide_like_the_naive_version(cls, feedback, r0):
    game = Game(dimension=4, delta=0.4, feedback=feedback, r0=r0, sigma=0.3)
    want, coef, _ = naive_logistic(game, 0, 1500, **KINDS[cls])
    rep = replay(game, cls(), 0, 1500)  # the per-round API, as a user calls it
    assert np.array_equal(rep["accepted"], want)
    assert np.allclose(rep["learner"].coefficients(), coef, rtol=1e-8, atol=1e-10)
    # Control: the same learner with every row linearized at log-odds 0 (a weighted linear
    # probability fit, no Newton step at the rule) fits otherwise.
    _, other, _ = naive_logistic(game, 0, 1500, **KINDS[cls], at_zero=True)
    assert not np.allclose(other, coef, rtol=1e-3)


@pytest.mark.parametrize("cls", list(KINDS), ids=lambda c: c.name)
def test_exploration_once_locked_out_is_the_definitions(cls):
    # A strict book (a loan must be repaid 19 times in 20 to pay at r0 = 0.9) and a short
    # patience: the learners' own rules go idle for stretches, and explore in them.
    game = Game(dimension=3, delta=0.4, r0=0.9, sigma=0.3)
    params = dict(explore=0.3, patience=5)
    want, coef, explored = naive_logistic(game, 0, 1500, **KINDS[cls], **params)
    rep = replay(game, cls(**params), 0, 1500)
    assert explored > 20  # the case is exercised ...
    assert rep["learner"].explored == explored
    assert np.array_equal(rep["accepted"], want)
    assert np.allclose(rep["learner"].coefficients(), coef, rtol=1e-8, atol=1e-10)
    # ... and the engine's path is the same learner.
    assert (simulate(game, cls(**params), 1500, [0]).to_pandas()["accepted"].iloc[-1]
            == want.sum())
    # Control: without exploration the same learner decides otherwise, and explores never.
    off, _, none = naive_logistic(game, 0, 1500, **KINDS[cls], explore=0.0, patience=5)
    assert none == 0 and not np.array_equal(off, want)
    assert replay(game, cls(explore=0.0, patience=5), 0, 1500)["learner"].explored == 0


def test_exploration_hyperparameters_are_checked():
    for kwargs, message in [
        (dict(explore=1.5), r"^explore must be a finite number >= 0 and <= 1, got 1\.5$"),
        (dict(explore=float("nan")), r"^explore must be a finite number"),
        (dict(patience=0), r"^patience must be an integer from 1 to 10\^9 \(rounds without a "
                           r"loan before the learner explores\), got 0$"),
        (dict(patience=2.5), r"^patience must be an integer"),
    ]:
        with pytest.raises(ValueError, match=message):
            SALogistic(delta=0.1, r0=0.0, feedback="apple", **kwargs).reset(2, 0)


def test_ridge_rewards_and_batch_points_are_the_learners_own():
    """ridge, the two rewards and the points kept enter as the definition says (the same
    naive version with them set), and a learner with other rewards decides otherwise, one
    keeping no point (the online fit alone) fits otherwise (the controls)."""
    game = Game(dimension=3, delta=0.2, r0=-0.1, sigma=0.3)
    kw = dict(ridge=0.25, repaid=0.6, defaulted=-1.4, batch_points=7)
    want, coef, _ = naive_logistic(game, 1, 1000, **KINDS[SALogistic], **kw)
    rep = replay(game, SALogistic(**kw), 1, 1000)
    assert np.array_equal(rep["accepted"], want)
    assert np.allclose(rep["learner"].coefficients(), coef, rtol=1e-8, atol=1e-10)
    assert not np.array_equal(replay(game, SALogistic(), 1, 1000)["accepted"], want)
    _, online, _ = naive_logistic(game, 1, 1000, **KINDS[SALogistic],
                                  **{**kw, "batch_points": 0})
    assert not np.allclose(online, coef, rtol=1e-3)
    rep = replay(game, SALogistic(**{**kw, "batch_points": 0}), 1, 1000)
    assert np.allclose(rep["learner"].coefficients(), online, rtol=1e-8, atol=1e-10)


def test_no_coefficients_before_a_point_and_no_estimate_of_theta():
    learner = SALogistic(delta=0.1, r0=0.0, feedback="apple").reset(2, 0)
    assert learner.coefficients() is None and learner.estimate() is None
    learner.update([1.0, 0.0], learner.act([1.0, 0.0]), 1.0)
    assert learner.coefficients() is not None and learner.estimate() is None


@pytest.mark.parametrize("r0, want", [(-1.0, -1.0), (-5.0, -1.0), (1.0, 1.0), (3.0, 1.0)])
def test_a_reward_of_rejecting_beyond_the_outcomes_is_accept_all_or_reject_all(r0, want):
    """p* ≤ 0 (every loan earns r0 or more): accept everyone; p* ≥ 1: nobody."""
    learner = NaiveLogistic(delta=0.1, r0=r0, feedback="apple").reset(2, 0)
    for _ in range(2):  # the warm-up: accept everyone
        learner.update([1.0, 0.5], learner.act([1.0, 0.5]), 1.0)
    rule = learner.policy()
    assert not rule.beta.any() and rule.threshold == want


def test_on_a_data_game_both_paths_agree_and_the_learners_take_its_outcomes_rewards():
    """A data game (rows with recorded +0.2 / −1 outcomes, two gameable features, a truthful
    share, outcomes late and rules held): the compiled loop and the reference loop give the
    same table bit for bit, and each learner is bound to the game's rewards of a repaid and a
    defaulted loan (the paper's game declares none: the learners keep 1 and −1)."""
    rng = np.random.default_rng(0)
    rows = np.column_stack([np.ones(80), rng.normal(size=(80, 3))])
    repaid = (rng.random(80) < 1 / (1 + np.exp(-2 * rows[:, 1] - 1))).astype(float)
    reward = np.where(repaid > 0, 0.2, -1.0)
    data = DataContexts(rows=rows, repaid=repaid, if_repaid=reward, if_defaulted=reward.copy())
    game = Game(dimension=4, contexts=data, agents=SubsetGaming(gameable=np.array(
        [False, False, True, True])), delta=0.5, truthful=0.3, delay=3, delay_law="uniform",
                period=4)
    names = ["sa-logistic", "offset-logistic", "naive-logistic"]
    a = simulate(game, names, 600, seeds=[3, 4], engine="compiled")
    b = simulate(game, names, 600, seeds=[3, 4], engine="reference")
    for name in a.column_names:
        assert tables_identical(a.select([name]), b.select([name])), name
    assert np.asarray(a.column("moved")).max() > 0
    bound = SALogistic().bind(game.instance(3))
    assert (bound.repaid, bound.defaulted) == (game.repaid, game.defaulted) == (0.2, -1.0)
    plain = SALogistic().bind(Game(dimension=4, delta=0.5).instance(0))
    assert (plain.repaid, plain.defaulted) == (None, None)


def _loan_book(n=400, seed=0, base=1.5):
    """Loans of their own amounts, rates and losses given default (rewards in the data's
    units, r0 = 0): each loan's break-even p* = l / (ρ + l), here 0.5 to 0.95; a last,
    not-gameable column of logit(p*) as a data game carries it."""
    rng = np.random.default_rng(seed)
    x = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    amount, rate, lgd = rng.uniform(1, 10, n), rng.uniform(0.05, 0.5, n), rng.uniform(0.5, 1, n)
    repaid = (rng.random(n) < 1 / (1 + np.exp(-2 * x[:, 1] - base))).astype(float)
    gain, loss = amount * rate / 10, -amount * lgd / 10
    rows = np.column_stack([x, break_even_logodds(gain, loss)])
    data = DataContexts(rows=rows, repaid=repaid, if_repaid=gain, if_defaulted=loss,
                        break_even_column=3)
    game = Game(dimension=4, contexts=data, delta=0.5,
                agents=SubsetGaming(gameable=np.array([False, False, True, False])))
    return game, gain, loss


@pytest.mark.parametrize("cls", list(KINDS), ids=lambda c: c.name)
def test_each_loan_is_accepted_at_its_own_break_even(cls):
    """The learners bound to a book whose loans each have their own break-even accept a
    loan iff σ(⟨w, x⟩) clears (r0 − loss)/(gain − loss) for that loan (plus the shift),
    checked against the loan's gain and loss, not the column; the column's weight is never
    fitted; both engine paths agree."""
    game, gain, loss = _loan_book()
    learner = cls().bind(game.instance(0))
    assert learner.break_even_column == 3 and game.break_even_column == 3
    rep = replay(game, cls(), 0, 1500)
    w = rep["learner"].coefficients()
    assert w[3] == 0.0 and np.abs(w[:3]).max() > 0.1  # the column is not fitted; w is
    rule = rep["learner"].policy()
    assert rule.beta[3] == -1.0 and np.array_equal(rule.beta[:3], w[:3])
    rows = game.contexts.rows
    p_star = (0.0 - loss) / (gain - loss)
    prob = 1 / (1 + np.exp(-(rows[:, :3] @ w[:3])))
    # The shift, for the strategy-aware ones: the reach of w over the gameable feature.
    shift = 0.5 * abs(w[2]) if cls is not NaiveLogistic else 0.0
    want = np.log(prob / (1 - prob)) >= np.log(p_star / (1 - p_star)) + shift
    got = np.array([rule.accepts(row) for row in rows])
    # Equal but where a loan sits within rounding of its break-even.
    close = np.abs(np.log(prob / (1 - prob)) - np.log(p_star / (1 - p_star)) - shift) < 1e-9
    assert np.array_equal(got[~close], want[~close]) and 0 < want.mean() < 1
    # Control: the same fitted w with one p* for all (the loans' extremes') decides otherwise.
    one = (0.0 - loss.min()) / (gain.max() - loss.min())
    assert not np.array_equal(want, np.log(prob / (1 - prob)) >= np.log(one / (1 - one))
                              + shift)
    a = simulate(game, [cls()], 800, seeds=[1], engine="compiled")
    b = simulate(game, [cls()], 800, seeds=[1], engine="reference")
    assert tables_identical(a, b)


def test_own_break_evens_earn_more_than_one_for_all():
    """On the loan book, each logistic learner earns more with each loan's own break-even
    than bound to the loans' extreme rewards as its two labels (the column dropped), paired
    over 24 seeds of 10,000 rounds; and more than accept-all, which loses money here. The
    margin: the paired gain's 95% interval must lie above 0 (measured on these seeds: +24 ± 12,
    +15 ± 8.5, +12.5 ± 5.7 on about 300: each interval about twice its half-width clear)."""
    from strategic_apple_tasting.metrics import mean_ci

    game, *_ = _loan_book(n=2000, seed=1, base=0.5)
    c = game.contexts
    realized = np.where(c.repaid > 0, c.if_repaid, c.if_defaulted)
    one = game.__class__(dimension=3, delta=0.5, contexts=c._replace(
        rows=np.ascontiguousarray(c.rows[:, :3]), if_repaid=realized,
        if_defaulted=realized.copy(), break_even_column=None),
        agents=SubsetGaming(gameable=np.array([False, False, True])))
    names = ["sa-logistic", "offset-logistic", "naive-logistic", "accept-all"]
    own = simulate(game, names, 10_000, 24).to_pandas()
    base = simulate(one, names, 10_000, 24).to_pandas()

    def last(t):
        return t[t.t == 10_000].pivot(index="seed", columns="learner", values="profit")

    own, base = last(own), last(base)
    assert (own["accept-all"] < 0).all()
    for name in names[:3]:
        diff = (own[name] - base[name]).to_numpy()
        mean, half = mean_ci(diff)
        assert mean - half > 0, (name, mean, half)
        assert (own[name] > own["accept-all"]).all()


try:
    from strategic_apple_tasting.scenarios import lending as _lending

    _lending.german_credit_path()
    HAVE_DATA, WHY = True, ""
except ImportError as exc:
    HAVE_DATA, WHY = False, str(exc)
needs_data = pytest.mark.skipif(not HAVE_DATA, reason=f"German credit not installed ({WHY})")


def _reward_gain(rewards, seeds=5, horizon=10_000, delta=0.25):
    """sa-logistic's profit less SA-OLS's, per seed, on German credit's data game (the engine;
    ``rewards="linear"``: each reward the least-squares rule's own prediction, σ = 0)."""
    from strategic_apple_tasting import simulate
    from strategic_apple_tasting.scenarios.datasets import data_game, load_dataset

    game = data_game(load_dataset("german-credit"), delta=delta, rewards=rewards,
                     sigma=0.0 if rewards == "linear" else None)
    table = simulate(game, ["sa-logistic", "sa-ols"], horizon, list(range(seeds))).to_pandas()
    last = table[table["t"] == horizon].pivot_table(index="seed", columns="learner",
                                                    values="profit")
    return (last["sa-logistic"] - last["sa-ols"]).to_numpy()


@needs_data
@pytest.mark.slow
def test_sa_logistic_earns_more_than_sa_ols_on_real_outcomes_and_not_on_linear_ones():
    """German credit's data game, δ = 0.25, T = 10,000, seeds 0–4: sa-logistic earned more
    than SA-OLS on every seed (by 91.8, 95.6, 85.2, 134.4 and 63.6 in the learners' units,
    +0.2 a repaid loan; mean 94; at T = 20,000 over 10 seeds 190 against 145 per 1,000
    applicants in the data's +1 / −5, benchmarks/RESULTS.md). The test asks for more on every
    seed and 40 more in the mean. The control keeps the applicants and agents but makes the
    linear model exactly right (each reward the least-squares rule's prediction, σ = 0: the
    issue's misspecification experiment): there sa-logistic earned less than SA-OLS on every
    seed (by 16.6 to 23.7), and the same test fails."""
    gain = _reward_gain("recorded")
    assert np.all(gain > 0) and gain.mean() >= 40, gain
    control = _reward_gain("linear")
    assert not (np.all(control > 0) and control.mean() >= 40), control


def _batch_fit(X: np.ndarray, y: np.ndarray, ridge: float, start: np.ndarray) -> np.ndarray:
    """The penalized maximum likelihood: Newton's method with backtracking to convergence."""
    def objective(w):
        s = X @ w
        return float(np.sum(np.logaddexp(0.0, s) - y * s) + ridge * (w @ w) / 2)

    w, value = start.copy(), objective(start)
    for _ in range(200):
        p = 1 / (1 + np.exp(-(X @ w)))
        step = np.linalg.solve((X * (p * (1 - p))[:, None]).T @ X + ridge * np.eye(len(w)),
                               X.T @ (p - y) + ridge * w)
        size = 1.0
        while objective(w - size * step) > value and size > 1e-12:
            size /= 2
        w, value = w - size * step, objective(w - size * step)
        if np.abs(size * step).max() < 1e-10:
            return w
    raise AssertionError("the batch fit did not converge")


@needs_data
def test_the_online_fit_decides_like_the_batch_maximum_likelihood_on_german_credit():
    """The online fit never re-linearizes a point, so it is not the batch maximum likelihood of
    the points it learned. How far it is, where it matters: naive-logistic without gaming plays
    20,000 of German credit's rows (seeds 0–3) through the per-round API; the batch penalized
    maximum likelihood of the very points it learned (same ridge) and the online fit then
    decide differently on 3.9%, 2.3%, 3.6% and 3.3% of the 1,000 applicants (measured). The
    test allows 6%. The control, one IRLS step from w = 0 on the same points (every row
    linearized at log-odds 0), differs on 8.7%, 8.4%, 9.7% and 9.4%, and fails it."""
    from strategic_apple_tasting.scenarios import load_german_credit

    data = load_german_credit()
    # A writable copy: LendingData's arrays are frozen, and a read-only array is another
    # compiled type, which no run of the package compiles (the suite compiles nothing).
    X, rewards = np.array(data.features), data.reward
    cut = math.log(5)  # logit(p*): p* = 5/6 for rewards +0.2 / −1 against r0 = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        learner = NaiveLogistic(delta=0.0, r0=0.0, feedback="apple", repaid=0.2,
                                defaulted=-1.0).reset(data.d, seed)
        learned = []
        for i in rng.integers(0, data.n, size=20_000):
            accepted = learner.act(X[i])
            if learner.update(X[i], accepted, float(rewards[i]) if accepted else None):
                learned.append(i)
        Xs, ys = X[learned], (rewards[learned] > 0).astype(float)
        online = learner.coefficients()
        batch = _batch_fit(Xs, ys, 1.0, online)
        one_step = np.linalg.solve(np.eye(data.d) + 0.25 * Xs.T @ Xs, Xs.T @ (ys - 0.5))

        def differ(w, batch=batch):
            return np.mean((X @ w >= cut) != (X @ batch >= cut))
        assert differ(online) <= 0.06, (seed, differ(online))
        assert differ(one_step) > 0.06, (seed, differ(one_step))
