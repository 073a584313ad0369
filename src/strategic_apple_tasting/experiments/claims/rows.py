"""Rows of the claims table: a claim, its check, its control and its verdict; and the list of
consistency checks below the table. Rendering as Markdown and as plain text.

A claim's verdict is earned, not asserted:

* the **measured** statistic (with its 95% interval over seeds) must satisfy the claim's
  :class:`Check`;
* a **negative control** (the same check applied to a learner or setting that must fail it:
  accept-all for a bound, a learner without the shift for a rate) must fail it, or the check
  says nothing at this T: the row reads "not discriminating at this T", never "yes";
* a row about a claim that fails carries a **positive control** instead when that is what shows
  the check works: something the same check must pass.

Verdicts: "yes", "no" (with a one-line reason), "not discriminating at this T" (the control
passes too, the theorem's regime is not reached, or the interval is too wide to tell the claim
from its alternative), "inconclusive at this T" (the interval straddles the check's edge).

Every row carries a **label** saying what stands behind it (:data:`LABELS`): the paper's
statement (a theorem, lemma or sentence of the paper, named in its source), argued (an argument
in a class docstring, not a proof), beyond the paper (a question the paper does not raise, with
the idea behind the row's hypothesis in its source) or measured (a comparison no theorem or
argument claims: baselines, peer libraries, real loans).

What is true by construction (the oracle's zero regret,
Stackelberg ≤ strategic) is a :class:`Consistency` row, listed apart: a failure there is a bug.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from ...metrics import Estimate

Outcome = Literal["pass", "fail", "unclear"]

YES = "yes"
NO = "no"
NOT_DISCRIMINATING = "not discriminating at this T"
INCONCLUSIVE = "inconclusive at this T"
VERDICTS = (YES, NO, NOT_DISCRIMINATING, INCONCLUSIVE)

PAPER = "paper's statement"
ARGUED = "argued"
BEYOND = "beyond the paper"
MEASURED = "measured"
#: What stands behind a row: the paper states it, a docstring argues it, it asks what the paper
#: does not, or it only measures.
LABELS = (PAPER, ARGUED, BEYOND, MEASURED)


@dataclass(frozen=True)
class Check:
    """Where a statistic must lie for a claim to hold, judged on its 95% interval.

    ``within`` (the default): the interval must lie in [``low``, ``high``]; it fails when it
    lies wholly outside and is unclear when it straddles an end. With ``strict`` the ends are
    excluded, as the words "> 1" or "< 1" say: the interval must lie in (``low``, ``high``),
    and a value on an end fails. ``covers``: the interval must contain ``target`` (an exact
    prediction); it fails otherwise. A statistic without an interval (a count, the largest
    regret over seeds) is judged on its value.

    ``width``: an interval passes only if it is narrower than this (strictly): a wider one
    could pass whether the claim or its alternative holds (a covers check rewards wide
    intervals; a slope of a near-zero quantity passes any rate), and the row reads "not
    discriminating". ``width_why`` says which alternative the width separates from the claim.

    Examples
    --------
    >>> Check("≤ 0.5", high=0.5).judge(Estimate(0.3, 0.2, 0.4, seeds=8))
    'pass'
    >>> Check("≤ 0.5", high=0.5).judge(Estimate(0.5, 0.45, 0.55, seeds=8))
    'unclear'
    >>> Check("> 1", low=1.0, strict=True).judge(Estimate(1.0, seeds=8))
    'fail'
    >>> Check("= 0", kind="covers", target=0.0).judge(Estimate(0.1, 0.05, 0.2, seeds=8))
    'fail'
    >>> Check("= 0", kind="covers", width=0.2).too_wide(Estimate(0.0, -0.1, 0.1, seeds=8))
    True
    """

    text: str
    low: float = -math.inf
    high: float = math.inf
    kind: Literal["within", "covers"] = "within"
    target: float = math.nan
    strict: bool = False
    width: float = math.inf
    width_why: str = ""

    def too_wide(self, est: Estimate) -> bool:
        """Whether ``est``'s interval is not narrower than :attr:`width` (a statistic
        without an interval is never too wide: it is judged on its value)."""
        return est.has_interval and not est.high - est.low < self.width

    def judge(self, est: Estimate) -> Outcome:
        if not math.isfinite(est.value):
            return "unclear"
        lo, hi = (est.low, est.high) if est.has_interval else (est.value, est.value)
        if self.kind == "covers":
            return "pass" if lo <= self.target <= hi else "fail"
        if self.strict:
            inside = self.low < lo and hi < self.high
            outside = hi <= self.low or lo >= self.high
        else:
            inside = self.low <= lo and hi <= self.high
            outside = hi < self.low or lo > self.high
        if inside:
            return "pass"
        if outside:
            return "fail"
        return "unclear"


@dataclass(frozen=True)
class Control:
    """The same check applied to something that must fail it (``must="fail"``, a negative
    control) or, for a claim expected to fail, pass it (``must="pass"``, a positive control)."""

    what: str
    estimate: Estimate
    must: Literal["fail", "pass"] = "fail"


@dataclass(frozen=True)
class Claim:
    """One row of the claims table.

    ``label`` (one of :data:`LABELS`, keyword only) says what stands behind the row; ``source``
    names the statement or the idea. ``about`` says what was measured ("slope of mean regret,
    t ≥ T/10") and ``detail`` adds figures shown beside it. ``why`` is the one-line reason
    shown with a "no". ``regime``, when not empty, says why the theorem's regime is not
    reached at these T: a check that does not pass then reads "not discriminating at this T",
    with that reason.
    """

    claim: str
    source: str
    about: str
    measured: Estimate
    check: Check
    control: Control
    detail: str = ""
    why: str = ""
    regime: str = ""
    label: str = field(kw_only=True)

    def __post_init__(self) -> None:
        if self.label not in LABELS:
            raise ValueError(f"label must be one of {', '.join(LABELS)}, got {self.label!r}")

    @property
    def wide(self) -> bool:
        """The measurement passes, but on an interval too wide to tell the claim from its
        alternative (:attr:`Check.width`)."""
        return self.outcome == "pass" and self.check.too_wide(self.measured)

    @property
    def outcome(self) -> Outcome:
        return self.check.judge(self.measured)

    @property
    def control_outcome(self) -> Outcome:
        return self.check.judge(self.control.estimate)

    @property
    def verdict(self) -> str:
        outcome, control = self.outcome, self.control_outcome
        if self.wide:
            return NOT_DISCRIMINATING
        if self.regime and outcome != "pass":
            return NOT_DISCRIMINATING
        if outcome == "unclear":
            return INCONCLUSIVE
        if self.control.must == "pass":
            if control != "pass":
                return NOT_DISCRIMINATING
        elif control != "fail" and outcome == "pass":
            return NOT_DISCRIMINATING
        return YES if outcome == "pass" else NO

    @property
    def reason(self) -> str:
        """Why the verdict is not "yes" (empty for "yes")."""
        verdict = self.verdict
        if verdict == YES:
            return ""
        if verdict == NOT_DISCRIMINATING:
            if self.wide:
                est, check = self.measured, self.check
                why = f" ({check.width_why})" if check.width_why else ""
                return (f"the interval is {est.high - est.low:.3g} wide, not narrower than "
                        f"{check.width:.3g}{why}: it passes whichever holds")
            if self.regime and self.outcome != "pass":
                return self.regime
            if self.control.must == "pass":
                return "the positive control does not pass either: the check cannot pass here"
            return "the control passes too"
        if verdict == INCONCLUSIVE:
            return "the interval straddles the check's edge: more seeds or a longer run"
        return self.why or "the measured value fails the check"

    @property
    def measured_text(self) -> str:
        text = f"{self.about}: {self.measured.shown()}"
        return f"{text}; {self.detail}" if self.detail else text

    @property
    def control_text(self) -> str:
        outcome = self.control_outcome
        word = {"fail": "fails", "pass": "passes", "unclear": "unclear"}[outcome]
        expected = "" if outcome == self.control.must else " (!)"
        return f"{self.control.what}: {self.control.estimate.shown()} — {word}{expected}"

    @property
    def verdict_text(self) -> str:
        reason = self.reason
        return f"{self.verdict}: {reason}" if reason else self.verdict


@dataclass(frozen=True)
class Consistency:
    """A check that is true by construction of the simulator or the learner: a failure is a
    bug, not a finding about the paper."""

    what: str
    source: str
    measured: str
    holds: bool


#: What a check returns: its claims and its consistency checks, in table order.
Row = Claim | Consistency


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def claims_markdown(claims: list[Claim], consistency: list[Consistency] | None = None) -> str:
    """The claims table in Markdown, then the consistency checks as a list."""
    lines = ["| claim | source | measured | control | theory | verdict |",
             "|---|---|---|---|---|---|"]
    for c in claims:
        verdict = c.verdict if c.verdict == YES else f"**{c.verdict}**"
        if c.reason:
            verdict += f": {c.reason}"
        lines.append(f"| {_md(c.claim)} | {c.label}: `{_md(c.source)}` | "
                     f"{_md(c.measured_text)} | "
                     f"{_md(c.control_text)} | {_md(c.check.text)} | {_md(verdict)} |")
    if consistency:
        lines += ["", "Consistency checks (true by construction: a failure is a bug):", ""]
        lines += [f"- {'ok' if k.holds else '**FAILS**'}: {k.what} (`{k.source}`): {k.measured}"
                  for k in consistency]
    return "\n".join(lines)


def claims_text(claims: list[Claim], consistency: list[Consistency] | None = None) -> str:
    """The claims for a terminal: one block per claim, then the consistency checks."""
    out = []
    for c in claims:
        out.append(f"[{c.verdict}] {c.claim} ({c.label}: {c.source})")
        out.append(f"    measured: {c.measured_text}")
        out.append(f"    theory:   {c.check.text}")
        out.append(f"    control:  {c.control_text}")
        if c.reason:
            out.append(f"    why:      {c.reason}")
    if consistency:
        out.append("")
        out.append("consistency checks (true by construction: a failure is a bug):")
        out += [f"  [{'ok' if k.holds else 'FAILS'}] {k.what}: {k.measured}" for k in consistency]
    return "\n".join(out)


def tally(claims: list[Claim]) -> str:
    """"12 yes, 3 no, 2 not discriminating at this T" (verdicts with no rows left out)."""
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n)
