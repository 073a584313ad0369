"""Running counts: events counted as they are written (decisions, acceptances, outcomes, by
group label) or as the learner reads them (the shadow's would-be decisions), kept apart from
the log's rows so that retention never lowers them and ``/metrics`` never counts the log.

An upgraded database starts from what it knows: the totals from the figures per rule version
(``rule_stats``, which outlive retention) plus the log the learner has not read yet; the
figures by group and the shadow's from the rows kept.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"

#: How each running count starts on an existing database (SQL both databases run).
_READ = "(SELECT coalesce(max(seq), 0) FROM learner_progress)"
_START = {
    "decisions": "SELECT (SELECT coalesce(sum(decisions), 0) FROM rule_stats) + "
                 f"(SELECT count(*) FROM decisions WHERE seq > {_READ})",
    "accepted": "SELECT (SELECT coalesce(sum(accepted), 0) FROM rule_stats) + "
                f"(SELECT count(*) FROM decisions WHERE accepted AND seq > {_READ})",
    "capped": "SELECT count(*) FROM decisions WHERE capped",
    "outcomes": "SELECT (SELECT coalesce(sum(outcomes), 0) FROM rule_stats) + "
                f"(SELECT count(*) FROM outcomes WHERE seq > {_READ})",
    "repaid": "SELECT (SELECT coalesce(sum(repaid), 0) FROM rule_stats) + "
              f"(SELECT count(*) FROM outcomes WHERE outcome > 0 AND seq > {_READ})",
    "shadow_decisions": "SELECT count(*) FROM shadow_decisions",
    "shadow_accepted": "SELECT count(*) FROM shadow_decisions WHERE accepted",
    "shadow_live_accepted": "SELECT count(*) FROM shadow_decisions s JOIN decisions d "
                            "ON d.id = s.decision_id WHERE d.accepted",
    "shadow_agreed": "SELECT count(*) FROM shadow_decisions s JOIN decisions d "
                     "ON d.id = s.decision_id WHERE d.accepted = s.accepted",
}


def upgrade() -> None:
    counters = op.create_table(
        "counters",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False))
    op.create_table(
        "group_counts",
        sa.Column("label", sa.String(64), primary_key=True),
        sa.Column("decisions", sa.BigInteger, nullable=False),
        sa.Column("accepted", sa.BigInteger, nullable=False),
        sa.Column("outcomes", sa.BigInteger, nullable=False),
        sa.Column("repaid", sa.BigInteger, nullable=False),
        sa.Column("band_rejected", sa.BigInteger, nullable=False))
    bind = op.get_bind()
    op.bulk_insert(counters, [{"name": name, "value": int(bind.execute(sa.text(query)).scalar())}
                              for name, query in _START.items()])
    op.execute(sa.text(
        'INSERT INTO group_counts (label, decisions, accepted, outcomes, repaid, band_rejected) '
        'SELECT d."group", count(*), sum(CASE WHEN d.accepted THEN 1 ELSE 0 END), '
        "count(o.decision_id), sum(CASE WHEN o.outcome > 0 THEN 1 ELSE 0 END), "
        "sum(CASE WHEN d.band THEN 1 ELSE 0 END) "
        "FROM decisions d LEFT JOIN outcomes o ON o.decision_id = d.id AND d.accepted "
        'WHERE d."group" IS NOT NULL GROUP BY d."group"'))
