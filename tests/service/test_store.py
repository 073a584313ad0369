"""The database layer: migrations that make the schema the code describes, URLs refused in one
line."""

from __future__ import annotations

import re

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from strategic_apple_tasting.service import store


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/store.db"
    return request.getfixturevalue("postgres")


def test_migrations_make_the_schema_the_code_describes(database):
    engine = store.connect(database)
    try:
        store.migrate(engine)
        store.migrate(engine)  # a second start changes nothing
        assert store.schema_revision(engine) == store.HEAD == "0008"
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), store.METADATA) == []
        # The log's positions are consecutive within and across transactions.
        with store.transaction(engine) as conn:
            first = store.take_positions(conn, 3)
            assert store.take_positions(conn, 2) == first + 3
    finally:
        engine.dispose()


def test_the_control_a_schema_change_without_its_migration_is_seen(tmp_path):
    engine = store.connect(f"sqlite:///{tmp_path}/store.db")
    store.migrate(engine)
    changed = store.sa.MetaData()
    for table in store.METADATA.tables.values():
        table.to_metadata(changed)
    store.sa.Table("audit", changed, store.sa.Column("id", store.sa.Integer, primary_key=True))
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), changed) != []
    engine.dispose()


@pytest.mark.parametrize(("url", "message"), [
    ("not a url", "is not a database URL"),
    ("mysql://u@h/db", "runs on sqlite or postgresql"),
    ("sqlite://", "give a SQLite file"),
    ("sqlite:///:memory:", "give a SQLite file"),
    ("sqlite:////no/such/dir/x.db", "does not exist"),
    # the decision service (the password never shown)
    ("postgresql://u:hunter2@h:badport/db", "'postgresql://u:***@h:badport/db' is not a "
     "database URL"),
    ("postgres://u:hunter2@h/db", "'postgres://u:***@h/db': the service runs on sqlite or "
     "postgresql"),
])
def test_database_urls_the_service_cannot_use_are_refused_in_one_line(url, message):
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        store.check_url(url)
    assert "\n" not in str(info.value) and "hunter2" not in str(info.value)
