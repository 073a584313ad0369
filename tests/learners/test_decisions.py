"""The decision API: rules published for a period, decisions by id, outcomes reported late."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from strategic_apple_tasting.learners import SAOLS, Exp3SAE, LinUCB, make_learner


def _saols(feedback: str = "apple") -> SAOLS:
    return SAOLS(delta=0.1, r0=0.0, feedback=feedback).reset(2, rng=0)


def test_the_per_round_api_is_the_decision_api_reporting_at_once():
    """A learner driven by decide/report (publishing each round, reporting at once) and one
    driven by policy/act/update publish the same rules and end in the same state, bit for
    bit; the control: reporting one round late changes the rules."""
    rng = np.random.default_rng(3)
    xs = rng.uniform(-1, 1, size=(200, 2))
    rewards = rng.normal(0.2, 0.5, size=200)
    lockstep, desk, late = _saols(), _saols(), _saols()
    rules_a, rules_b, rules_c = [], [], []
    for i, x in enumerate(xs):
        rules_a.append(lockstep.policy())
        a = lockstep.act(x)
        lockstep.update(x, a, rewards[i] if a else None)
        rules_b.append(desk.publish().rule)
        d = desk.decide(x)
        if d.accepted:
            desk.report(d.id, rewards[i])
        rules_c.append(late.publish().rule)
        late.decide(x)
        for j in late.pending()[:-1]:  # everything but this round's outcome
            late.report(j, rewards[j])
    assert rules_a == rules_b
    assert np.array_equal(lockstep.state.fits, desk.state.fits)
    assert rules_a != rules_c


def test_a_late_outcome_is_judged_by_the_rule_its_decision_was_made_under():
    """SA-OLS learns an accepted point only if lazy agents cannot have moved it: strictly
    above the boundary of the rule the applicant answered (a mover lands on it). An applicant
    accepted under accept-all is clean; the next rule's boundary may pass right through its
    point. Reported after that rule is published, it is still learned (the control: judged by
    the new rule, it is not)."""
    xs = np.random.default_rng(5).uniform(-1, 1, size=(6, 2))
    probe = _saols()
    probe.publish()
    for x in xs:
        probe.report(probe.decide(x).id, float(x[0]))
    second = probe.publish().rule
    assert np.linalg.norm(second.beta) > 0  # the learner left accept-all
    # A point on the new boundary, where a gamed point would land.
    x = second.beta * (second.threshold / float(second.beta @ second.beta))

    learner = _saols()
    first = learner.publish().rule
    assert first.threshold == -1.0 and not first.beta.any()  # accept-all
    for x_i in xs:
        learner.decide(x_i)
    late = learner.decide(x)
    assert late.accepted and late.version == 1
    for i in range(len(xs)):
        learner.report(i, float(xs[i, 0]))
    again = learner.publish().rule
    assert again == second  # the late applicant's outcome has not been learned yet
    control = _saols()
    control.publish()
    for x_i in xs:
        control.report(control.decide(x_i).id, float(x_i[0]))
    control.publish()
    assert not control._learn(again, x, True, 0.3)  # judged by the new rule: not clean
    assert learner.report(late.id, 0.3)  # judged by its own rule: clean, learned


def test_a_late_outcome_of_exp3_sae_updates_the_expert_that_was_played():
    """EXP3-SAE learns the weight of the expert it played, with that expert's probability:
    reported after another expert was drawn for the next rule, an outcome must still go to
    the expert of its decision. The same weights as learning it at once; the control:
    learning it with the current draw in place changes the other expert instead."""
    from strategic_apple_tasting.learners.lazy_experts import expert_log_weight

    def fresh():
        return Exp3SAE(horizon=1000, sigma=0.1, delta=0.1, r0=0.0,
                       feedback="apple").reset(2, rng=1)

    x = np.array([0.4, 0.1])
    at_once, late, wrong = fresh(), fresh(), fresh()
    decisions = []
    for lr in (at_once, late, wrong):
        lr.publish()
        played = lr.state.played.copy()
        decisions.append(lr.decide(x))
    assert all(d.accepted for d in decisions)
    at_once.report(decisions[0].id, 0.9)
    for lr in (at_once, late, wrong):  # the same draws: publish until another expert is drawn
        while np.array_equal(lr.publish() and lr.state.played, played):
            pass
    now = late.state.played.copy()
    late.report(decisions[1].id, 0.9)
    wrong._learn(wrong.desk_record().rules[1].rule, x, True, 0.9)  # the current draw in place

    def weights(lr):
        return expert_log_weight(lr.state.experts, played), expert_log_weight(lr.state.experts,
                                                                              now)
    assert weights(late) == weights(at_once)
    assert weights(at_once)[0] < 0 and weights(at_once)[1] == 0
    assert weights(wrong)[0] == 0 and weights(wrong)[1] < 0


def test_cadence_publishes_every_k_outcomes_and_every_period():
    learner = _saols().publish_every(outcomes=3)
    learner.publish()
    versions = []
    for i in range(9):
        learner.decide([0.5, 0.5])
        learner.report(i, 0.2)
        versions.append(learner.rule_in_force().version)
    assert versions == [1, 1, 2, 2, 2, 3, 3, 3, 4]
    timed = _saols().publish_every(period=10.0)
    timed.publish(time=0)
    seen = [timed.decide([0.5, 0.5], time=t).version for t in (1, 9, 10, 15, 19.5, 20, 31)]
    assert seen == [1, 1, 2, 2, 2, 3, 4]
    counted = _saols().publish_every(period=4)  # no times: the clock counts decisions
    assert [counted.decide([0.5, 0.5]).version for _ in range(9)] == [1] * 4 + [2] * 4 + [3]


def test_rejections_under_apple_tasting_take_no_report_and_bandit_ones_do():
    apple = _saols()
    apple.publish()
    for x in np.random.default_rng(0).uniform(-1, 1, size=(5, 2)):
        apple.report(apple.decide(x).id, 0.5)
    apple.publish()
    xs = np.random.default_rng(1).uniform(-1, 1, size=(40, 2))
    decisions = [apple.decide(x) for x in xs]
    rejected = [d for d in decisions if not d.accepted]
    assert rejected and len(rejected) < len(decisions)
    assert apple.pending() == [d.id for d in decisions if d.accepted]
    with pytest.raises(ValueError, match=f"decision {rejected[0].id} has no outcome to report: "
                                         "it was a rejection under apple tasting"):
        apple.report(rejected[0].id, 0.1)
    bandit = _saols("bandit")
    ids = [bandit.decide(x).id for x in xs[:5]]
    assert bandit.pending() == ids  # every outcome is awaited


def test_bad_calls_are_one_clear_error():
    learner = _saols()
    with pytest.raises(RuntimeError, match="reset"):
        SAOLS().publish()
    first = learner.decide([0.1, 0.2], id="loan-1", time=5)
    assert first.version == 1 and first.time == 5.0  # the first decision publishes
    cases = [
        (lambda: learner.report("loan-9", 0.1), "decision 'loan-9' is unknown"),
        (lambda: learner.decide([0.1, 0.2], id="loan-1"), "id 'loan-1' is already taken"),
        (lambda: learner.decide([0.1, 0.2], id=1.5), "id must be an integer or a string"),
        (lambda: learner.decide([0.1, 0.2], id=True), "id must be an integer or a string"),
        (lambda: learner.decide([0.1], id=2), r"x_obs must have shape \(2,\)"),
        (lambda: learner.decide([0.1, np.nan], id=2), "x_obs must be finite"),
        (lambda: learner.decide([0.1, 0.2], time=4), "time must not go back"),
        (lambda: learner.decide([0.1, 0.2], time=np.inf), "time must be a finite number"),
        (lambda: learner.report("loan-1", float("nan")), "outcome must be a finite number"),
        (lambda: learner.report("loan-1", None), "outcome must be a finite number"),
        (lambda: learner.publish_every(outcomes=0), "outcomes must be an integer >= 1"),
        (lambda: learner.publish_every(period=-1), "period must be > 0"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    assert learner.pending() == ["loan-1"]  # nothing above changed anything
    assert learner.report("loan-1", 0.4) in (True, False)
    with pytest.raises(ValueError, match="decision 'loan-1' has no outcome to report"):
        learner.report("loan-1", 0.4)  # reported twice


def test_the_published_rule_is_a_small_json_document():
    learner = make_learner("sa-ols", delta=0.2, r0=0.1, feedback="apple").reset(2, rng=0)
    doc = learner.publish(time=3.5).to_json()
    assert json.loads(json.dumps(doc)) == doc
    assert doc == {"version": 1, "kind": "linear", "beta": [0.0, 0.0], "threshold": -1.0,
                   "probability": 1.0, "effective": 3.5, "learner": "sa-ols",
                   "params": {"delta": 0.2, "r0": 0.1, "feedback": "apple", "agents": None,
                              "accept_when_locked": False, "warmup": None}}
    general = LinUCB(alpha=1.0, r0=0.0, feedback="apple").reset(2, rng=0)
    for _ in range(3):
        general.publish()
        general.report(general.decide([0.3, 0.3]).id, 0.5)
    assert general.publish().to_json()["kind"] == "general"


def test_a_rule_held_for_a_period_does_not_change_as_outcomes_arrive():
    """LinUCB's rule depends on its state: the published rule is a copy, so outcomes learned
    while it is in force do not change the decisions it makes."""
    learner = LinUCB(alpha=2.0, r0=0.0, feedback="apple").reset(2, rng=0)
    learner.publish()
    for x in np.random.default_rng(0).uniform(-1, 1, size=(10, 2)):
        learner.report(learner.decide(x).id, 0.5)
    rule = learner.publish().rule
    probes = np.random.default_rng(1).uniform(-1, 1, size=(50, 2))
    before = [rule.value(p) for p in probes]
    for x in np.random.default_rng(2).uniform(-1, 1, size=(30, 2)):
        d = learner.decide(x)
        if d.accepted:
            learner.report(d.id, -1.0)
    assert [learner.rule_in_force().rule.value(p) for p in probes] == before
    assert [learner.publish().rule.value(p) for p in probes] != before  # the control


def test_the_order_check_fails_a_learner_whose_outcomes_do_not_commute():
    """The control of ``check_outcomes_in_any_order``: the unknown-horizon scheme restarts
    from no data at each doubling, so the order of outcomes matters; claiming that they
    commute fails the check (and the class says they do not)."""
    from strategic_apple_tasting.checks import check_learner
    from strategic_apple_tasting.learners import UnknownHorizon

    class Claims(UnknownHorizon):
        tags = dataclasses.replace(UnknownHorizon.tags(), outcomes_commute=True)

    assert UnknownHorizon.tags().outcomes_commute is False
    with pytest.raises(AssertionError, match="outcomes reported in another order"):
        check_learner(Claims(), checks=["check_outcomes_in_any_order"], feedback=["apple"])
    check_learner(UnknownHorizon(), checks=["check_outcomes_in_any_order"], feedback=["apple"])


def test_a_decision_made_elsewhere_is_recorded_under_its_rule_as_if_decided_here():
    """A service's worker decides from the published rule and the learner records it: the
    learner ends where deciding itself would have taken it. Controls: a decision the rule would
    not have made, and one under a rule no longer held, are refused."""
    rng = np.random.default_rng(5)
    xs, rewards = rng.uniform(-1, 1, size=(120, 2)), rng.normal(0.1, 0.5, size=120)
    here, there = _saols(), _saols()
    for k, (x, reward) in enumerate(zip(xs, rewards, strict=True)):
        if k % 10 == 0:
            rule = here.publish(time=k)
            assert there.publish(time=k).rule == rule.rule
        d = here.decide(x, id=k, time=k)
        made = there.rule_in_force()
        r = there.record(x, k, made.rule.accepts(x), made.version, time=k)
        assert (r.accepted, r.version) == (d.accepted, d.version)
        if d.accepted:
            assert here.report(k, reward) == there.report(k, reward)
    assert np.array_equal(here.state.fits, there.state.fits)
    x = xs[0]
    in_force = there.rule_in_force()
    with pytest.raises(ValueError, match=r"(rejects|accepts) its context"):
        there.record(x, "wrong", not in_force.rule.accepts(x), in_force.version, time=200)
    with pytest.raises(ValueError, match=r"rule version 1 is not held \(held: \[12\]\)"):
        there.record(x, "stale", True, 1, time=200)


def test_a_held_rule_outlives_its_successors_until_released():
    learner = _saols()
    first = learner.publish()
    learner.hold(first.version)
    learner.publish()
    learner.publish()
    x = np.array([0.3, 0.1])
    accepted = first.rule.accepts(x)
    assert learner.record(x, "late", accepted, first.version, time=5).version == 1
    if accepted:
        learner.report("late", 0.5)
    learner.release(first.version)
    with pytest.raises(ValueError, match="rule version 1 is not held"):
        learner.record(x, "later", accepted, first.version, time=6)
    with pytest.raises(ValueError, match="is not held by hold"):
        learner.release(first.version)
    with pytest.raises(ValueError, match="cannot be kept"):
        learner.hold(first.version)


def test_an_adopted_rule_decides_and_its_outcomes_are_learned_against_it():
    """``adopt`` publishes a given linear rule (a lender's scorecard) as the next
    version; decisions follow it and outcomes are learned; the learner then publishes its own
    next rule. A learner whose update reads what its own rule drew refuses."""
    from strategic_apple_tasting.game.policies import LinearThreshold

    desk = _saols()
    given = LinearThreshold(np.array([1.0, 0.0]), 0.25)
    adopted = desk.adopt(given)
    assert adopted.version == 1 and desk.rule_in_force().rule == given
    rng = np.random.default_rng(4)
    for x in rng.uniform(-1, 1, size=(60, 2)):
        d = desk.decide(x)
        assert d.accepted == (x[0] >= 0.25)
        if d.accepted:
            desk.report(d.id, float(x[0] - 0.5 * x[1]))
    learned = desk.publish()
    assert learned.version == 2 and learned.rule != given  # its own rule, from the outcomes
    with pytest.raises(ValueError, match="learns from what its own rule drew"):
        Exp3SAE(delta=0.1, r0=0.0, horizon=10, sigma=0.1, feedback="apple").reset(
            2, rng=0).adopt(given)


def test_numpy_integer_ids_are_ids_as_publish_every_takes_numpy_integers():
    """decide, record and report take a numpy integer id as the int it is (they refused it,
    or called its decision unknown, while publish_every took numpy integers)."""
    learner = make_learner("sa-ols", delta=0.1, r0=0.0, feedback="apple").reset(2, 0)
    learner.publish_every(outcomes=np.int64(3))
    decision = learner.decide([0.5, 0.5], id=np.int64(5))
    assert decision.accepted and decision.id == 5 and type(decision.id) is int
    assert learner.report(np.int64(5), 1.0) is not None
    learner.record([0.5, 0.5], np.int64(77), True, learner.publish().version, 1.0)
    assert learner.pending() == [77] and type(learner.pending()[0]) is int
    with pytest.raises(ValueError, match=r"^id must be an integer or a string, got True$"):
        learner.decide([0.5, 0.5], id=True)  # a boolean is no id, numpy's or Python's
