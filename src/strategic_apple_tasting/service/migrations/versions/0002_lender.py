"""The service as a lender runs it: who wrote each entry (the API key's id), an
optional group on a decision, the acceptance cap's rejections, where each rule came from, the
warm start, the shadow learner, per-rule figures and the acceptance count under the cap.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.add_column("decisions", sa.Column("key_id", sa.String(32), nullable=True))
    op.add_column("decisions", sa.Column("group", sa.String(64), nullable=True))
    op.add_column("decisions", sa.Column("capped", sa.Boolean, nullable=True))
    op.add_column("outcomes", sa.Column("key_id", sa.String(32), nullable=True))
    op.add_column("rules", sa.Column("key_id", sa.String(32), nullable=True))
    op.add_column("rules", sa.Column("source", sa.String(16), nullable=True))
    op.add_column("rules", sa.Column("learned", sa.BigInteger, nullable=True))
    op.add_column("learner_state", sa.Column("shadow", sa.LargeBinary, nullable=True))
    op.add_column("learner_state", sa.Column("pinned", sa.Boolean, nullable=True))
    op.add_column("log_counter", sa.Column("warm_accepted", sa.BigInteger, nullable=True))
    op.execute("UPDATE log_counter SET warm_accepted = 0")
    op.create_table(
        "start_state",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("state", sa.LargeBinary, nullable=True),
        sa.Column("shadow", sa.LargeBinary, nullable=True),
        sa.Column("rule", sa.Text, nullable=True),
        sa.Column("rows", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False))
    op.create_table(
        "shadow_rules",
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("beta", sa.Text, nullable=False),
        sa.Column("threshold", sa.Double, nullable=False),
        sa.Column("probability", sa.Double, nullable=False),
        sa.Column("after_seq", sa.BigInteger, nullable=False),
        sa.Column("published_at", sa.Double, nullable=False))
    op.create_table(
        "shadow_decisions",
        sa.Column("decision_id", sa.String(128), primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False, unique=True),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("accepted", sa.Boolean, nullable=False))
    op.create_table(
        "rule_stats",
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("decisions", sa.BigInteger, nullable=False),
        sa.Column("accepted", sa.BigInteger, nullable=False),
        sa.Column("outcomes", sa.BigInteger, nullable=False),
        sa.Column("outcome_sum", sa.Double, nullable=False),
        sa.Column("repaid", sa.BigInteger, nullable=False))
    # What the learner has read of an existing log is counted now (it counts the rest as it
    # reads): an upgraded database's figures start complete.
    op.execute(sa.text(
        "INSERT INTO rule_stats (version, decisions, accepted, outcomes, outcome_sum, repaid) "
        "SELECT d.version, count(*), "
        "sum(CASE WHEN d.accepted THEN 1 ELSE 0 END), count(o.decision_id), "
        "coalesce(sum(o.outcome), 0.0), "
        "sum(CASE WHEN o.outcome > 0 THEN 1 ELSE 0 END) "
        "FROM decisions d LEFT JOIN outcomes o ON o.decision_id = d.id "
        "AND o.seq <= (SELECT seq FROM learner_progress WHERE id = 1) "
        "WHERE d.seq <= (SELECT seq FROM learner_progress WHERE id = 1) "
        "GROUP BY d.version"))
