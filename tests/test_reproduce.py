"""`sat reproduce --quick`, end to end: the bundled sweeps, the claims table and its reports.

Run once per test session, shared by the xdist workers (the first to get the lock runs it; the
others read its directory). Seeds are fixed, so every figure and verdict is
determined: the verdicts below are the quick run's, and each claim's control must do what
the row says it does (a negative control fails the claim's check, a positive one passes it).
"""

from __future__ import annotations

import fcntl
import os

import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.experiments.claims import (
    CHECKS,
    INCONCLUSIVE,
    NO,
    NOT_DISCRIMINATING,
    PARTS,
    RUNS,
    YES,
    check_claims,
    part_names,
)
from strategic_apple_tasting.experiments.spec import check_spec

#: One worker runs the reproduction and every test that reads it, first (make test schedules
#: whole modules; the conftest starts with this one), the other worker the rest meanwhile.
RUN_FIRST = True

#: The quick run's verdict of every claim, by the start of its text (the peers' rows need the
#: peers extra, which the test extra installs). At the quick sizes EXP3-SAE
#: at d = 2 has not reached its asymptotic regime (T ≤ 10⁶; its bandit/apple comparison of
#: slopes needs no regime), and its explicit bounds at both d are above accept-all's regret:
#: those rows cannot discriminate yet (the full run's can).
QUICK_VERDICTS = {
    "SA-OLS regret grows at most like √T": YES,
    # The count's 99.7% interval (301 wide at T = 50,000) is not narrower than 2% of the
    # expected count (282): at the quick size it cannot tell c1 from c1 ± 1% (the full run's can).
    "clean points ≈ d + c1·(T − d)": NOT_DISCRIMINATING,
    "SA-OLS's estimation error falls like 1/√t": YES,
    "OLS on every accepted point is inconsistent (SA-OLS's shifted rule)": YES,
    "OLS on every accepted point is inconsistent (naive greedy, r0 = 0)": NO,
    "naive-greedy (ignores gaming) has linear regret": YES,
    "linucb (ignores gaming) has linear regret": YES,
    "lin-ts (ignores gaming) has linear regret": YES,
    "epsilon-greedy (ignores gaming) has linear regret": YES,
    "unknown-horizon is within 4× of the better of SA-OLS and ETC": NO,
    "SA-OLS regret under the explicit bound": YES,
    # The paper's main text states c2 ≥ (3/4 − δ/2 − δ²/4)³; at d = 3, δ = 0.3 c2 is 0.167, the
    # bound 0.193. lem:spheres's bound, with the factor 1/(3d) the main text drops, holds.
    "c2(d, δ) ≥ (3/4 − δ/2 − δ²/4)³ (the main text's bound on c2)": NO,
    "c2(d, δ) ≥ (3/4 − δ/2 − δ²/4)³ / (3d) (lem:spheres's bound on c2)": YES,
    "unknown-horizon regret under the explicit bound": YES,
    "SA-OLS's rate under bandit feedback": YES,
    "ETC's commit phase: regret under the proof's commit term": YES,
    # ETC's commit-phase regret is near zero (it commits to a near-perfect rule): the slope's
    # interval, [−0.275, 0.548], holds a constant's 0 and T^⅔'s ⅔ alike.
    "ETC's commit-phase regret grows at most like T^⅔": NOT_DISCRIMINATING,
    "ETC's rate under bandit feedback": YES,
    "EXP3-SAE regret grows at most like T^((d+1)/(d+2)) on an oblivious sequence (d = 1)": YES,
    "…where SA-OLS's regret is linear (d = 1)": YES,
    "EXP3-SAE regret under the explicit bound (d = 1)": NOT_DISCRIMINATING,
    "EXP3-SAE regret grows at most like T^((d+1)/(d+2)) on an oblivious sequence (d = 2)":
        NOT_DISCRIMINATING,
    "…where SA-OLS's regret is linear (d = 2)": YES,
    "EXP3-SAE regret under the explicit bound (d = 2)": NOT_DISCRIMINATING,
    "EXP3-SAE's rate under bandit feedback": YES,
    "trembling hand: clean points ≈ d + c1(d, δ + γ)·(T − d)": YES,
    "trembling hand: SA-OLS regret grows at most like √T (δ → δ + γ)": YES,
    "ellipsoidal cost A = diag(1, 0.25): SA-OLS regret grows at most like √T": YES,
    "mixture contexts (c0 = 0.5): SA-OLS regret grows at most like √T": YES,
    "mixture contexts (c0 = 0.5): SA-OLS regret under the explicit bound": YES,
    "over-estimating δ by Δ costs regret in proportion to Δ": NO,
    "SA-OLS with r0 > 0 can lock into learning nothing": YES,
    "accept_when_locked=True removes the lock-in": YES,
    # At T = 5,000 Vowpal Wabbit's SquareCB still explores so much that it is worse than SA-OLS
    # either way (1.17× without gaming); MABWiser's and river's gaps are shown to come from the
    # gaming. At the full T = 10⁵ all three read "yes".
    "mabwiser:LinUCB, a peer library's own algorithm": YES,
    "river:LinUCBDisjoint, a peer library's own algorithm": YES,
    "vw:cb_explore_adf, a peer library's own algorithm": NOT_DISCRIMINATING,
    # Staleness apart from the warm-up a delay or a period imposes (against SA-OLS with the
    # same warm-up) is below a tenth of the additive term D × accept-all's regret a round; the
    # whole extra regret, the control, is the full term.
    "after the same warm-up, learning outcomes D rounds late costs SA-OLS less than": YES,
    "after the same warm-up, holding each rule for P rounds costs SA-OLS less than": YES,
    "learning from gamed points (offset-ols) reduces the cost of a small c1: ≥ 2× lower "
    "regret than SA-OLS wherever c1 < 0.05": YES,
    "…and no worse than SA-OLS where c1 ≥ 0.05 (r0 = 0.1)": YES,
    "the offset is what makes gamed points usable": YES,
    # Offset OLS's limit: one offset is a biased model where the density is not symmetric
    # about the boundary (d = 2: 4× worse than SA-OLS); the uniform ball is the positive control.
    "offset-ols is no worse than SA-OLS when the context density is not symmetric": NO,
    # On the orthogonal traps EXP3-SAE's explicit bound is above accept-all's regret at every
    # quick horizon, so its rate cannot be judged; sampled-sae learns at d = 2 and 5, not at
    # d = 10 (a 2^-10 share of rules is right: about one of its 1024 experts), nor on
    # stochastic contexts at √T (SA-OLS, the positive control, does).
    "EXP3-SAE regret grows at most like T^((d+1)/(d+2)) on an oblivious sequence (orthogonal "
    "traps, d = 2)": NOT_DISCRIMINATING,
    "EXP3-SAE regret grows at most like T^((d+1)/(d+2)) on an oblivious sequence (orthogonal "
    "traps, d = 5)": NOT_DISCRIMINATING,
    "EXP3-SAE regret grows at most like T^((d+1)/(d+2)) on an oblivious sequence (orthogonal "
    "traps, d = 10)": NOT_DISCRIMINATING,
    "sampled-sae (O(N·d) a round) learns on orthogonal traps, where a 2^−d share of rules is "
    "right (d = 2,": YES,
    "sampled-sae (O(N·d) a round) learns on orthogonal traps, where a 2^−d share of rules is "
    "right (d = 5,": YES,
    "sampled-sae (O(N·d) a round) learns on orthogonal traps, where a 2^−d share of rules is "
    "right (d = 10,": NO,
    "sampled-sae's regret grows at most like √T on stochastic contexts": NO,
    # German credit under the holdout protocol: the rules in force at T scored on held-out
    # applicants. At 10 seeds the differences are about ±40 per 1,000: the controls (gaming
    # switched off; the recorded outcomes) straddle 0, so no row can read "yes" or "no".
    "the best strategy-aware learner earns more than naive greedy and naive logistic "
    "where gaming costs them money (German credit, δ = 0.25)": NOT_DISCRIMINATING,
    "the best strategy-aware learner earns more than naive greedy and naive logistic "
    "where gaming costs them money (German credit, δ = 0.5)": INCONCLUSIVE,
    "the best strategy-aware learner earns more than naive greedy and naive logistic "
    "where gaming costs them money (German credit, δ = 1)": NOT_DISCRIMINATING,
    "where the linear model is exactly right SA-OLS earns more than naive greedy, and "
    "on real outcomes it does not (German credit, δ = 0.25)": NOT_DISCRIMINATING,
    "where the linear model is exactly right SA-OLS earns more than naive greedy, and "
    "on real outcomes it does not (German credit, δ = 0.5)": NOT_DISCRIMINATING,
    "where the linear model is exactly right SA-OLS earns more than naive greedy, and "
    "on real outcomes it does not (German credit, δ = 1)": NOT_DISCRIMINATING,
    # A lender's backtest: offset-logistic against the incumbent scorecard raised by the
    # gaming allowance and refitted, on new applicants each met once; the incumbent kept as it
    # is (the control) loses to both at every budget.
    **{f"deploying offset-logistic earns at least what a lender earns today with {words} "
       f"(German credit backtest, δ = {delta})": YES
       for words in ("its scorecard with the cutoff raised by δ·‖w_gameable‖",
                     "that scorecard refitted on its known outcomes every 25 loans")
       for delta in ("0.25", "0.5", "1")},
    # The budget estimated from the applicants costs a constant that is more than
    # half of SA-OLS's tiny regret at the quick T (told 2δ or δ/2, the control, costs 30 to 150
    # times it); with heterogeneous budgets, a truthful share or on German credit the fixed
    # wrong δ passes as well.
    "SA-OLS estimating δ from the applicants has regret within 1.5× of SA-OLS told δ "
    "(stochastic game, δ = 0.1)": NO,
    "SA-OLS estimating δ from the applicants has regret within 1.5× of SA-OLS told δ "
    "(stochastic game, δ = 0.3)": NO,
    "SA-OLS estimating δ from the applicants has regret within 1.5× of SA-OLS told δ "
    "(stochastic game, δ = 0.5)": NO,
    "with heterogeneous budgets (uniform in [0.1, δ]), SA-OLS estimating δ": NOT_DISCRIMINATING,
    "with a truthful fraction 0.3, SA-OLS estimating δ": NOT_DISCRIMINATING,
    "on German credit, SA-OLS estimating δ": NOT_DISCRIMINATING,
    # On the engine SA-OLS's learned rules vary from seed to seed: at the quick T the gap in
    # distance moved per applicant straddles 0 (scenarios/burden.py's exact curves show it).
    "a strategy-robust rule puts a larger social burden on the group with lower scores":
        INCONCLUSIVE,
    # Regret's dependence on the bounds' constants, one axis at a time about the stochastic
    # game. SA-OLS's regret after the warm-up grows like σ² (1.8 [1.68, 1.97]): each round
    # costs about the squared estimation error; the bound's σ¹ is loose by a factor ∝ 1/σ.
    "SA-OLS's regret grows in σ no faster than": NO,
    # Across d (c1·c2 moving with it at δ = 0.3) the exponent, 1.58 [1.43, 1.79], is the
    # bound's own 1.60 within its interval.
    "SA-OLS's regret grows in d no faster than": INCONCLUSIVE,
    # Far weaker than the bound in both: 0.57 [0.39, 0.85] in 1/(c1·c2), 0.48 [0.20, 0.71]
    # in 1/c0, against 1.
    "SA-OLS's regret grows in 1/(c1·c2) no faster than": YES,
    "SA-OLS's regret grows in 1/c0 no faster than": YES,
    # ETC's exploration costs accept-all's regret a round, which falls like 1/√d: 0.69
    # against the bound's 1.06.
    "ETC's regret grows in d no faster than": YES,
    # The unknown-horizon learner under bandit feedback: the same exponent as under apple
    # tasting in its explore-then-commit epochs and after its switch to SA-OLS; thm:best-both's
    # factor 4 fails as it does under apple tasting (τ* is where two loose bounds cross).
    "unknown-horizon (explore-then-commit epochs, τ* past T)'s rate under bandit feedback": YES,
    "under bandit feedback, unknown-horizon is within 4× of the better of SA-OLS and ETC": NO,
    "unknown-horizon (sharp game: SA-OLS after τ*)'s rate under bandit feedback": YES,
    # The paper's lemmas checked directly. lem:lb's explicit bound holds with a factor 3 at
    # d = 3, δ = 0.3 (four times it, the control, does not), and c1/g grows with d for the
    # main text's Θ rate (the control, without c1's loss of √d, falls).
    "c1(d, δ) ≥ (1 − δ)^((d+1)/2)/(√π (d + 1))": YES,
    "c1(d, δ) ≥ Θ((1 − δ)^(d/2)/d²)": YES,
    # lem:leq0 never fails on SA-OLS's 3,988 rounds; told δ/2 it fails on hundreds.
    "every round, ⟨θ̂^(a*) − θ̂^(a), x⟩ ≤ 0": YES,
    # lem:l2-bandit-1's bound at the stochastic game (60/√t) is 38 times SA-OLS's error, and
    # above shifted-ols's plateau (0.088) until t ≈ 470,000: at T = 50,000 the control passes
    # too. At d = 2, δ = 0.3, σ = 0.01 (3.5/√t) it is 17 times SA-OLS's error and shifted-ols
    # is over it on a third of the (seed, round) pairs.
    "with probability 1 − γ, ‖θ − θ̂_(t+1)‖ ≤ (2/(c0 c1 c2))·sqrt(14 d σ² log(2d/γ)/t) "
    "(γ = 0.05; d = 3": NOT_DISCRIMINATING,
    "with probability 1 − γ, ‖θ − θ̂_(t+1)‖ ≤ (2/(c0 c1 c2))·sqrt(14 d σ² log(2d/γ)/t) "
    "(γ = 0.05; d = 2": YES,
    # No moved report passes cond:clean or cond:clean-app (with its rounding band); the
    # condition with δ/2, or without γ, passes thousands.
    "a report with ⟨β, x'⟩ > δ‖β‖ + r0 was not moved": YES,
    "γ-trembling agents (γ = 0.05, largest overshoot)": YES,
    # Told δ' > δ, SA-OLS's error still falls like 1/√t (slopes −0.45 to −0.46); shifted-ols's
    # −0.39 [−0.47, −0.31] misses −½, narrowly at δ = 0.1 (its bias is small there).
    **{f"SA-OLS told δ' = {v} against agents of δ = 0.1": YES for v in ("0.15", "0.2", "0.3")},
    # With trembling agents EXP3-SAE decides as with lazy ones (an overshoot stays accepted):
    # its slope is adversarial-d1's, 0.651 [0.629, 0.675] against ≤ 0.693; SA-OLS's is 1.
    "EXP3-SAE regret grows at most like T^((d+1)/(d+2)) on an oblivious sequence with "
    "γ-trembling agents (γ = 0.05, d = 1)": YES,
    # Against the adaptive adversary, at T = 10⁴…10⁵ EXP3.P-SAE (Auer et al.'s γ, α) has not
    # begun to learn (regret 1.8·10⁴ against accept-all's 9.5·10³: its row says so, and why);
    # EXP3-SAE's explicit bound (13,548) is above accept-all's regret: neither regime is
    # reached. (At the full size, T to 10⁷, EXP3-SAE's is and its row reads "yes"; EXP3.P-SAE
    # has still not begun to learn.)
    "EXP3.P-SAE's regret against an adaptive adversary": NOT_DISCRIMINATING,
    "EXP3-SAE (plain EXP3, guaranteed against oblivious sequences only) against the same "
    "adaptive adversary": NOT_DISCRIMINATING,
}


@pytest.fixture(scope="session")
def quick(tmp_path_factory):
    # The parent of an xdist worker's base temporary directory is shared by this session's
    # workers alone; without xdist the parent is shared by every session on the machine (a stale
    # run of another checkout would be read), so the session's own base directory is used.
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out = shared / "reproduce-quick"
    with open(shared / "reproduce-quick.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = out / "claims.md"
        if not done.exists():
            assert main(["reproduce", "--quick", "--out", str(out), "--workers", "1"]) == 0
    return out, *check_claims(out, part_names("quick"))


def _verdict_of(claims, start):
    found = [c for c in claims if c.claim.startswith(start)]
    assert len(found) == 1, (start, [c.claim for c in claims])
    return found[0]


def test_reproduce_quick_writes_the_table_the_page_and_a_report_per_part(quick):
    out, claims, _ = quick
    table = (out / "claims.md").read_text()
    assert table.startswith("| claim |") and table.count("\n| ") == len(claims)  # a line each
    assert "Consistency checks" in table
    page = (out / "index.html").read_text()
    assert page.count("<tr>") == len(claims) + 1
    assert page.count("measured: <code>") == sum(c.label == "measured" for c in claims) > 0
    for part in part_names("quick"):
        assert (out / part / "report" / "index.html").exists(), part
        assert f'href="{part}/report/index.html"' in page


def test_quick_verdicts(quick):
    _, claims, _ = quick
    assert len(claims) == len(QUICK_VERDICTS)
    got = {start: _verdict_of(claims, start).verdict for start in QUICK_VERDICTS}
    assert got == QUICK_VERDICTS


@pytest.mark.parametrize("start", list(QUICK_VERDICTS))
def test_each_claims_control_does_what_its_row_says(quick, start):
    """A negative control must fail the claim's check (so the check can fail); a positive one
    must pass it (so the check can pass). Where it does not, the row must not read "yes"."""
    _, claims, _ = quick
    claim = _verdict_of(claims, start)
    if claim.verdict in (YES, NO) and not claim.regime:
        assert claim.control_outcome == claim.control.must, claim.control_text
    if claim.control_outcome != claim.control.must:
        assert claim.verdict in (NOT_DISCRIMINATING, INCONCLUSIVE, NO)


def test_the_papers_failing_claims_say_why(quick):
    _, claims, _ = quick
    for claim in claims:
        if claim.verdict == NO:
            assert claim.why and claim.reason == claim.why


def test_consistency_checks_hold(quick):
    _, _, consistency = quick
    assert consistency and all(k.holds for k in consistency), [
        (k.what, k.measured) for k in consistency if not k.holds]


def test_bundled_specs_are_valid_and_every_part_is_checked():
    checked = {name for names, _ in CHECKS for name in names}
    for size in ("quick", "full"):
        assert set(PARTS[size]) | set(RUNS) == checked
        for raw in PARTS[size].values():
            assert check_spec(raw).cells


def test_reproduce_refuses_bad_flags_and_foreign_directories(capsys, tmp_path):
    assert main(["reproduce", "--workers", "0"]) == 2
    assert "--workers must be an integer >= 1, got '0'" in capsys.readouterr().err
    # A part directory written by another version's bundled sweeps: one line, no --extend.
    spec = tmp_path / "other.toml"
    spec.write_text('horizon = 100\n[game]\ndimension = 2\n[[learners]]\nname = "oracle"\n')
    assert main(["sweep", str(spec), "--out", str(tmp_path / "stochastic"),
                 "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "holds results of other sweeps than this version's bundled 'stochastic'" in err
    assert "--extend" not in err


# -- the measured learner swapped for one that must not pass: the verdict flips ---------------
def _with(table, measured, stand_in):
    """``table`` with ``measured``'s results replaced by a copy of ``stand_in``'s."""
    import pyarrow as pa
    import pyarrow.compute as pc

    learner = table.column("learner")
    rest = table.filter(pc.not_equal(learner, measured))
    copy = table.filter(pc.equal(learner, stand_in))
    copy = copy.set_column(copy.schema.get_field_index("learner"), "learner",
                           pa.array([measured] * copy.num_rows))
    return pa.concat_tables([rest, copy])


def _one(rows, start):
    return _verdict_of([r for r in rows if hasattr(r, "verdict")], start)


def _parts(quick, *names):
    from strategic_apple_tasting.experiments.sweep import load

    out, _, _ = quick
    return [load(out / n) for n in names]


def test_a_peer_exactly_as_good_as_sa_ols_fails_the_strict_check(quick):
    from strategic_apple_tasting.experiments.claims import peers

    (table,) = _parts(quick, "peers")
    start = "river:LinUCBDisjoint, a peer library's own algorithm"
    assert _one(peers.peers(table), start).verdict == YES
    swapped = _one(peers.peers(_with(table, "river:LinUCBDisjoint", "sa-ols")), start)
    assert swapped.measured.value == 1.0 and swapped.verdict == NO


def test_no_worse_tells_the_offset_from_no_offset(quick):
    from strategic_apple_tasting.experiments.claims import unclean

    (table,) = _parts(quick, "unclean")
    start = "…and no worse than SA-OLS where c1 ≥ 0.05"
    assert _one(unclean.unclean(table), start).verdict == YES
    assert _one(unclean.unclean(_with(table, "offset-ols", "shifted-ols")), start).verdict == NO


@pytest.mark.parametrize("d", [2, 5])
def test_sampled_sae_swapped_for_exp3_sae_does_not_learn_on_the_orthogonal_traps(quick, d):
    from strategic_apple_tasting.experiments.claims import efficient

    (table,) = _parts(quick, "adversarial-orthogonal")
    start = f"sampled-sae (O(N·d) a round) learns on orthogonal traps, where a 2^−d share of " \
            f"rules is right (d = {d}"
    assert _one(efficient.sampled(table), start).verdict == YES
    swapped = _with(table, "sampled-sae", "exp3-sae")
    assert _one(efficient.sampled(swapped), start).verdict == NO


def test_sa_ols_in_place_of_sampled_sae_has_the_rate_on_stochastic_contexts(quick):
    """The row reads "no" for sampled-sae; SA-OLS in its place passes the same check."""
    from strategic_apple_tasting.experiments.claims import efficient

    (table,) = _parts(quick, "sampled-stochastic")
    start = "sampled-sae's regret grows at most like √T on stochastic contexts"
    assert _one(efficient.stochastic(table), start).verdict == NO
    swapped = _with(table, "sampled-sae", "sa-ols")
    assert _one(efficient.stochastic(swapped), start).verdict == YES


@pytest.mark.parametrize(("part", "axis", "check"), [("delays", "delay", "delays"),
                                                     ("periods", "period", "periods")])
def test_staleness_without_the_same_warm_up_is_the_warm_up_cost(quick, part, axis, check):
    """Against SA-OLS with the paper's warm-up instead of the same longer one, the "staleness"
    is the whole extra regret, the full additive term: the row reads "no". With the same
    warm-up it reads "yes"."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from strategic_apple_tasting.experiments.claims import delays

    table, warmups = _parts(quick, part, "warm-ups")
    rule = getattr(delays, check)
    (claim,) = [r for r in rule(table, warmups) if hasattr(r, "verdict")]
    assert claim.verdict == YES
    paper = table.filter(pc.and_(pc.equal(table.column("learner"), "sa-ols"),
                                 pc.equal(table.column(axis), 0 if axis == "delay" else 1)))
    labels = sorted(set(warmups.column("learner").to_pylist()))
    fake = pa.concat_tables([paper.set_column(paper.schema.get_field_index("learner"), "learner",
                                              pa.array([lb] * paper.num_rows))
                             for lb in labels])
    (swapped,) = [r for r in rule(table, fake) if hasattr(r, "verdict")]
    assert swapped.verdict == NO and swapped.measured.low > 0.5


def test_every_part_has_a_measured_cost_for_the_time_left():
    from strategic_apple_tasting.experiments.claims.parts import COST

    assert set(COST) == set(PARTS["quick"]) and all(v > 0 for v in COST.values())


def test_the_lending_check_does_not_pass_with_naive_logistic_as_every_strategy_aware_one(quick):
    """Every strategy-aware learner's held-out results replaced by naive-logistic's: at δ = 1,
    where offset-logistic's lead over naive greedy passes the check (the row is not
    discriminating for its control alone), the check no longer passes."""
    from strategic_apple_tasting.experiments.claims import lending

    (table,) = _parts(quick, "lending")
    start = ("the best strategy-aware learner earns more than naive greedy and naive "
             "logistic where gaming costs them money (German credit, δ = 1)")
    assert _one(lending.lending(table), start).outcome == "pass"
    swapped = table
    for aware in lending.AWARE:
        swapped = _with(swapped, aware, "naive-logistic")
    assert _one(lending.lending(swapped), start).outcome != "pass"
    # Where naive-logistic is the better naive learner the gain is an exact tie on every seed,
    # which "more than" fails.
    ties = [row for row in lending.lending(swapped)
            if hasattr(row, "verdict") and "naive-logistic's (the better" in row.about]
    assert ties and all(row.measured.low == row.measured.high == 0.0
                        and row.outcome == "fail" for row in ties)


def test_the_backtest_row_reads_no_with_the_kept_incumbent_as_the_recommended_learner(quick):
    """offset-logistic's backtest results replaced by the incumbent kept as it is (which gamed
    applicants pass): the rows against the raised incumbent read "no" where the real learner's
    read "yes", so the check can fail on the same seeds."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from strategic_apple_tasting.experiments.claims import backtest

    out, _, _ = quick
    part = backtest.GERMAN
    table = part.load(out / part.name)
    arm = table.column("arm")
    copy = table.filter(pc.equal(arm, "incumbent"))
    copy = copy.set_column(copy.schema.get_field_index("arm"), "arm",
                           pa.array([backtest.RECOMMENDED] * copy.num_rows, type=arm.type))
    swapped = pa.concat_tables([table.filter(pc.not_equal(arm, backtest.RECOMMENDED)), copy])
    start = "deploying offset-logistic earns at least what a lender earns today with its scorecard"
    for delta in ("0.25", "1"):
        real = [r for r in part.rows(table)
                if r.claim.startswith(start) and r.claim.endswith(f"δ = {delta})")]
        fake = [r for r in part.rows(swapped)
                if r.claim.startswith(start) and r.claim.endswith(f"δ = {delta})")]
        assert [r.verdict for r in real] == [YES] and [r.verdict for r in fake] == [NO]


def test_a_backtest_part_not_run_to_its_end_is_named_not_read(tmp_path):
    from strategic_apple_tasting.experiments.claims import backtest

    with pytest.raises(ValueError, match=r"holds no backtest at δ = 0.25, 0.5, 1: run `sat "
                                         r"reproduce --parts backtest`"):
        backtest.GERMAN.load(tmp_path)


def test_every_row_says_what_stands_behind_it_and_names_ideas(quick):
    """A label on every row; the baselines that ignore gaming are measured, not the paper's
    statements; no source or claim points at a tracker ("issue ...") instead of an idea."""
    from strategic_apple_tasting.experiments.claims import LABELS, MEASURED, NON_STRATEGIC

    _, claims, consistency = quick
    assert {c.label for c in claims} <= set(LABELS)
    for name in NON_STRATEGIC:
        row = _verdict_of(claims, f"{name} (ignores gaming) has linear regret")
        assert row.label == MEASURED and "§" not in row.source
    for text in [c.source for c in claims] + [c.claim for c in claims] + [
            k.source for k in consistency]:
        assert "issue" not in text.lower(), text


def test_etc_that_never_commits_fails_the_commit_rate(quick):
    """The commit-phase rate row: ETC's regret at T replaced by accept-all's (a rule that keeps
    accepting everyone after T0, on the same seeds, so its exploration is ETC's) grows like T and
    the row reads "no", where ETC's near-zero commit regret reads "not discriminating"."""
    import pyarrow as pa

    from strategic_apple_tasting.experiments.claims import horizons

    (table,) = _parts(quick, "etc")
    start = "ETC's commit-phase regret grows at most like T^⅔"
    assert _one(horizons.etc(table), start).verdict == NOT_DISCRIMINATING
    frame = table.to_pandas()
    final = frame["t"] == frame["horizon"]
    key = ["feedback", "horizon", "seed"]
    accept = frame[final & (frame["learner"] == "accept-all")].set_index(key)["regret"]
    etc = final & (frame["learner"] == "etc")
    frame.loc[etc, "regret"] = accept.loc[
        list(frame.loc[etc, key].itertuples(index=False, name=None))].to_numpy()
    never = pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False)
    assert _one(horizons.etc(never), start).verdict == NO


def test_c2_bounds_flip_with_the_contexts(quick):
    """The c2 rows measure the contexts the game draws: on the sphere's surface (c2 = 0.27 at
    d = 3, δ = 0.3) the main text's bound holds and its row reads "yes"; with x₂ squashed to a
    tenth, lem:spheres's fails too."""
    import numpy as np

    from strategic_apple_tasting.experiments.claims import constants
    from strategic_apple_tasting.game import UniformSphere, draw_contexts

    def sphere(d, n, rng):
        return draw_contexts(UniformSphere(), d, n, rng)

    def squashed(d, n, rng):
        return constants.ball(d, n, rng) * np.array([1.0, 0.1] + [1.0] * (d - 2))

    main = "c2(d, δ) ≥ (3/4 − δ/2 − δ²/4)³ (the main text's"
    lemma = "c2(d, δ) ≥ (3/4 − δ/2 − δ²/4)³ / (3d)"
    real = constants.c2_rows(3, 0.3)
    assert (_one(real, main).verdict, _one(real, lemma).verdict) == (NO, YES)
    assert _one(constants.c2_rows(3, 0.3, sphere), main).verdict == YES
    assert _one(constants.c2_rows(3, 0.3, squashed), lemma).verdict == NO


def test_reproduce_on_a_dask_cluster_reads_the_local_runs_claims(quick, tmp_path):
    """The cells of two parts and the tasks of a part that is not a sweep (the adaptive
    adversary's runs, whose rows come back to the reproducing process) run on a real Dask
    scheduler with two worker processes, started as a cluster is (on loopback): the claims
    that read them are the local run's, bit for bit, and the run says what it cost
    (``timing.md``: every cell's and task's CPU time, the projection)."""
    distributed = pytest.importorskip("distributed")
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    cli = [sys.executable, "-m"]
    started = [subprocess.Popen([*cli, "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                 "--port", str(port), "--no-dashboard"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        started += [subprocess.Popen([*cli, "distributed.cli.dask_worker", address, "--nthreads",
                                      "1", "--no-dashboard"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    for _ in range(2)]
        with distributed.Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
        parts = ["periods", "warm-ups", "adaptive-d1"]
        out = tmp_path / "on-dask"
        assert main(["reproduce", "--quick", "--parts", ",".join(parts), "--scheduler",
                     address, "--out", str(out), "--workers", "1"]) == 0
    finally:
        for process in started:
            process.terminate()
        for process in started:
            process.wait(30)
    local, *_ = quick
    assert check_claims(out, parts) == check_claims(local, parts)
    assert check_claims(out, parts)[0]  # (the parts are read by a claim)
    run = RUNS["adaptive-d1"]
    assert run.load(out / run.name).equals(run.load(local / run.name))
    timing = (out / "timing.md").read_text()
    for part in parts[:2]:
        cells = len(check_spec(PARTS["quick"][part]).cells)
        assert f"| {part} | {cells:,} | " in timing, timing
    tasks = sum(map(len, run.files("quick").values()))
    assert f"| adaptive-d1 | {tasks} | " in timing, timing
    assert "projected wall time" in timing and "Dask scheduler tcp://127.0.0.1" in timing


# -- regret's dependence on the constants, and unknown-horizon under bandit feedback ---------
def _times_setting(table, learner, column, power=1.0):
    """``table`` with ``learner``'s regret multiplied by its row's ``column`` (a setting) to the
    ``power``: a regret that grows that much faster along the setting."""
    import pyarrow as pa
    import pyarrow.compute as pc

    mine = pc.equal(table.column("learner"), learner)
    factor = pc.power(pc.cast(table.column(column), pa.float64()), power)
    regret = pc.if_else(mine, pc.multiply(table.column("regret"), factor),
                        pc.cast(table.column("regret"), pa.float64()))
    return table.set_column(table.schema.get_field_index("regret"), "regret",
                            pc.cast(regret, table.schema.field("regret").type))


def test_scaling_rows_flip_when_their_learner_or_regret_is_sabotaged(quick):
    """Naive greedy in SA-OLS's place: its gaming cost grows with δ like (1/(c1·c2))^2.1, and the
    1/(c1·c2) row reads "no"; flat in σ, it turns the σ row's "no" into "yes". SA-OLS's regret
    made one power of 1/c0 (of d) steeper turns the c0 row (the d row) into "no"."""
    from strategic_apple_tasting.experiments.claims import scaling

    delta, sigma, c0, dim = _parts(quick, "scaling-delta", "scaling-sigma", "scaling-c0",
                                   "scaling-dimension")
    (row,) = scaling.delta(delta)
    assert row.verdict == YES
    (row,) = scaling.delta(_with(delta, "sa-ols", "naive-greedy"))
    assert row.verdict == NO
    (row,) = scaling.sigma(sigma)
    assert row.verdict == NO
    (row,) = scaling.sigma(_with(sigma, "sa-ols", "naive-greedy"))
    assert row.verdict == YES
    (row,) = scaling.c0(c0)
    assert row.verdict == YES
    (row,) = scaling.c0(_times_setting(c0, "sa-ols", "c0", -1.0))
    assert row.verdict == NO
    (row,) = scaling.dimension(dim)
    assert row.verdict == INCONCLUSIVE
    (row,) = scaling.dimension(_times_setting(dim, "sa-ols", "dimension"))
    assert row.verdict == NO


def test_etc_whose_regret_grows_like_d_squared_fails_the_d_row(quick):
    """ETC's regret made one power of d steeper (as if each exploration round cost d times
    accept-all's) reads "no" where ETC's own reads "yes"."""
    from strategic_apple_tasting.experiments.claims import scaling

    (table,) = _parts(quick, "etc-dimension")
    (row,) = scaling.etc_dimension(table)
    assert row.verdict == YES
    (row,) = scaling.etc_dimension(_times_setting(table, "etc", "dimension"))
    assert row.verdict == NO


@pytest.mark.parametrize(("part", "check"), [("unknown-horizon-bandit", "epochs"),
                                             ("unknown-horizon-bandit-sharp", "sharp")])
def test_unknown_horizon_under_bandit_feedback_swapped_for_accept_all_fails(quick, part, check):
    """Accept-all's runs in unknown-horizon's place under bandit feedback (apple tasting kept):
    the exponents differ and the rate row reads "no"."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from strategic_apple_tasting.experiments.claims import unknown_bandit

    (table,) = _parts(quick, part)
    rule = getattr(unknown_bandit, check)
    start = "unknown-horizon ("
    assert _one(rule(table), start).verdict == YES
    bandit = pc.equal(table.column("feedback"), "bandit")
    apple = table.filter(pc.invert(bandit))
    swapped = pa.concat_tables([apple, _with(table.filter(bandit), "unknown-horizon",
                                             "accept-all")])
    assert _one(rule(swapped), start).verdict == NO


def test_sa_ols_in_place_of_exp3_sae_fails_the_rate_with_trembling_agents(quick):
    """EXP3-SAE's results with trembling agents replaced by SA-OLS's (trapped about half the
    time: linear): the rate row no longer reads "yes", its check fails."""
    from strategic_apple_tasting.experiments.claims import trembling

    table, lazy = _parts(quick, "adversarial-trembling-d1", "adversarial-d1")
    start = "EXP3-SAE regret grows at most like T^((d+1)/(d+2)) on an oblivious sequence with"
    assert _one(trembling.trembling(table, lazy), start).verdict == YES
    swapped = _one(trembling.trembling(_with(table, "exp3-sae", "sa-ols"), lazy), start)
    assert swapped.outcome == "fail" and swapped.verdict != YES


def test_trembling_regret_unlike_the_lazy_agents_fails_the_consistency_check(quick):
    """The consistency row holds on the quick run, and fails when the trembling part's
    EXP3-SAE regret is SA-OLS's (decisions that changed)."""
    from strategic_apple_tasting.experiments.claims import trembling

    table, lazy = _parts(quick, "adversarial-trembling-d1", "adversarial-d1")

    def row(t):
        (found,) = [r for r in trembling.trembling(t, lazy)
                    if not hasattr(r, "verdict") and "is the lazy agents'" in r.what]
        return found
    assert row(table).holds
    assert not row(_with(table, "exp3-sae", "sa-ols")).holds


def stated_differences(document: str) -> tuple[int, int, list[str]]:
    """The count of quick/full verdict differences ``document`` states ("the quick run's
    verdicts differ from the full run's in N of the M rows both have"), and the claims of
    the list under that sentence (one bullet each, the claim first, then a colon)."""
    import re

    found = re.search(r"verdicts differ from the full run's in (\d+) of the (\d+) rows both "
                      r"have:\n\n((?:- .*\n(?:  .*\n)*)*)", document)
    assert found, "the document states no count of quick/full verdict differences"
    bullets = re.findall(r"^- (.*?): (?:yes|no|not discriminating at this T|inconclusive at "
                         r"this T) \(full\)", found.group(3), flags=re.M)
    return int(found.group(1)), int(found.group(2)), bullets


def test_the_documents_count_of_quick_and_full_differences_is_computed(quick):
    """docs/reproducing.md states how many rows' verdicts differ between its full table and
    the quick run, and lists them: both are this quick run's, computed against the table."""
    from pathlib import Path

    from strategic_apple_tasting.experiments.claims.compare import (
        table_rows,
        verdict_differences,
    )

    out, _, _ = quick
    document = (Path(__file__).parents[1] / "docs" / "reproducing.md").read_text()
    run = (out / "claims.md").read_text()
    found = verdict_differences(document, run)
    both = len(set(table_rows(document)) & set(table_rows(run)))
    assert stated_differences(document) == (len(found), both, [c for c, _, _ in found])
    # The control: the table with one more verdict changed no longer agrees with the count.
    differing = {c for c, _, _ in found}
    row = next(line for line in document.splitlines()
               if line.startswith("| ") and line.split(" | ")[0][2:] in table_rows(run)
               and line.split(" | ")[0][2:] not in differing)
    flipped = document.replace(row, row.rsplit("|", 2)[0] + "| changed |")
    assert len(verdict_differences(flipped, run)) == len(found) + 1
