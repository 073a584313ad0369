"""Running counts: what ``/metrics`` reports as counters, kept as the events happen.

A count of the log's rows goes down when retention deletes rows, which a monitoring system
reads as a counter reset, and costs a scan of the log on every scrape. So each event is counted
once, when it is written, in the transaction that writes it: the writers count decisions,
acceptances, rejections by the acceptance cap, outcomes and repaid ones (outcome > 0), in all
and per group label (``counters`` and ``group_counts``); the learner counts the shadow's
would-be decisions as it reads the log (its rows are written with its progress, so a replay
after a crash counts nothing twice). Retention deletes rows and never touches a count, and
reading every count is a few rows whatever the log's length.

Group labels are the clients' and unbounded in kind, so the service counts at most
``max_groups`` distinct ones (:class:`GroupLabels`): a request bringing a label beyond that is
refused, and ``/metrics`` stays bounded.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from . import store

#: The counts the writers keep, as they write decisions and outcomes.
WRITTEN = ("decisions", "accepted", "capped", "outcomes", "repaid")
#: The counts the learner keeps as it reads the log with a shadow learner: the decisions the
#: shadow saw, its acceptances, the live rule's acceptances of them, and their agreements.
SHADOW = ("shadow_decisions", "shadow_accepted", "shadow_live_accepted", "shadow_agreed")
#: Per group label, in the order of ``group_counts``'s columns.
PER_GROUP = ("decisions", "accepted", "outcomes", "repaid", "band_rejected")


def add(conn: Connection, amounts: dict[str, int]) -> None:
    """Add ``amounts`` (name → how many) to the running counts, in one statement, inside the
    caller's transaction."""
    amounts = {k: int(v) for k, v in amounts.items() if v}
    if not amounts:
        return
    conn.execute(_adding(tuple(amounts)), {f"add_{k}": v for k, v in amounts.items()})


@functools.lru_cache(maxsize=64)
def _adding(names: tuple[str, ...]) -> Any:
    # Built once per set of names (a few: decisions and acceptances, outcomes and repaid
    # ones): every write transaction runs one.
    c = store.counters
    amounts = {n: sa.bindparam(f"add_{n}", type_=sa.BigInteger) for n in names}
    return sa.update(c).where(c.c.name.in_(names)).values(
        value=c.c.value + sa.case(amounts, value=c.c.name))


def read(conn: Connection) -> dict[str, int]:
    """Every running count (name → value)."""
    c = store.counters
    return {name: int(value) for name, value in conn.execute(sa.select(c.c.name, c.c.value))}


def tally(decisions: list[dict[str, Any]], outcomes: list[dict[str, Any]],
          known: dict[str, dict[str, Any]]) -> tuple[dict[str, int], dict[str, list[int]]]:
    """The counts of a transaction's new rows: (totals by name, label → :data:`PER_GROUP`).
    ``known``: decision id → its row (an outcome's decision: whether it was accepted and its
    label). An outcome counts for its label only when its decision was accepted (a rejection's
    outcome under bandit feedback says nothing of who was accepted and repaid)."""
    totals = dict.fromkeys(WRITTEN, 0)
    groups: dict[str, list[int]] = {}
    for row in decisions:
        totals["decisions"] += 1
        totals["accepted"] += bool(row["accepted"])
        totals["capped"] += bool(row.get("capped"))
        label = row.get("group")
        if label is not None:
            per = groups.setdefault(label, [0] * len(PER_GROUP))
            per[0] += 1
            per[1] += bool(row["accepted"])
            per[4] += bool(row.get("band"))
    for row in outcomes:
        repaid = row["outcome"] > 0
        totals["outcomes"] += 1
        totals["repaid"] += repaid
        decision = known[row["decision_id"]]
        label = decision.get("group")
        if label is not None and decision["accepted"]:
            per = groups.setdefault(label, [0] * len(PER_GROUP))
            per[2] += 1
            per[3] += repaid
    return totals, groups


def add_groups(conn: Connection, groups: dict[str, list[int]], new: set[str]) -> None:
    """Add per-label counts (label → :data:`PER_GROUP`); the labels in ``new`` get their row
    first. Inside the caller's transaction, which holds the log's lock (no two add a label)."""
    g = store.group_counts
    if new:
        conn.execute(sa.insert(g), [{"label": label, **dict.fromkeys(PER_GROUP, 0)}
                                    for label in sorted(new)])
    if groups:
        conn.execute(sa.update(g).where(g.c.label == sa.bindparam("b_label")).values(
            {name: getattr(g.c, name) + sa.bindparam(f"b_{name}") for name in PER_GROUP}),
            [{"b_label": label, **{f"b_{n}": v for n, v in zip(PER_GROUP, per, strict=True)}}
             for label, per in groups.items()])


def read_groups(conn: Connection) -> dict[str, dict[str, Any]]:
    """Label → decisions, accepted, acceptance_rate, outcomes, repaid, repaid_share and
    band_rejected (the rates None where nothing is counted under them), labels in order."""
    g = store.group_counts
    out = {}
    for row in conn.execute(sa.select(g).order_by(g.c.label)):
        out[row.label] = {
            "decisions": int(row.decisions), "accepted": int(row.accepted),
            "acceptance_rate": row.accepted / row.decisions if row.decisions else None,
            "outcomes": int(row.outcomes), "repaid": int(row.repaid),
            "repaid_share": row.repaid / row.outcomes if row.outcomes else None,
            "band_rejected": int(row.band_rejected)}
    return out


class GroupLabels:
    """The distinct group labels counted, at most ``limit`` (``max_groups``).

    A writer keeps the labels it has seen; a label it has not seen is looked up in the
    database (once a transaction, under the log's lock, so another worker's new labels count
    too). Labels only come, never go: the count is of every label the service has counted,
    retention or not."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.known: set[str] = set()
        self._fresh = False  # read from the database in this transaction
        self.new: set[str] = set()  # labels this transaction adds

    def begin(self) -> None:
        """A new transaction: nothing added yet, the database not read yet."""
        self._fresh = False
        self.new = set()

    def admit(self, conn: Connection, labels: Iterable[str | None]) -> str | None:
        """Take a request's labels (the ones it brings count from now on); or why not, in one
        line, taking none of them: the labels would pass ``limit``."""
        wanted = {label for label in labels if label is not None} - self.known - self.new
        if wanted and not self._fresh:
            g = store.group_counts
            self.known = set(conn.execute(sa.select(g.c.label)).scalars())
            self._fresh = True
            wanted -= self.known
        if not wanted:
            return None
        count = len(self.known) + len(self.new) + len(wanted)
        if count > self.limit:
            first = sorted(wanted)[0]
            return (f"group {first!r} would be distinct group label {count:,}: this service "
                    f"counts at most {self.limit:,} (max_groups); use a label it counts "
                    "already, or restart it with a higher --max-groups")
        self.new |= wanted
        return None

    def committed(self) -> None:
        """The transaction committed: its labels are known."""
        self.known |= self.new
        self.new = set()
