"""Figures by group: the shift each rule carries for gaming, and whether a rejected
applicant's score lay in the band that shift created (rejected, but the rule before its shift
would have accepted it). Rows written before this migration have neither (NULL: not counted).

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.add_column("rules", sa.Column("shift", sa.Double, nullable=True))
    op.add_column("decisions", sa.Column("band", sa.Boolean, nullable=True))
