"""Access: what each API key may do (its scopes), until when (its expiry), when it was last
used, and the access log (which key read which applicant's explanation, and when).

Keys made before this migration could do everything, so they keep every scope: an upgrade
takes nothing from a client that works today (narrow them by making new keys).

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.add_column("api_keys", sa.Column("scopes", sa.String(64), nullable=True))
    op.add_column("api_keys", sa.Column("expires_at", sa.Double, nullable=True))
    op.add_column("api_keys", sa.Column("last_used_at", sa.Double, nullable=True))
    op.execute("UPDATE api_keys SET scopes = 'decide,report,explain,admin'")
    op.create_table(
        "access_log",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key_id", sa.String(32), nullable=False),
        sa.Column("decision_id", sa.String(128), nullable=False),
        sa.Column("read_at", sa.Double, nullable=False))
    op.create_index("access_log_decision", "access_log", ["decision_id"])
