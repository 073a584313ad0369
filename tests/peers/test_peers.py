"""The peer adapters (MABWiser, river, Vowpal Wabbit): the public checks, the published rule is
the library's own decision, a randomized policy's draws are frozen for the round, the same seed
gives the same results, and a missing library is one clear error.

Every public check runs on every adapter, through ``parametrize_with_checks``. Each adapter
runs its library's Python every round (a tenth of a millisecond or more), so the checks run a
plain-Python learner at their smaller size
(:data:`strategic_apple_tasting.checks.PLAIN_HORIZON`).
"""

from __future__ import annotations

import copy
import pickle
import sys

import numpy as np
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.checks import parametrize_with_checks, replay, tables_identical
from strategic_apple_tasting.learners import learner_class
from strategic_apple_tasting.learners.introspect import check_configurations
from strategic_apple_tasting.peers import (
    PEERS,
    MABWiserLinGreedy,
    MABWiserLinTS,
    MABWiserLinUCB,
    RiverLinUCBDisjoint,
    VWCBExploreADF,
)
from strategic_apple_tasting.peers._common import (
    TESTED,
    check_fields,
    examples_need,
    library_available,
)


def _needs(cls):
    return pytest.mark.skipif(not library_available(cls.library),
                              reason=f"{cls.library} is not installed")


AVAILABLE = [cls for cls in PEERS.values() if library_available(cls.library)]
CONFIGURATIONS = [lr for cls in AVAILABLE for lr in check_configurations(cls)]
ADAPTERS = [pytest.param(cls, id=name, marks=_needs(cls)) for name, cls in PEERS.items()]


@parametrize_with_checks(CONFIGURATIONS)
def test_public_checks(learner, check):
    check(learner)


def test_every_adapter_is_registered_by_name():
    for name, cls in PEERS.items():
        assert cls.name == name
        assert learner_class(name) is cls  # the entry point, not an import path


# -- the published rule is the library's decision ------------------------------------------

def _features(z):
    return np.append(np.asarray(z, float), 1.0)


def _next_decision(lr):
    """The library's own decision at z were z this round's context, from copies taken before
    the round's rule is published (call it before ``lr.policy()``)."""
    box = lr.state
    if isinstance(lr, MABWiserLinUCB | MABWiserLinTS | MABWiserLinGreedy):
        mab = copy.deepcopy(box.mab)
        return lambda z: copy.deepcopy(mab).predict(_features(z)[None, :]) == 1
    if isinstance(lr, RiverLinUCBDisjoint):
        policy = copy.deepcopy(box.policy)

        def pull(z):
            ctx = {f"x{i}": float(v) for i, v in enumerate(z)} | {"bias": 1.0}
            return copy.deepcopy(policy).pull([1, 0], ctx) == 1
        return pull
    if isinstance(lr, VWCBExploreADF):
        draw = copy.deepcopy(lr.generator).random()  # the learner's next draw is the round's u
        ws = box.workspace.ws

        def sample(z):  # VW's tutorial sampler (sample_custom_pmf), with the round's draw
            shared = "shared |s " + " ".join(f"x{i}:{float(v)!r}" for i, v in enumerate(z))
            pmf = ws.predict([shared, "|a accept", "|a reject"])
            scale = 1 / sum(pmf)
            total = 0.0
            for action, p in enumerate(pmf):
                total += p * scale
                if total > draw:
                    return action == 0  # action 0 is accept
            return False
        return sample
    raise AssertionError(type(lr))


def _trained(cls, feedback, rounds=40, seed=0, **params):
    """An adapter after ``rounds`` rounds of its own decisions on random contexts."""
    lr = cls(r0=0.1 if feedback == "apple" else 0.0, feedback=feedback, **params)
    lr.reset(2, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 100)
    theta1, theta0 = np.array([0.8, -0.4]), np.array([0.1, 0.3])
    for _ in range(rounds):
        x = rng.uniform(-1, 1, 2)
        a = lr.act(x)
        r = float((theta1 if a else theta0) @ x + 0.1 * rng.standard_normal())
        lr.update(x, a, r if (a or feedback == "bandit") else None)
    return lr


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
@pytest.mark.parametrize("cls", ADAPTERS)
def test_rule_is_the_library_decision_on_random_points(cls, feedback):
    lr = _trained(cls, feedback)
    points = np.random.default_rng(7).uniform(-1.5, 1.5, size=(25, 2))
    split = 0
    for _ in range(3):
        decide = _next_decision(lr)
        rule = lr.policy()
        got = [rule.accepts(z) for z in points]
        assert got == [bool(decide(z)) for z in points]
        split += 0 < sum(got) < len(got)
        assert [lr.act(z) for z in points] == got
        lr.update(points[0], got[0], 0.5 if (got[0] or feedback == "bandit") else None)
    assert split, "no round's rule split the points: the test saw no boundary"


@pytest.mark.parametrize("cls", ADAPTERS)
def test_rule_is_the_library_decision_where_agents_land(cls):
    """Movers land within ulps of the boundary: there too the library decides as the rule."""
    game = Game(dimension=2, delta=0.3, feedback="bandit")
    inst = game.instance(3)
    lr = cls().bind(inst, 80).reset(2, inst.rngs["learner"])
    movers = 0
    for _ in range(80):
        decide = _next_decision(lr)
        rule = lr.policy()
        x = inst.next_context()
        x_obs, moved = inst.next_response(rule, x)
        a = lr.act(x_obs)
        assert a == bool(decide(x_obs))
        if moved:
            movers += 1
            assert a, "a mover is accepted"
        r1, r0 = inst.next_rewards(x)
        lr.update(x_obs, a, r1 if a else r0)
    assert movers >= 3


def test_mabwiser_linucb_rule_is_its_expectations_gap():
    lr = _trained(MABWiserLinUCB, "bandit")
    rule = lr.policy()
    mab = lr.state.mab
    for z in np.random.default_rng(1).uniform(-1, 1, size=(10, 2)):
        e = mab.predict_expectations(_features(z)[None, :])
        assert rule.value(z) == e[1] - e[0]
        assert rule.accepts(z) == (mab.predict(_features(z)[None, :]) == 1)


# -- randomized policies: frozen within a round ----------------------------------------------

RANDOMIZED = [pytest.param(cls, params, id=cls.name, marks=_needs(cls)) for cls, params in (
    (MABWiserLinTS, {}), (MABWiserLinGreedy, {"epsilon": 0.5}), (VWCBExploreADF, {}),
    (RiverLinUCBDisjoint, {}))]


@pytest.mark.parametrize(("cls", "params"), RANDOMIZED)
def test_randomized_rule_is_frozen_within_a_round_and_redrawn_the_next(cls, params):
    rounds = 0 if cls is RiverLinUCBDisjoint else 30  # river is random only at ties: no data
    lr = _trained(cls, "bandit", rounds=rounds, **params)
    points = np.random.default_rng(2).uniform(-1, 1, size=(20, 2))
    rules = []
    for _ in range(12):
        rule = lr.policy()
        first = [rule.value(z) for z in points]
        rule.gradient(points[0])  # evaluations elsewhere change nothing
        again = [rule.value(z) for z in points[::-1]][::-1]
        assert first == again
        assert [lr.act(z) for z in points] == [v >= 0 for v in first]
        rules.append(tuple(v >= 0 for v in first))
        lr.update(points[0], False, None)  # the round ends; nothing learned
    assert len(set(rules)) > 1, "every round drew the same rule"


def test_river_breaks_ties_once_a_round():
    lr = RiverLinUCBDisjoint(r0=0.0, feedback="bandit").reset(2, np.random.default_rng(0))
    decisions = []
    for _ in range(20):
        rule = lr.policy()  # before any data every point ties: all accepted or none
        got = {rule.accepts(z) for z in np.random.default_rng(3).uniform(-1, 1, (10, 2))}
        assert len(got) == 1
        decisions.append(got.pop())
        lr.update([0.1, 0.2], False, None)
    assert 0 < sum(decisions) < 20


@pytest.mark.parametrize("cls", ADAPTERS)
def test_rule_is_in_force_for_its_round_only(cls):
    lr = _trained(cls, "apple", rounds=3)
    rule = lr.policy()
    rule.value(np.zeros(2))
    lr.update([0.1, 0.1], False, None)
    with pytest.raises(RuntimeError, match="published for round 4; the learner has learned"):
        rule.value(np.zeros(2))


# -- determinism, pickling ---------------------------------------------------------------------

@pytest.mark.parametrize("cls", ADAPTERS)
def test_same_seed_same_results(cls):
    game = Game(dimension=2, delta=0.2, feedback="apple", r0=0.05)
    a = simulate(game, [cls()], 40, seeds=[1, 2])
    b = simulate(game, [cls()], 40, seeds=[1, 2])
    assert tables_identical(a, b)
    c = simulate(game, [cls()], 40, seeds=[3, 4])
    assert not tables_identical(a, c)


@pytest.mark.parametrize("cls", ADAPTERS)
def test_reset_clears_state(cls):
    game = Game(dimension=2, delta=0.2, feedback="bandit")
    lr = cls().bind(game.instance(1), 30)
    first = replay(game, lr, seed=1, horizon=30)
    again = replay(game, first["learner"], seed=1, horizon=30)
    for key in ("accepted", "moved", "used", "threshold"):
        assert np.array_equal(first[key], again[key]), key


@pytest.mark.parametrize("cls", ADAPTERS)
def test_revived_learner_continues_exactly(cls):
    lr = _trained(cls, "bandit", rounds=15)
    revived = pickle.loads(pickle.dumps(lr))
    rng = np.random.default_rng(4)
    for _ in range(10):
        x = rng.uniform(-1, 1, 2)
        rule, again = lr.policy(), revived.policy()
        assert np.array_equal(rule.beta, again.beta) and rule.threshold == again.threshold
        assert rule.value(x) == again.value(x)
        a = lr.act(x)
        assert revived.act(x) == a
        lr.update(x, a, 0.3)
        revived.update(x, a, 0.3)
    est, est2 = lr.estimate(), revived.estimate()
    assert (est is None) == (est2 is None)
    assert est is None or np.array_equal(est, est2)


@pytest.mark.parametrize("cls", ADAPTERS)
def test_apple_tasting_feeds_r0_as_the_reject_arm(cls):
    lr = cls(r0=0.2, feedback="apple").reset(2, np.random.default_rng(0))
    lr.policy()
    assert lr.update([0.3, 0.1], False, None) is True  # learned: arm 0, reward r0
    lr.policy()
    assert lr.update([0.3, 0.1], True, 0.7) is True
    bandit = cls(r0=0.0, feedback="bandit").reset(2, np.random.default_rng(0))
    bandit.policy()
    assert bandit.update([0.3, 0.1], False, None) is False  # nothing observed, nothing learned


# -- hyperparameters and the missing library ------------------------------------------------

@pytest.mark.parametrize(("cls", "params", "message"), [
    pytest.param(MABWiserLinUCB, {"alpha": -1.0}, "alpha must be a finite number >= 0",
                 marks=_needs(MABWiserLinUCB)),
    pytest.param(MABWiserLinTS, {"l2_lambda": 0.0}, "l2_lambda must be a finite number > 0",
                 marks=_needs(MABWiserLinTS)),
    pytest.param(MABWiserLinGreedy, {"epsilon": 2.0}, "epsilon must be a finite number >= 0 "
                 "and <= 1", marks=_needs(MABWiserLinGreedy)),
    pytest.param(RiverLinUCBDisjoint, {"burn_in": -1}, "burn_in must be an integer >= 0",
                 marks=_needs(RiverLinUCBDisjoint)),
    pytest.param(VWCBExploreADF, {"cb_type": "dr"}, "cb_type must be one of mtr, got 'dr'",
                 marks=_needs(VWCBExploreADF)),
    pytest.param(MABWiserLinUCB, {"intercept": 1}, "intercept must be True or False",
                 marks=_needs(MABWiserLinUCB)),
])
def test_bad_hyperparameters_are_one_clear_error(cls, params, message):
    lr = cls(r0=0.0, feedback="apple", **params)  # stored as given
    assert all(lr.get_params()[k] == v for k, v in params.items())
    with pytest.raises(ValueError, match=message):
        lr.reset(2, 0)


@pytest.mark.parametrize("cls", ADAPTERS)
def test_unbound_adapter_names_what_is_missing(cls):
    with pytest.raises(ValueError, match="needs r0 and feedback"):
        cls().reset(2, 0)


@pytest.mark.parametrize("cls", ADAPTERS)
def test_missing_library_is_one_line_naming_the_extra(cls, monkeypatch):
    made = cls(r0=0.0, feedback="apple")  # made while the library is there
    monkeypatch.setitem(sys.modules, cls.library, None)  # now `import <library>` fails
    pattern = (rf"learner {cls.name} needs the optional library '{cls.library}' .*; install it "
               r"with: pip install 'strategic-apple-tasting\[peers\]'")
    with pytest.raises(ValueError, match=pattern) as info:
        cls(r0=0.0, feedback="apple")
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=pattern):
        made.reset(2, 0)  # before any work, whatever path the instance came by
    with pytest.raises(ValueError, match=pattern):
        learner_class(cls.name)(r0=0.0, feedback="apple")


def test_examples_are_skipped_without_their_library():
    class Documented:
        """Text.

        >>> 1 + 1
        2
        """

    marked = examples_need("no_such_library_for_sat_tests")(Documented)
    assert ">>> 1 + 1  # doctest: +SKIP" in marked.__doc__
    assert "Text." in marked.__doc__


def test_the_library_internals_the_adapters_use_are_still_there():
    """river keeps its tie-break generator and per-arm models in private attributes, which the
    adapter reads (to freeze the round's tie-break and to give an estimate): this fails loudly
    when an upgrade moves them."""
    river_bandit = pytest.importorskip("river.bandit")
    policy = river_bandit.LinUCBDisjoint(seed=1)
    assert hasattr(policy, "_rng") and hasattr(policy._rng, "getstate")
    assert hasattr(policy, "_bayes_lin_regs")


def test_a_library_whose_private_fields_moved_is_refused_in_one_line(monkeypatch):
    """The adapters check, when a learner is made, every private field they read: a release
    that renamed one fails loudly there, naming the library, its version and the tested
    range, instead of failing later or reading something else."""
    pytest.importorskip("river.bandit")
    from strategic_apple_tasting.peers import river as adapter

    RiverLinUCBDisjoint(r0=0.0, feedback="apple").reset(2, 0)  # control: today's river passes
    monkeypatch.setattr(adapter, "PRIVATE_MODEL", (*adapter.PRIVATE_MODEL, "_renamed"))
    with pytest.raises(RuntimeError, match=r"^river \S+: its linear_model\."
                                           r"BayesianLinearRegression has no '_renamed', which "
                                           r"the adapter reads \(tested with "
                                           r"river>=0\.21,<0\.27\): pip install "
                                           r"'river>=0\.21,<0\.27'$") as err:
        RiverLinUCBDisjoint(r0=0.0, feedback="apple").reset(2, 0)
    assert "\n" not in str(err.value)
    with pytest.raises(RuntimeError, match=r"^mabwiser .*: its MAB has no '_imp'"):
        check_fields("mabwiser", object(), "MAB", ("_imp",))


def test_the_peer_libraries_are_pinned_to_the_tested_versions():
    """pyproject.toml's peers extra pins every peer library above and below, to the ranges the
    adapters are tested with (TESTED); the installed libraries are inside them."""
    import importlib.metadata
    import tomllib
    from pathlib import Path

    from packaging.requirements import Requirement

    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    for extra in ("peers", "test"):
        pins = {r.name: r.specifier for r in map(Requirement, extras[extra])
                if r.name in TESTED}
        assert {name: str(spec) for name, spec in pins.items()} == {
            name: str(Requirement(name + spec).specifier) for name, spec in TESTED.items()}
        assert all(any(s.operator == "<" for s in spec) for spec in pins.values()), extra
    for name, spec in TESTED.items():
        if library_available(name):
            version = importlib.metadata.version(name)
            assert Requirement(name + spec).specifier.contains(version), (name, version)


# -- learning without partial_fit's overhead, rules answered through a twin --------

MABWISER = [pytest.param(cls, id=cls.name, marks=_needs(cls))
            for cls in (MABWiserLinUCB, MABWiserLinTS, MABWiserLinGreedy)]


@pytest.mark.parametrize("cls", MABWISER)
def test_mabwiser_learns_as_its_partial_fit_does(cls):
    """The adapter learns through MABWiser's per-arm ridge update, not ``MAB.partial_fit``
    (joblib and deep copies: a millisecond a call): the same numbers, bit for bit, as a MAB
    driven through its public API with the same seed, contexts, decisions and rewards (one
    prediction a round, then partial_fit), including LinTS's samples afterwards."""
    from mabwiser.mab import MAB

    from strategic_apple_tasting.peers._common import seed_from

    lr = cls(r0=0.1, feedback="apple").reset(2, np.random.default_rng(5))
    policy = lr.state.mab.learning_policy
    ref = MAB(arms=[1, 0], learning_policy=policy, seed=seed_from(np.random.default_rng(5)))
    ref.fit(np.zeros(0, dtype=int), np.zeros(0), np.zeros((0, 3)))
    rng = np.random.default_rng(6)
    for _ in range(60):
        x = rng.uniform(-1, 1, 2)
        a = lr.act(x)
        reward = float(0.5 * x[0] + 0.1 * rng.standard_normal()) if a else 0.1
        lr.update(x, a, reward if a else None)
        context = _features(x)[None, :]
        assert (ref.predict(context) == 1) == a
        ref.partial_fit([1 if a else 0], [reward], context)
    ours, theirs = lr.state.mab._imp.arm_to_model, ref._imp.arm_to_model
    for arm in (1, 0):
        for field in ("A", "A_inv", "Xty", "beta"):
            assert np.array_equal(getattr(ours[arm], field), getattr(theirs[arm], field)), field
    for z in rng.uniform(-1, 1, (5, 2)):  # the generators too: the next draws agree
        ctx = _features(z)[None, :]
        assert lr.state.mab.predict_expectations(ctx) == ref.predict_expectations(ctx)


TWINNED = [pytest.param(cls, id=cls.name, marks=_needs(cls)) for cls in
           (MABWiserLinUCB, MABWiserLinTS, MABWiserLinGreedy, RiverLinUCBDisjoint)]


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
@pytest.mark.parametrize("cls", TWINNED)
def test_the_twin_accepts_only_where_the_library_accepts(cls, feedback):
    """Agents answer the round's compiled twin: its g is the library's to within its margin
    (10⁻⁹ of the terms' size), below it, on 400 random points of each of 20 rounds."""
    from strategic_apple_tasting.game.policies import RULES

    lr = _trained(cls, feedback, rounds=30, **({"epsilon": 0.3} if cls is MABWiserLinGreedy
                                               else {}))
    rng = np.random.default_rng(8)
    for _ in range(20):
        rule = lr.policy()
        twin = rule.twin
        assert twin is not None
        g = RULES[type(twin)]
        for z in rng.uniform(-1.5, 1.5, (400, 2)):
            ours, theirs = g(twin, z, np.empty(2), False), rule.value(z)
            assert not ours >= 0 > theirs, (z, ours, theirs)
            assert abs(ours - theirs) <= 1e-7 * (1 + abs(theirs)), (z, ours, theirs)
        x = rng.uniform(-1, 1, 2)
        a = lr.act(x)
        lr.update(x, a, 0.4 if (a or feedback == "bandit") else None)


VW = [pytest.param(VWCBExploreADF, id=VWCBExploreADF.name, marks=_needs(VWCBExploreADF))]


@pytest.mark.parametrize("feedback", ["apple", "bandit"])
@pytest.mark.parametrize("cls", VW)
def test_vw_twin_is_squarecbs_half_space(cls, feedback):
    """VW's round rule "p(x') > u" is the half-space h(x') > F⁻¹(u) the adapter identifies from
    VW's pmf: on 400 random points of each of 40 rounds the twin accepts only where VW
    accepts, and where the two disagree the point lies within the twin's margin of its
    boundary (twice the margin: the identified h is VW's float32 arithmetic to about 4·10⁻⁵
    of its terms, measured over 20,000 rounds, and the margin takes 10⁻⁴ off)."""
    from strategic_apple_tasting.game.policies import RULES
    from strategic_apple_tasting.peers.vowpalwabbit import MARGIN

    lr = _trained(cls, feedback, rounds=30)
    rng = np.random.default_rng(8)
    split = 0
    for _ in range(40):
        rule = lr.policy()
        twin = rule.twin
        assert twin is not None
        g = RULES[type(twin)]
        size = np.abs(twin.w).sum() + abs(twin.offset)
        accepted = 0
        for z in rng.uniform(-1.5, 1.5, (400, 2)):
            ours, theirs = g(twin, z, np.empty(2), False), rule.value(z)
            assert not ours >= 0 > theirs, (z, ours, theirs)
            if (ours >= 0) != (theirs >= 0):
                assert abs(ours) <= 2 * MARGIN * size, (z, ours, theirs)
            accepted += theirs >= 0
        split += 0 < accepted < 400
        x = rng.uniform(-1, 1, 2)
        a = lr.act(x)
        lr.update(x, a, 0.4 if (a or feedback == "bandit") else None)
    assert split >= 10, "too few rounds' rules split the points: the test saw no boundary"
    assert lr.state.unidentified == 0


@pytest.mark.parametrize("cls", VW)
def test_vw_probes_parsed_once_predict_as_fresh_text(cls):
    """The probes are parsed once and predicted on every round: after 60 rounds of learning
    VW gives them the pmf it gives the same text parsed afresh."""
    lr = _trained(cls, "apple", rounds=60)
    lr.policy()
    box = lr.state
    assert box.parsed is not None
    for z, parsed in zip(box.probes, box.parsed, strict=True):
        assert box.workspace.ws.predict(parsed) == box.workspace.ws.predict(box.example(z))


@pytest.mark.parametrize("cls", VW)
def test_vw_rule_off_a_hyperplane_has_no_twin(cls, monkeypatch):
    """The control: a pmf that is not SquareCB's function of an affine h (here h = 4·x₀²)
    fails the check point, so the round has no twin and agents answer VW's rule itself."""
    from strategic_apple_tasting.peers.vowpalwabbit import _VWBox

    lr = _trained(cls, "apple", rounds=10)
    box = lr.state
    assert lr.policy().twin is not None

    class Curved:
        def parse(self, lines):
            return lines

        def predict(self, lines):
            x0 = float(lines[0].split("x0:")[1].split()[0])
            h = 4.0 * x0 * x0
            return [1.0 - 1.0 / (2.0 + h), 1.0 / (2.0 + h)]

    monkeypatch.setattr(box.workspace, "ws", Curved())
    monkeypatch.setattr(box, "parsed", None)
    assert _VWBox.twin(box) is None
    assert box.unidentified == 1


@pytest.mark.parametrize("cls", [p for p in MABWISER if p.values[0] is not MABWiserLinUCB])
def test_a_linear_round_asks_mabwiser_only_near_its_boundary(cls, monkeypatch):
    """LinTS's and LinGreedy's round is linear once drawn: a point clear of the boundary is
    decided from the round's draws without MABWiser's prediction, a point on it by MABWiser
    (whose decisions both are: the tests above compare them with a MAB's own)."""
    lr = _trained(cls, "apple", rounds=30,
                  **({"epsilon": 0.0} if cls is MABWiserLinGreedy else {}))  # no coin round
    box = lr.state
    calls = []
    predict = box.mab.predict_expectations
    monkeypatch.setattr(box.mab, "predict_expectations",
                        lambda ctx: calls.append(1) or predict(ctx))
    rule = lr.policy()
    w, offset = rule.twin.w, box.drawn[1]
    assert np.any(w != 0)
    clear = -(offset + 1.0) * w / (w @ w)  # g = -1
    on = -offset * w / (w @ w)  # g = 0 to rounding
    rule.value(clear)
    assert calls == []
    rule.value(on)
    assert calls == [1]
