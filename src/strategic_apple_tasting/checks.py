"""Public checks for learners, in the manner of scikit-learn's ``check_estimator``.

A learner written outside the package (or inside it), compiled or plain Python, passes when it
keeps the protocol's promises: the engine gives, bit for bit, what a round-by-round loop
through the per-round API gives (and a compiled learner gives the same table on the compiled and
the reference path); the same seed gives the same trace; ``reset`` clears everything; a
strategy-aware learner never learns from a point an agent moved; it pickles and continues where
it stood; its hyperparameters round-trip; bad input (an input past the learner's bound too) is
one clear ``ValueError``; inputs the API accepts at the edges of floating point leave every rule
and estimate finite.

* :func:`check_learner` runs every check on an instance (both feedback modes) and raises
  ``AssertionError`` naming the check that failed;
* :func:`learner_checks` yields each (instance, check) pair;
* :func:`parametrize_with_checks` is a pytest decorator over those pairs: one test each.

Each check takes a learner instance and uses clones of it (the instance is not changed), so
learners with parameters are checked as configured. The round-by-round loop, :func:`replay`
(the engine's reference loop, :func:`~strategic_apple_tasting.engine.play`, kept round by
round), is the slow, obviously-correct reference the engine is held to.

Examples
--------
>>> from strategic_apple_tasting.checks import check_learner
>>> from strategic_apple_tasting.learners import AcceptAll
>>> check_learner(AcceptAll(), checks=["check_params_round_trip", "check_bad_input"])
"""

from __future__ import annotations

import contextlib
import functools
import pickle
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from .engine import play, run_one, run_reference, simulate
from .engine.grid import recording_grid
from .game import FEEDBACK, BoundedRatioMixture, Game, GeneralRule, LinearThreshold
from .learners import Learner
from .learners.introspect import model_attributes

#: Rounds of the checks' runs: enough for every learner to leave its first phase.
HORIZON = 400
#: Rounds of the checks' runs of a plain-Python learner. It runs on the reference loop, where
#: a round of a peer library's policy costs milliseconds (its rule is evaluated ~100 times a
#: round by agents' numerical best response): the checks stay the same, at a quarter the size.
PLAIN_HORIZON = 100


def _horizon(learner: Learner) -> int:
    return HORIZON if _compiled(learner) else PLAIN_HORIZON


def _compiled(learner: Learner) -> bool:
    return type(learner).kernels is not None


# -- the reference: a user's round-by-round loop ---------------------------------------------

def replay(game: Game, learner: Learner, seed: int, horizon: int) -> dict[str, Any]:
    """Play the game round by round through the per-round API, as a user would.

    Returns per-round arrays (``accepted``, ``moved``, ``used``, ``regret`` and ``realized``
    increments, ``threshold``) and the run ``learner``. The engine must give the same totals at
    every recorded round (:func:`totals_at_grid`).
    """
    inst = game.instance(seed)
    lr = learner.bind(inst, horizon).reset(game.dimension, inst.rngs["learner"])
    rounds = list(play(inst, lr, horizon))
    res: dict[str, Any] = {key: np.array([getattr(r, key) for r in rounds])
                           for key in ("accepted", "moved", "used", "regret", "realized",
                                       "threshold")}
    res["learner"] = lr
    return res


def totals_at_grid(per_round: dict[str, np.ndarray], horizon: int, per_decade: int = 20,
                   grid: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Cumulative totals of a :func:`replay` at the engine's recorded rounds (summed in order):
    the log-spaced grid, or ``grid`` (the rounds of an engine table, with milestones)."""
    grid = recording_grid(horizon, per_decade) if grid is None else np.asarray(grid)
    out = {}
    for key in ("regret", "realized"):
        acc, cum = 0.0, []
        for v in per_round[key]:
            acc += v  # same left-to-right order as the engine
            cum.append(acc)
        out[key] = np.array(cum)[grid - 1]
    for key in ("accepted", "moved", "used"):
        out[key] = np.cumsum(per_round[key].astype(np.int64))[grid - 1]
    used, moved, accepted = per_round["used"], per_round["moved"], per_round["accepted"]
    out["gamed_as_clean"] = np.cumsum((used & moved).astype(np.int64))[grid - 1]
    # clean: accepted points learned from whose agent did not move (the engine's count)
    out["clean"] = np.cumsum((used & accepted & ~moved).astype(np.int64))[grid - 1]
    return out


def tables_identical(a: Any, b: Any) -> bool:
    """Same columns and bit-identical values (NaN equal to NaN) in two results tables."""
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    for name in a.column_names:
        col_a, col_b = a.column(name), b.column(name)
        if pa.types.is_list(col_a.type):  # a data game's totals by group: null or a list
            col_a, col_b = col_a.combine_chunks(), col_b.combine_chunks()
            if (col_a.is_null().to_pylist() != col_b.is_null().to_pylist()
                    or col_a.value_lengths().to_pylist() != col_b.value_lengths().to_pylist()):
                return False
            col_a, col_b = col_a.flatten(), col_b.flatten()
        x, y = col_a.to_numpy(), col_b.to_numpy()
        if x.dtype.kind == "f":
            if not np.array_equal(x.view(np.int64), y.view(np.int64)):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


@contextlib.contextmanager
def _raises(exc: type[BaseException], match: str) -> Iterator[None]:
    """Like ``pytest.raises`` (the checks do not need pytest)."""
    try:
        yield
    except exc as error:
        assert re.search(match, str(error)), f"{exc.__name__} {str(error)!r} ≠ /{match}/"
    else:
        raise AssertionError(f"did not raise {exc.__name__} matching /{match}/")


def _game(feedback: str, **kw: Any) -> Game:
    return Game(dimension=3, delta=0.2, feedback=feedback, **kw)


# -- the checks --------------------------------------------------------------------------------

def check_engine_matches_per_round_api(learner: Learner, feedback: str) -> None:
    """The engine and a user's round-by-round loop give identical results."""
    game = _game(feedback, r0=0.1 if feedback == "apple" else 0.0)
    horizon = _horizon(learner)
    rep = replay(game, learner.clone(), seed=5, horizon=horizon)
    table = simulate(game, [learner.clone()], horizon, seeds=[5]).to_pydict()
    want = totals_at_grid(rep, horizon, grid=np.asarray(table["t"]))
    for column, key in (("accepted", "accepted"), ("moved", "moved"), ("learned", "used"),
                        ("clean", "clean"), ("gamed_as_clean", "gamed_as_clean"),
                        ("regret", "regret"), ("realized_regret", "realized")):
        assert np.array_equal(table[column], want[key]), f"{column} differs"  # bit for bit
    run = run_one if _compiled(learner) else run_reference
    bound, *_ = run(game, learner.clone(), 5, recording_grid(horizon))
    est_engine, est_loop = bound.estimate(), rep["learner"].estimate()
    assert (est_engine is None) == (est_loop is None), "one path has an estimate"
    if est_engine is not None:
        assert np.array_equal(est_engine, est_loop), "estimates differ"


def check_compiled_matches_reference(learner: Learner, feedback: str) -> None:
    """A compiled learner gives bit-identical tables on the compiled path and on the Python
    reference path (which runs the decision API), agents that move included, in the paper's
    game and with rules published for a period and outcomes learned late."""
    cls = type(learner)
    r0 = 0.1 if feedback == "apple" else 0.0
    # The delayed game the compiled loop can run for this learner (see
    # engine.simulate.compiled_path_refusal): a general rule is published every round, a
    # learner that learns with its policy's draw learns without delay.
    games = (_game(feedback, r0=r0, truthful=0.3),
             _game(feedback, r0=r0, truthful=0.3,
                   delay=0 if cls.tags().published_fields else 3,
                   delay_law="uniform", period=1 if cls.tags().nonlinear else 4))
    for game in games:
        a = simulate(game, [learner.clone()], HORIZON, seeds=[6, 7], engine="compiled")
        b = simulate(game, [learner.clone()], HORIZON, seeds=[6, 7], engine="reference")
        for name in a.column_names:
            assert tables_identical(a.select([name]), b.select([name])), \
                f"{name} differs (delay {game.delay}, period {game.period})"


check_compiled_matches_reference.compiled_only = True  # type: ignore[attr-defined]


def check_same_seed_same_trace(learner: Learner, feedback: str) -> None:
    """Two runs on the same seeds give bit-identical tables."""
    game = _game(feedback)
    a = simulate(game, [learner.clone()], _horizon(learner), seeds=[3, 4])
    b = simulate(game, [learner.clone()], _horizon(learner), seeds=[3, 4])
    assert tables_identical(a, b), "the same seeds gave different tables"


def check_reset_clears_state(learner: Learner, feedback: str) -> None:
    """Reusing a learner object: ``reset`` wipes what the first run learned."""
    game = _game(feedback)
    lr = learner.clone().bind(game.instance(1), HORIZON)
    rounds = 150 if _compiled(learner) else PLAIN_HORIZON
    first = replay(game, lr, seed=1, horizon=rounds)
    again = replay(game, first["learner"], seed=1, horizon=rounds)
    for key in ("accepted", "used", "threshold"):
        assert np.array_equal(first[key], again[key]), f"{key} differs after reset"


def check_never_uses_gamed_point_as_clean(learner: Learner, feedback: str) -> None:
    """A strategy-aware learner never learns from a moved point, in any setting; for any
    learner, the gamed points learned from are among the moved ones, and they and the clean
    points (learned, accepted, unmoved) are among the points learned from."""
    aware = learner.tags().strategy_aware
    # A plain-Python learner runs on the (slower) reference loop: shorter runs, one seed.
    horizon, seeds = (2000, 2) if _compiled(learner) else (2 * PLAIN_HORIZON, 1)
    # Each context model costs a compilation of the engine loop: a learner unaware of gaming
    # is checked for the bookkeeping bound only (a property of the engine's counts, not of the
    # learner), in one setting where agents both move and stay truthful.
    for contexts in (None, BoundedRatioMixture(c0=0.3)) if aware else (None,):
        for truthful in (0.0, 0.5) if aware else (0.5,):
            kw: dict[str, Any] = {"truthful": truthful}
            if contexts is not None:
                kw["contexts"] = contexts
            for delta in (0.05, 0.5) if aware else (0.5,):
                game = Game(dimension=3, delta=delta, feedback=feedback, **kw)
                t = simulate(game, [learner.clone()], horizon, seeds=seeds).to_pydict()
                gamed = np.array(t["gamed_as_clean"])
                clean, learned = np.array(t["clean"]), np.array(t["learned"])
                assert np.all(gamed <= t["moved"]) and np.all(clean + gamed <= learned) \
                    and np.all(clean <= t["accepted"]), "bookkeeping"
                if aware:
                    assert not gamed.any(), f"learned from a gamed point: {contexts}, " \
                                            f"truthful={truthful}, delta={delta}"


def check_pickles(learner: Learner, feedback: str) -> None:
    """A learner pickles, before and after ``reset``, and a revived one continues exactly."""
    inst = _game(feedback).instance(2)
    lr = learner.clone().bind(inst, HORIZON)
    clone = pickle.loads(pickle.dumps(lr))
    assert clone.get_params().keys() == lr.get_params().keys()
    lr.reset(3, np.random.default_rng(0))
    x = np.array([0.3, -0.2, 0.1])
    for _ in range(10):
        a = lr.act(x)
        lr.update(x, a, 0.5 if a else None)
    revived = pickle.loads(pickle.dumps(lr))
    points = np.random.default_rng(1).uniform(-1, 1, size=(16, 3))
    for _ in range(20):
        assert _same_rule(revived.policy(), lr.policy(), points), \
            "a revived learner publishes another rule"
        a = lr.act(x)
        assert revived.act(x) == a
        lr.update(x, a, 0.4 if a else None)
        revived.update(x, a, 0.4 if a else None)


def _states_equal(a: Any, b: Any) -> bool:
    """Two learner states hold the same values, bit for bit (NaN equal to NaN)."""
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, tuple) and hasattr(a, "_fields"):
        return type(a) is type(b) and all(_states_equal(x, y) for x, y in zip(a, b,
                                                                              strict=True))
    return bool(a == b)


def _applicants(feedback: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, size=(n, 3)), rng.normal(0.3, 0.5, size=n)


def check_outcomes_in_any_order(learner: Learner, feedback: str) -> None:
    """Outcomes reported late and in any order leave the learner where reporting them in
    decision order does (to rounding: sums in another order), for a learner whose
    ``outcomes_commute``; any learner takes late reports across publications."""
    lr = learner.clone().bind(_game(feedback).instance(0), HORIZON)
    xs, rewards = _applicants(feedback, 60, 11)
    runs = []
    for order in ("decision", "shuffled"):
        run = lr.clone().reset(3, np.random.default_rng(2))
        for block in range(3):  # three rules, each deciding 20 applicants
            run.desk.publish()
            for i in range(20 * block, 20 * block + 20):
                _decide(run, xs[i], i)
            if block == 2:
                break
            # Half the outcomes arrive before the next rule, the rest after it.
            due = run.desk.pending()[: len(run.desk.pending()) // 2]
            if order == "shuffled":
                due = list(np.random.default_rng(block).permutation(due))
            for i in due:
                run.desk.report(int(i), float(rewards[i]))
        rest = run.desk.pending()
        if order == "shuffled":
            rest = list(np.random.default_rng(9).permutation(rest))
        for i in rest:
            run.desk.report(int(i), float(rewards[i]))
        assert not run.desk.pending()
        runs.append(run)
    if learner.tags().outcomes_commute:
        # The same learner, to rounding: the same counts, estimate and next rule. (Not the
        # same arrays: a QR factor updated in another order may differ in its rows' signs.)
        counts = [_integers(run.state) for run in runs]
        assert len(counts[0]) == len(counts[1]) and all(
            np.array_equal(a, b) for a, b in zip(*counts, strict=True)), \
            "outcomes reported in another order left other counts"
        est = [run.estimate() for run in runs]
        assert (est[0] is None) == (est[1] is None) and (
            est[0] is None or np.allclose(est[0], est[1], rtol=1e-9, atol=1e-12)), \
            "outcomes reported in another order left another estimate"
        rules = [run.desk.publish().rule for run in runs]
        points = np.random.default_rng(1).uniform(-1, 1, size=(16, 3))
        assert np.allclose(rules[0].beta, rules[1].beta, rtol=1e-9, atol=1e-12) and np.isclose(
            rules[0].threshold, rules[1].threshold, rtol=1e-9, atol=1e-12) and all(
            np.isclose(_value(rules[0], p), _value(rules[1], p), rtol=1e-9, atol=1e-12)
            for p in points), "outcomes reported in another order led to another rule"


def _integers(state: Any) -> list[np.ndarray]:
    """The integer arrays of a state (its counts), in field order."""
    if isinstance(state, np.ndarray):
        return [state] if state.dtype.kind in "iub" else []
    if isinstance(state, tuple) and hasattr(state, "_fields"):
        return [a for v in state for a in _integers(v)]
    return []


def _value(rule: LinearThreshold | GeneralRule, x: np.ndarray) -> float:
    """g(x) of a rule: accept iff g(x) ≥ 0."""
    if isinstance(rule, GeneralRule):
        return rule.value(x)
    return float(np.dot(rule.beta, x) - rule.threshold)


def _decide(learner: Learner, x: np.ndarray, i: int) -> Any:
    """Decide applicant ``i``; a learner whose rule reads its live model publishes first."""
    if not learner.tags().holds_rules:
        learner.desk.publish()
    return learner.desk.decide(x, id=i)


def check_saves_and_loads(learner: Learner, feedback: str) -> None:
    """A learner saved mid-run (with outcomes pending) and loaded continues bit-identically,
    or saving refuses in one line (a state held in another library's objects)."""
    import tempfile

    from .persistence import load_learner, save_learner

    lr = learner.clone().bind(_game(feedback).instance(0), HORIZON)
    xs, rewards = _applicants(feedback, 80, 12)
    run = lr.reset(3, np.random.default_rng(4))
    run.desk.publish_every(outcomes=7)
    for i in range(40):
        _decide(run, xs[i], i)
        if i % 3 == 2:  # a third of the outcomes wait for the save
            for j in run.desk.pending()[:2]:
                run.desk.report(j, float(rewards[j]))
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/learner.sat"
        try:
            save_learner(run, path)
        except ValueError as exc:
            assert "cannot be saved" in str(exc) and "\n" not in str(exc), \
                f"saving failed unclearly: {exc}"
            return
        back = load_learner(path, allow=[type(run)])
    assert type(back) is type(run) and repr(back) == repr(run)
    assert back.desk.pending() == run.desk.pending()
    assert _states_equal(back.state, run.state), "the loaded state differs"
    points = np.random.default_rng(1).uniform(-1, 1, size=(16, 3))
    for i in range(40, 80):
        a, b = run.desk.decide(xs[i], id=i), back.desk.decide(xs[i], id=i)
        assert a == b, f"decision {i} differs after loading: {a} vs {b}"
        assert _same_rule(run.desk.rule_in_force().rule, back.desk.rule_in_force().rule, points)
        for j in run.desk.pending()[:1]:
            assert run.desk.report(j, float(rewards[j])) == back.desk.report(j, float(rewards[j]))
    assert _states_equal(back.state, run.state), "the loaded learner drifted"
    est_a, est_b = run.estimate(), back.estimate()
    assert (est_a is None) == (est_b is None)
    assert est_a is None or np.array_equal(est_a, est_b)


def _same_rule(a: LinearThreshold | GeneralRule, b: LinearThreshold | GeneralRule,
               points: np.ndarray) -> bool:
    """Two published rules are the same: equal (compiled rules), or, for rules given by
    Python functions (which cannot be compared), the same linear part and the same g on
    ``points``."""
    if a == b:
        return True
    if not (isinstance(a, GeneralRule) and isinstance(b, GeneralRule)
            and a.function is not None and b.function is not None):
        return False
    return (np.array_equal(a.beta, b.beta) and a.threshold == b.threshold
            and all(a.value(p) == b.value(p) for p in points))


#: The smallest positive double (subnormal), and a tiny normal one (the probe's 1e-300).
_SUBNORMAL, _TINY = 5e-324, 1e-300


def extreme_inputs(d: int, bound: float, n: int, first: str, seed: int = 0
                   ) -> list[tuple[str, np.ndarray, float]]:
    """``n`` applicants (kind, features, outcome) that the API accepts but arithmetic may not:
    eight of kind ``first``, then one of each kind of :data:`EXTREME_KINDS` in turn.

    The kinds: features and outcomes at ±``bound``; zeros; subnormal numbers; a feature of
    10⁻³⁰⁰ beside an ordinary outcome (the probe's applicant, x = [0, …, 0, 10⁻³⁰⁰]); mixed
    scales in one point; one point repeated; collinear points at scales from 10⁻³⁰⁰ to the
    bound; and ordinary points. A fit fails on such a point mostly while a direction is still
    empty, so each kind must also come first after a reset.
    """
    rng = np.random.default_rng(seed)

    def signs() -> np.ndarray:
        return rng.choice([-1.0, 1.0], size=d)

    def outcome() -> float:
        return float(rng.choice([bound, -bound, 1.0, -1.0, 0.0, _SUBNORMAL, _TINY]))

    line, point, value = rng.uniform(-1, 1, d), rng.uniform(-1, 1, d), float(rng.normal())

    def make(kind: str) -> tuple[np.ndarray, float]:
        if kind == "at the bound":
            return bound * signs(), float(rng.choice([bound, -bound]))
        if kind == "zero":
            return np.zeros(d), float(rng.choice([0.0, bound, -bound]))
        if kind in ("subnormal", "tiny"):
            x = np.zeros(d)
            x[rng.integers(d) if kind == "subnormal" else d - 1] = (
                _SUBNORMAL if kind == "subnormal" else _TINY)
            return (x * signs(), outcome()) if kind == "subnormal" else (x, 0.5)
        if kind == "mixed scales":
            return np.resize(rng.permutation([bound, _TINY, _SUBNORMAL, 1.0]), d) * signs(), \
                outcome()
        if kind == "repeated":
            return point.copy(), value
        if kind == "collinear":
            scale = 10.0 ** rng.uniform(-300, 9)
            return line * min(scale, bound), float(np.clip(scale * rng.normal(), -bound, bound))
        return rng.uniform(-1, 1, d), float(rng.normal(0.3, 0.5))

    kinds = [first] * 8 + list(EXTREME_KINDS) * (n // len(EXTREME_KINDS) + 1)
    return [(kind, *make(kind)) for kind in kinds[:n]]


#: The kinds of :func:`extreme_inputs`.
EXTREME_KINDS = ("at the bound", "zero", "subnormal", "tiny", "mixed scales", "repeated",
                 "collinear", "ordinary")


def _finite_rule(rule: LinearThreshold | GeneralRule, x: np.ndarray) -> str | None:
    """What is not finite about a published rule deciding ``x`` (None: nothing)."""
    beta = np.asarray(rule.beta, dtype=float)
    if not (np.all(np.isfinite(beta)) and np.isfinite(rule.threshold)):
        return f"its rule is β={beta.tolist()}, threshold {rule.threshold!r}"
    value = _value(rule, x)
    if not np.isfinite(value):
        return f"its rule's score at x={x.tolist()} is {value!r}"
    return None


def _nan_in_state(learner: Learner) -> str | None:
    """The first field of a learner's state (or array it keeps on itself) holding a NaN: a
    learner with a NaN in its model has stopped learning, whatever it still publishes."""

    def first(value: Any, path: str) -> str | None:
        if isinstance(value, np.ndarray):
            return path if value.dtype.kind in "fc" and np.isnan(value).any() else None
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            for name, field in value._asdict().items():
                found = first(field, f"{path}.{name}")
                if found is not None:
                    return found
        return None

    found = first(learner.state, "state")
    for name, value in model_attributes(learner).items():
        found = found or first(value, name)
    return found


def check_stays_finite(learner: Learner, feedback: str) -> None:
    """Inputs the API accepts, at the edges of floating point (:func:`extreme_inputs`), fed
    through the decision API from a fresh learner, each kind first in its own run: no
    exception or floating-point warning, every published rule, its score at each applicant and
    every estimate stay finite, and no NaN enters the learner's state. A learner that stopped
    here (a NaN in its fit) would stop a decision service for good."""
    with warnings.catch_warnings():
        # An overflow, an invalid operation or a complex number cast to a real one is where a
        # plain-Python learner's (or a peer library's) arithmetic left the finite numbers.
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        _feed_extremes(learner, feedback)


def _feed_extremes(learner: Learner, feedback: str) -> None:
    lr = learner.clone().bind(_game(feedback).instance(0), HORIZON)
    bound = learner.tags().input_bound
    rounds = (240 if _compiled(learner) else 80) // len(EXTREME_KINDS)
    for k, first in enumerate(EXTREME_KINDS):
        run = lr.clone().reset(3, np.random.default_rng(k))
        run.desk.publish_every(outcomes=5)
        for i, (kind, x, y) in enumerate(extreme_inputs(3, bound, rounds, first, seed=k)):
            where = f"applicant {i} of the run that starts {first!r} ({kind}: x={x.tolist()}, " \
                    f"outcome {y!r})"
            try:
                # (A rule that reads the learner's live model is published before each decision.)
                if i % 10 == 0 or not learner.tags().holds_rules:
                    run.desk.publish()
                problem = _finite_rule(run.desk.rule_in_force().rule, x)
                run.desk.decide(x, id=i)
                if i in run.desk.pending():
                    run.desk.report(i, y)
                est = run.estimate()
            except Exception as exc:
                raise AssertionError(f"at {where}: {type(exc).__name__}: {exc}") from exc
            assert problem is None, f"at {where}: {problem}"
            assert est is None or np.all(np.isfinite(est)), \
                f"at {where}: the estimate is {est.tolist()}"
            nan = _nan_in_state(run)
            assert nan is None, f"at {where}: its {nan} holds NaN"
        last = run.desk.publish().rule
        assert _finite_rule(last, x) is None, f"the last rule of the run that starts " \
            f"{first!r} is not finite: {last}"


def check_params_round_trip(learner: Learner, feedback: str) -> None:
    """``get_params`` gives what the constructor took; ``clone`` refuses unknown names."""
    params = learner.get_params()
    assert learner.clone().get_params() == params
    assert type(learner)(**params).get_params() == params
    with _raises(ValueError, f"{re.escape(learner.name)} has no parameter 'nonsense'"):
        learner.clone(nonsense=1)


def check_bad_input(learner: Learner, feedback: str) -> None:
    """Bad calls of the per-round API are one clear error."""
    lr = learner.clone().bind(_game(feedback).instance(0), HORIZON)
    with _raises(RuntimeError, "reset"):
        lr.policy()
    lr.reset(3, np.random.default_rng(0))
    with _raises(ValueError, r"x_obs must have shape \(3,\), got shape \(2,\)"):
        lr.act([1.0, 2.0])
    with _raises(ValueError, "x_obs must be finite"):
        lr.act([1.0, np.nan, 0.0])
    with _raises(ValueError, "reward must be a finite number, got nan"):
        lr.update([0.0, 0.0, 0.0], True, float("nan"))
    with _raises(ValueError, "accepted must be True or False"):
        lr.update([0.0, 0.0, 0.0], "no", None)
    if feedback == "apple":
        with _raises(ValueError, "reward must be None when accepted is False"):
            lr.update([0.0, 0.0, 0.0], False, 1.0)
    # Beyond the input bound: refused in one line naming the entry, the value and the bound.
    bound = learner.tags().input_bound
    big = 2.0 * bound
    with _raises(ValueError, rf"x_obs\[1\] must be at most {re.escape(f'{bound:g}')} in "
                 r"magnitude \(the learner's input bound\), got"):
        lr.act([0.0, -big, 0.0])
    with _raises(ValueError, "reward must be at most .* in magnitude"):
        lr.update([0.0, 0.0, 0.0], True, big)
    with _raises(ValueError, r"x_obs\[2\] must be at most"):
        lr.desk.decide([0.0, 0.0, big])
    with _raises(ValueError, "d must be an integer >= 1"):
        lr.reset(0)


#: Every check, in the order :func:`check_learner` runs them.
CHECKS: tuple[Callable[[Learner, str], None], ...] = (
    check_params_round_trip, check_bad_input, check_pickles, check_reset_clears_state,
    check_same_seed_same_trace, check_engine_matches_per_round_api,
    check_compiled_matches_reference, check_never_uses_gamed_point_as_clean,
    check_outcomes_in_any_order, check_saves_and_loads, check_stays_finite)


def _selected(checks: Sequence[str] | None) -> tuple[Callable[[Learner, str], None], ...]:
    if checks is None:
        return CHECKS
    by_name = {c.__name__: c for c in CHECKS}
    unknown = [c for c in checks if c not in by_name]
    if unknown:
        raise ValueError(f"checks must be among {', '.join(by_name)}, got {unknown[0]!r}")
    return tuple(by_name[c] for c in checks)


def _cases(learner: Learner, feedback: Iterable[str], checks: Sequence[str] | None
           ) -> Iterator[tuple[Callable[[Learner, str], None], str]]:
    """(check, feedback mode) pairs for ``learner``, after checking the arguments."""
    if not isinstance(learner, Learner):
        raise ValueError(f"learner must be a Learner instance, got {learner!r}")
    for mode in feedback:
        if mode not in FEEDBACK:
            raise ValueError(f"feedback must be among {', '.join(FEEDBACK)}, got {mode!r}")
        if mode not in learner.tags().supported_feedback:
            continue  # a mode the learner does not learn under (its supported_feedback)
        for check in _selected(checks):
            if getattr(check, "compiled_only", False) and not _compiled(learner):
                continue  # a plain-Python learner has no compiled path to compare
            yield check, mode


def learner_checks(learner: Learner, *, feedback: Iterable[str] = FEEDBACK,
                   checks: Sequence[str] | None = None
                   ) -> Iterator[tuple[Learner, Callable[[], None], str]]:
    """Each check of ``learner`` as (the learner, a call that runs it, its name with the
    feedback mode)."""
    for check, mode in _cases(learner, feedback, checks):
        yield learner, functools.partial(check, learner, mode), f"{check.__name__}[{mode}]"


def check_learner(learner: Learner, *, feedback: Iterable[str] = FEEDBACK,
                  checks: Sequence[str] | None = None) -> None:
    """Run every check (or the named ``checks``) on ``learner`` in each feedback mode.

    Raises
    ------
    AssertionError
        Naming the learner and the check that failed, with the reason.
    ValueError
        ``learner`` is not a :class:`~strategic_apple_tasting.learners.Learner`, or a check or
        feedback mode is unknown.
    """
    for lr, run, name in learner_checks(learner, feedback=feedback, checks=checks):
        try:
            run()
        except AssertionError as exc:
            raise AssertionError(f"{lr!r} fails {name}: {exc}") from exc


def parametrize_with_checks(learners: Sequence[Learner], *,
                            feedback: Iterable[str] = FEEDBACK) -> Any:
    """A pytest decorator: one test per learner × check × feedback mode, taking ``learner``
    and ``check`` (call ``check(learner)``), as scikit-learn's ``parametrize_with_checks``.

    Examples
    --------
    ::

        from strategic_apple_tasting.checks import parametrize_with_checks

        @parametrize_with_checks([MyLearner(), MyLearner(step=0.5)])
        def test_my_learner(learner, check):
            check(learner)
    """
    import pytest  # only the test's process needs pytest

    modes = tuple(feedback)
    cases = [pytest.param(learner, functools.partial(check, feedback=mode),
                          id=f"{learner!r}-{check.__name__}[{mode}]")
             for learner in learners for check, mode in _cases(learner, modes, None)]
    return pytest.mark.parametrize("learner, check", cases)
