"""Exploration and its record: each decision's propensity (the probability with which the
service took the action it logged) and whether it was an acceptance at random below the
rule's cutoff; each rule's share, when the learner published it as an exploring rule (its own
rule had granted no loan for a while); and a rollback's rule, the earlier version it puts
back in force. Rows written before this migration have neither (NULL):
no exploration existed then, so their propensity is 1.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.add_column("decisions", sa.Column("propensity", sa.Double, nullable=True))
    op.add_column("decisions", sa.Column("explored", sa.Boolean, nullable=True))
    op.add_column("rules", sa.Column("explored", sa.Double, nullable=True))
    op.add_column("rules", sa.Column("restores", sa.Integer, nullable=True))
