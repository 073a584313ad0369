"""Figures by group: what the service can see of who is accepted, who repays and who
pays for the rule's shift, per group label a decision request carried.

A decision may carry a ``group`` (a label of the client's: a sex and age band, a region). It is
stored with the decision (``decisions.group``) and never reaches the learner, which reads the
log's features, decisions and outcomes only (:func:`~.learning.read_log`). Per group,
``/metrics`` (JSON and Prometheus text) and the policy page give: decisions, the acceptance
rate, the share of accepted applicants with a reported outcome who repaid (outcome > 0, as the
per-rule figures count it), and **rejected in the shift's band**: rejected applicants whose
*reported* score lay in [c − shift, c), where the rule's shift for gaming (δ‖β‖, δ‖β_G‖, or
the δ in force when the learner estimates it) is recorded with each rule (``rules.shift``)
and the flag with each decision (``decisions.band``, set when it is decided).

What the service cannot see: who moved. An applicant's true features are never shown to it,
so it cannot tell an honest applicant rejected by the shift (the social burden the engine
counts from true features, :mod:`..engine.groups`) from one who gamed and still fell short;
the band count is what the rule's shift rejected by *reported* score, an observable stand-in
for the burden, not the burden. The figures are running counts, kept as decisions and outcomes
are written: retention, which deletes old rows, leaves them whole.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.groups import round_shift, shift_belief
from ..reports.pages import escape, html_table
from .counts import read_groups

#: Per-group figures, in the order of the JSON document.
GROUP_FIGURES = ("decisions", "accepted", "acceptance_rate", "outcomes", "repaid",
                 "repaid_share", "band_rejected")


def rule_shift(learner: Any, beta: np.ndarray) -> float:
    """The shift ``learner``'s rule with direction β carries for gaming: its belief's reach at β
    (the δ in force if it estimates δ); 0 for a learner that does not shift."""
    belief = shift_belief(learner)
    if belief is None:
        return 0.0
    return float(round_shift(belief, np.ascontiguousarray(beta, dtype=np.float64)))


def in_band(score: float, threshold: float, shift: float | None, accepted: bool) -> bool | None:
    """Whether a decision was rejected with a reported score in [c − shift, c): the band the
    rule's shift created (None when the rule has no recorded shift)."""
    if shift is None:
        return None
    return (not accepted) and shift > 0.0 and threshold - shift <= score < threshold


def group_metrics(conn: Any) -> dict[str, dict[str, Any]]:
    """Group label → :data:`GROUP_FIGURES`, from the running counts (:mod:`.counts`: kept as
    decisions and outcomes are written, never lowered by retention; empty if no decision
    carried a label). The rates are None where nothing is counted under them."""
    return read_groups(conn)


def group_html(groups: dict[str, dict[str, Any]]) -> str:
    """The policy page's section by group ('' when no decision carries a group)."""
    if not groups:
        return ""

    def share(v: float | None) -> str:
        return "-" if v is None else f"{v:.1%}"

    rows = [[escape(g), f"{f['decisions']:,}", share(f["acceptance_rate"]),
             f"{f['outcomes']:,}", share(f["repaid_share"]), f"{f['band_rejected']:,}"]
            for g, f in groups.items()]
    return ("<h2>By group</h2><p id=groups>Each decision may carry a group label; the learner "
            "never sees it. <em>Repaid</em> is the share of accepted applicants with a "
            "reported outcome whose outcome was positive. <em>Rejected in the shift's "
            "band</em> counts rejected applicants whose reported score lay within the shift "
            "the rule adds for gaming, below its threshold: the rule before its shift would "
            "have accepted them. Who among them was honest, and who moved, cannot be seen "
            "here: applicants' true features are never shown to the service.</p>"
            + html_table(["group", "decisions", "accepted", "outcomes", "repaid",
                          "rejected in the shift's band"], rows, text_columns=(0,)))
