"""The first schema: settings, the log (rules, decisions, outcomes), the learner, API keys.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "service",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False))
    counter = op.create_table(
        "log_counter",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("seq", sa.BigInteger, nullable=False))
    op.bulk_insert(counter, [{"id": 1, "seq": 0}])
    op.create_table(
        "rules",
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("beta", sa.Text, nullable=False),
        sa.Column("threshold", sa.Double, nullable=False),
        sa.Column("probability", sa.Double, nullable=False),
        sa.Column("after_seq", sa.BigInteger, nullable=False),
        sa.Column("log_at", sa.BigInteger, nullable=False),
        sa.Column("published_at", sa.Double, nullable=False))
    op.create_table(
        "decisions",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False, unique=True),
        sa.Column("features", sa.Text, nullable=False),
        sa.Column("accepted", sa.Boolean, nullable=False),
        sa.Column("version", sa.Integer, sa.ForeignKey("rules.version"), nullable=False),
        sa.Column("created_at", sa.Double, nullable=False))
    op.create_table(
        "outcomes",
        sa.Column("decision_id", sa.String(128), sa.ForeignKey("decisions.id"),
                  primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False, unique=True),
        sa.Column("outcome", sa.Double, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False))
    op.create_table(
        "learner_state",
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("state", sa.LargeBinary, nullable=False),
        sa.Column("learned", sa.BigInteger, nullable=False),
        sa.Column("clean", sa.BigInteger, nullable=False),
        sa.Column("since", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False))
    progress = op.create_table(
        "learner_progress",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("learned", sa.BigInteger, nullable=False),
        sa.Column("clean", sa.BigInteger, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("updated_at", sa.Double, nullable=False))
    op.bulk_insert(progress, [{"id": 1, "seq": 0, "version": 0, "learned": 0, "clean": 0,
                               "error": None, "updated_at": 0.0}])
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", sa.Double, nullable=False),
        sa.Column("revoked_at", sa.Double, nullable=True))
