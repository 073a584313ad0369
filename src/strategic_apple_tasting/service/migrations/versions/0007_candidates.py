"""Candidates on a live service: shadows attached and detached by name (``shadow_events``),
each shadow's rules and would-be decisions kept under its name (the settings' shadow is named
"shadow"), the attached shadows' saved states beside the learner's, a canary's decisions (the
shadow that decided, its rule version, what the live rule would have decided), and a promoted
shadow's rule. The shadow tables are made anew keyed by name, their rows kept.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.add_column("decisions", sa.Column("decided_by", sa.String(64), nullable=True))
    op.add_column("decisions", sa.Column("by_version", sa.Integer, nullable=True))
    op.add_column("decisions", sa.Column("rule_accepted", sa.Boolean, nullable=True))
    op.add_column("rules", sa.Column("promotes", sa.String(64), nullable=True))
    op.add_column("learner_state", sa.Column("candidates", sa.LargeBinary, nullable=True))
    op.create_table(
        "shadow_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("learner", sa.String(64), nullable=True),
        sa.Column("params", sa.Text, nullable=True),
        sa.Column("base", sa.LargeBinary, nullable=True),
        sa.Column("canary", sa.Double, nullable=True),
        sa.Column("key_id", sa.String(32), nullable=True),
        sa.Column("created_at", sa.Double, nullable=False))
    # The shadow tables get a name in their keys: made anew, the rows copied under "shadow"
    # (SQLite cannot change a primary key in place).
    op.create_table(
        "shadow_rules_named",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("beta", sa.Text, nullable=False),
        sa.Column("threshold", sa.Double, nullable=False),
        sa.Column("probability", sa.Double, nullable=False),
        sa.Column("after_seq", sa.BigInteger, nullable=False),
        sa.Column("published_at", sa.Double, nullable=False),
        sa.PrimaryKeyConstraint("name", "version", name="pk_shadow_rules"))
    op.execute("INSERT INTO shadow_rules_named (name, version, beta, threshold, probability, "
               "after_seq, published_at) SELECT 'shadow', version, beta, threshold, "
               "probability, after_seq, published_at FROM shadow_rules")
    op.drop_table("shadow_rules")
    op.rename_table("shadow_rules_named", "shadow_rules")
    op.create_table(
        "shadow_decisions_named",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("decision_id", sa.String(128), nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("accepted", sa.Boolean, nullable=False),
        sa.PrimaryKeyConstraint("name", "decision_id", name="pk_shadow_decisions"))
    op.execute("INSERT INTO shadow_decisions_named (name, decision_id, seq, version, accepted) "
               "SELECT 'shadow', decision_id, seq, version, accepted FROM shadow_decisions")
    op.drop_table("shadow_decisions")
    op.rename_table("shadow_decisions_named", "shadow_decisions")
