"""The decision service's schema migrations (Alembic), applied in order by ``store.migrate``."""
