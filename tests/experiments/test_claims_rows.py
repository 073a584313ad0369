"""How a claims row earns its verdict, and how the table prints every verdict."""

import math

import pytest

from strategic_apple_tasting.experiments.claims import (
    INCONCLUSIVE,
    LABELS,
    NO,
    NOT_DISCRIMINATING,
    PAPER,
    YES,
    Check,
    Claim,
    Consistency,
    Control,
    claims_markdown,
    claims_text,
    tally,
)
from strategic_apple_tasting.metrics import Estimate

AT_MOST_HALF = Check("≤ 0.5", high=0.5)


def est(value, low=math.nan, high=math.nan, seeds=8):
    return Estimate(value, low, high, seeds=seeds)


def row(measured, control, *, must="fail", regime="", why=""):
    return Claim("rate ≤ ½", "thm:x", "slope", measured, AT_MOST_HALF,
                 Control("baseline", control, must=must), why=why, regime=regime, label=PAPER)


@pytest.mark.parametrize(("measured", "control", "must", "regime", "verdict"), [
    (est(0.3, 0.2, 0.4), est(1.0, 0.9, 1.1), "fail", "", YES),
    # The control passes too: the check says nothing here.
    (est(0.3, 0.2, 0.4), est(0.35, 0.3, 0.4), "fail", "", NOT_DISCRIMINATING),
    # A control straddling the edge has not been rejected either.
    (est(0.3, 0.2, 0.4), est(0.5, 0.4, 0.6), "fail", "", NOT_DISCRIMINATING),
    (est(0.9, 0.8, 1.0), est(1.0, 0.9, 1.1), "fail", "", NO),
    (est(0.5, 0.4, 0.6), est(1.0, 0.9, 1.1), "fail", "", INCONCLUSIVE),
    # A claim expected to fail shows with a positive control that the check can pass.
    (est(0.9, 0.8, 1.0), est(0.3, 0.2, 0.4), "pass", "", NO),
    (est(0.9, 0.8, 1.0), est(0.9, 0.8, 1.0), "pass", "", NOT_DISCRIMINATING),
    # Out of the theorem's regime a failing check says nothing; a passing one still counts.
    (est(0.9, 0.8, 1.0), est(1.0, 0.9, 1.1), "fail", "not yet", NOT_DISCRIMINATING),
    (est(0.3, 0.2, 0.4), est(1.0, 0.9, 1.1), "fail", "not yet", YES),
    # Without an interval (a largest value over seeds) the value is judged.
    (est(0.4), est(0.7), "fail", "", YES),
])
def test_verdicts(measured, control, must, regime, verdict):
    claim = row(measured, control, must=must, regime=regime, why="because")
    assert claim.verdict == verdict
    assert (claim.reason == "") == (verdict == YES)
    if verdict == NO:
        assert claim.reason == "because"
    if verdict == NOT_DISCRIMINATING and regime:
        assert claim.reason == regime


def test_covers_judges_an_exact_prediction():
    check = Check("= 0", kind="covers", target=0.0)
    assert check.judge(est(0.1, -0.1, 0.3)) == "pass"
    assert check.judge(est(0.2, 0.1, 0.3)) == "fail"
    assert check.judge(est(math.nan)) == "unclear"


def test_the_table_prints_every_verdict_and_no_plus_minus_zero():
    claims = [row(est(0.3, 0.2, 0.4), est(1.0, 0.9, 1.1)),
              row(est(0.9, 0.8, 1.0), est(1.0, 0.9, 1.1), why="it grows faster"),
              row(est(0.3, 0.2, 0.4), est(0.35, 0.3, 0.4)),
              row(est(0.5, 0.4, 0.6), est(1.0, 0.9, 1.1)),
              row(est(0.0, 0.0, 0.0, seeds=4), est(2.0, seeds=1))]
    consistency = [Consistency("zero regret", "§2", "largest 0", True),
                   Consistency("no gamed point", "cond:clean", "largest 3", False)]
    md = claims_markdown(claims, consistency)
    assert md.splitlines()[0] == "| claim | source | measured | control | theory | verdict |"
    for text in ("| yes |", "**no**: it grows faster", "**not discriminating at this T**: the "
                 "control passes too", "**inconclusive at this T**", "0 (on each of 4 seeds)",
                 "2 (1 seed: no interval)", "- ok: zero regret", "- **FAILS**: no gamed point"):
        assert text in md, text
    assert "± 0" not in md
    text = claims_text(claims, consistency)
    assert "[no] rate ≤ ½ (paper's statement: thm:x)" in text
    assert "why:      it grows faster" in text
    assert "[FAILS] no gamed point" in text
    assert tally(claims) == ("2 yes, 1 no, 1 not discriminating at this T, "
                             "1 inconclusive at this T")


def test_a_strict_check_fails_its_boundary_value():
    """"> 1" in words is an open interval: a ratio of exactly 1 (a peer exactly as good as
    SA-OLS) must fail it, where the closed check [1, ∞) passed it."""
    strict, closed = Check("> 1", low=1.0, strict=True), Check("≥ 1", low=1.0)
    assert closed.judge(est(1.0)) == "pass"
    assert strict.judge(est(1.0)) == "fail"
    assert strict.judge(est(1.0, 1.0, 1.0)) == "fail"  # every seed at 1
    assert strict.judge(est(0.95, 0.9, 1.0)) == "fail"
    assert strict.judge(est(1.1, 1.0, 1.2)) == "unclear"
    assert strict.judge(est(1.1, 1.01, 1.2)) == "pass"
    below = Check("< 1", high=1.0, strict=True)
    assert below.judge(est(1.0)) == "fail" and below.judge(est(0.99)) == "pass"


def test_the_peers_check_is_strict():
    """The peers' row says "> 1": a peer whose ratio to SA-OLS is exactly 1 must not pass."""
    import numpy as np
    import pyarrow as pa

    from strategic_apple_tasting.experiments.claims import peers
    from strategic_apple_tasting.experiments.claims.parts import PEERS

    table = pa.table({
        "learner": [n for n in ("sa-ols", *PEERS) for _ in range(6)],
        "seed": [s for _ in range(4) for s in (0, 1, 2) for _ in range(2)],
        "truthful": [v for _ in range(4) for _ in range(3) for v in (0.0, 1.0)],
        "horizon": [100] * 24, "t": [100] * 24,
        "regret": [r for _ in range(4) for r in (1.0, 0.5, 2.0, 0.4, 3.0, 0.3)]})
    for claim in peers.peers(table):  # every peer exactly as good as SA-OLS on every seed
        assert claim.measured.value == 1.0 and claim.outcome == "fail", claim.measured_text
        assert np.isclose(claim.control.estimate.value, 1.0)


def test_a_row_says_what_stands_behind_it():
    assert LABELS == ("paper's statement", "argued", "beyond the paper", "measured")
    with pytest.raises(ValueError, match="label must be one of paper's statement, argued, "
                                         "beyond the paper, measured, got '§3 baselines'"):
        Claim("x", "y", "z", est(1.0), AT_MOST_HALF, Control("c", est(2.0)),
              label="§3 baselines")
    assert "| rate ≤ ½ | paper's statement: `thm:x` |" in claims_markdown(
        [row(est(0.3, 0.2, 0.4), est(1.0, 0.9, 1.1))])


def test_an_interval_not_narrower_than_the_stated_width_is_not_discriminating():
    """A covers check passes any interval wide enough: one as wide as the stated width (or
    wider) says nothing, and the row reads "not discriminating"; a narrower one is judged."""
    check = Check("= 0", kind="covers", target=0.0, width=0.2, width_why="a reason")

    def claim(measured):
        return Claim("= 0", "thm:x", "gap", measured, check,
                     Control("baseline", est(1.0, 0.95, 1.05)), label=PAPER)
    assert claim(est(0.0, -0.09, 0.09)).verdict == YES
    edge = claim(est(0.0, -0.1, 0.1))  # exactly the width: not narrower
    assert edge.verdict == NOT_DISCRIMINATING
    assert edge.reason == ("the interval is 0.2 wide, not narrower than 0.2 (a reason): it "
                           "passes whichever holds")
    # A wide interval that misses the target still fails: width only withholds a pass.
    assert claim(est(1.0, 0.5, 1.5)).verdict == NO
    # A statistic without an interval is judged on its value.
    assert claim(est(0.0)).verdict == YES
