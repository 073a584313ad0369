"""Log entries a learner refused and skipped instead of stopping (``skipped_entries``).

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    op.create_table(
        "skipped_entries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("shadow", sa.String(64), nullable=True),
        sa.Column("decision_id", sa.String(128), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("created_at", sa.Double, nullable=False))
    op.create_index("ix_skipped_entries_seq", "skipped_entries", ["seq"])


def downgrade() -> None:
    op.drop_index("ix_skipped_entries_seq", "skipped_entries")
    op.drop_table("skipped_entries")
