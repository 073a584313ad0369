"""The settings live in the database: a restart with only ``--database`` is the same service;
every kept setting, left out, changed or missing from the database, is accepted (a change
said in one line, old and new) or refused in one line naming it, the kept value and the given
one; ``sat serve settings`` shows them as a ``--config`` file."""

from __future__ import annotations

import json
import sqlite3
import tomllib

import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service import settings, store

from .conftest import free_port

#: A lender's settings: declared features with a scaling, a shadow, its own cadence.
SETTINGS = """learner = "sa-ols"
publish = "outcomes:50"
min_interval = 2.0
[params]
delta = 0.3
r0 = 0.0
[shadow_params]
delta = 0.1
r0 = 0.0
[[features]]
name = "income"
unit = "k$"
definition = "yearly income"
mean = 50.0
scale = 10.0
[[features]]
name = "ratio"
mean = 0.3
scale = 0.1
[[features]]
name = "age"
"""

#: Per kept setting, another value: a start giving it is refused (fixed) or says the change.
CHANGED = {
    "learner": "shifted-ols", "params": {"delta": 0.5}, "dimension": 4, "seed": 1,
    "features": [{"name": "income", "mean": 40.0}, {"name": "ratio"}, {"name": "age"}],
    "shadow": "shifted-ols", "shadow_params": {"delta": 0.2}, "publish": "outcomes:9",
    "min_interval": 5.0, "retain_days": 30.0, "warm_cap": 10, "max_batch": 50,
    "max_body": 2048, "body_timeout": 3.0, "snapshot_every": 500}


@pytest.fixture
def starts(monkeypatch, tmp_path, capsys):
    """``start(*flags)``: ``sat serve`` that opens, says what it says, and closes without
    serving; its exit status and its lines (stderr; stdout with ``out=True``)."""
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)

    def start(*flags: str, out: bool = False) -> tuple[int, list[str]]:
        capsys.readouterr()
        # (a free port: the start checks that it may listen; 8000 may be the README's)
        status = main(["serve", "--port", str(free_port()), *flags])
        said = capsys.readouterr()
        return status, (said.out if out else said.err).strip().splitlines()
    return start


@pytest.fixture
def made(starts, tmp_path):
    """A database made with :data:`SETTINGS` and a shadow; its URL."""
    (tmp_path / "service.toml").write_text(SETTINGS)
    url = f"sqlite:///{tmp_path}/made.db"
    status, err = starts("--config", str(tmp_path / "service.toml"), "--shadow", "sa-ols",
                         "--database", url)
    assert status == 0, err
    return url


def _copy(url: str, to: str) -> str:
    with sqlite3.connect(url.removeprefix("sqlite:///")) as source, \
            sqlite3.connect(to) as target:
        source.backup(target)
    return f"sqlite:///{to}"


def _kept(url: str) -> dict:
    engine = store.connect(url, create=False)
    with engine.connect() as conn:
        doc = settings.read(conn, "here")
    engine.dispose()
    return doc


def _said(err: list[str]) -> list[str]:
    """What a start said of its settings (the changes), without the settings shown."""
    return [line.removeprefix("sat serve: ") for line in err if " changed from " in line]


def test_a_restart_with_only_the_database_is_the_same_service(serve, tmp_path):
    (tmp_path / "service.toml").write_text(SETTINGS)
    server = serve("--config", str(tmp_path / "service.toml"), "--learner", "sa-ols",
                   "--shadow", "sa-ols")
    with server.client() as c:
        c.post("/decisions", json={"id": "a", "x": [55.0, 0.3, 40.0]}).raise_for_status()
        policy, page = c.get("/policy").json(), c.get("/operator").text
        words = c.get("/").text
        explained = c.get("/decisions/a").json()
    server.stop()
    server.args = []  # only --database (and --port)
    server.start()
    with server.client() as c:
        assert c.get("/policy").json() == policy
        assert c.get("/decisions/a").json() == explained
        again = c.get("/operator").text
        words_again = c.get("/").text
    assert policy["features"] == ["income", "ratio", "age"]
    assert policy["scaling"]["mean"] == [50.0, 0.3, 0.0]
    assert words_again == words and "yearly income" in words_again  # the applicants' page
    assert "x1" not in words_again and "x1" not in again
    assert ("shadow" in page.lower()) and ("shadow" in again.lower())
    log = server.log.read_text()
    assert "publish = \"outcomes:50\"" in log and " changed from " not in log


def test_every_kept_setting_left_out_changed_or_lost_is_accepted_or_one_line(
        made, starts, tmp_path):
    kept = _kept(made)
    assert set(kept) == set(settings.KEPT)
    # Shown as a --config file that states them all: a start from it changes nothing.
    status, shown = starts("settings", made, out=True)
    assert status == 0 and tomllib.loads("\n".join(shown)) == {
        k: v for k, v in kept.items() if v is not None and v != {}}
    for key in settings.KEPT:
        # Left out of a start that states every other: the kept value stands.
        stated = {k: v for k, v in kept.items() if k != key and v is not None}
        path = tmp_path / f"without-{key}.toml"
        path.write_text("\n".join(settings.toml_lines(stated)))
        status, err = starts("--config", str(path), "--database", made)
        assert status == 0 and _said(err) == [], (key, err)
        assert _kept(made) == kept, key
    for key, value in CHANGED.items():
        url = _copy(made, str(tmp_path / f"changed-{key}.db"))
        path = tmp_path / f"changed-{key}.toml"
        path.write_text("\n".join(settings.toml_lines({key: value})))
        status, err = starts("--config", str(path), "--database", url)
        if key in settings.CHANGEABLE:
            assert status == 0, (key, err)
            assert _said(err) == [f"{key} changed from {kept[key]!r} to {value!r}"
                                  if kept[key] is not None else
                                  f"{key} changed from unset to {value!r}"], (key, err)
            assert _kept(url)[key] == value
        else:
            assert status == 2 and len(err) == 1, (key, err)
            assert err[0].startswith(f"sat: error: database {url!r} was created with "
                                     f"{key}"), err
            assert "this start gives" in err[0] and "fixed by the database's log" in err[0]
            assert _kept(url) == kept, key
    # Lost from the database (a database made before the settings were kept has the fixed
    # ones only): a start with only --database runs on what is there.
    for key in [*settings.KEPT, "settings"]:
        url = _copy(made, str(tmp_path / f"lost-{key}.db"))
        engine = store.connect(url)
        with store.transaction(engine) as conn:
            doc = store.read_setting(conn, "settings")
            if key == "settings":
                conn.execute(store.service.delete().where(store.service.c.key == "settings"))
            else:
                del doc[key]
                store.write_setting(conn, "settings", doc)
        engine.dispose()
        status, err = starts("--database", url)
        assert status == 0, (key, err)
        now = _kept(url)
        assert all(now[k] == kept[k] for k in settings.FIXED if k != "features"), key
        assert [f["mean"] for f in now["features"]] == [50.0, 0.3, 0.0], key


def test_the_words_of_a_feature_change_and_its_scaling_does_not(made, starts):
    status, err = starts("--features", "pay,debt,years", "--database", made)
    assert status == 0, err
    assert _said(err) == ["features[0].name changed from 'income' to 'pay'",
                          "features[1].name changed from 'ratio' to 'debt'",
                          "features[2].name changed from 'age' to 'years'"]
    kept = _kept(made)["features"]
    assert [(f["name"], f["unit"], f["mean"]) for f in kept] == [
        ("pay", "k$", 50.0), ("debt", "", 0.3), ("years", "", 0.0)]
    # A stated default builds the same learner: no change, and the record stays as made.
    status, err = starts("--param", 'feedback="apple"', "--database", made)
    assert status == 0 and _said(err) == [], err
    assert _kept(made)["params"] == {"delta": 0.3, "r0": 0.0}
    status, err = starts("--param", 'feedback="bandit"', "--database", made)
    assert status == 2 and err == [
        f"sat: error: database {made!r} was created with params.feedback = 'apple', this start "
        "gives 'bandit': it is fixed by the database's log (leave it out to keep it, or use "
        "another database)"]


def test_settings_of_a_database_without_a_log_is_one_line(tmp_path, capsys):
    status = main(["serve", "settings", f"sqlite:///{tmp_path}/none.db"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "does not exist" in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_a_kept_setting_that_is_not_json_is_one_line(made, starts):
    engine = store.connect(made)
    with store.transaction(engine) as conn:
        conn.execute(store.service.update().where(store.service.c.key == "settings")
                     .values(value="{not json"))
    engine.dispose()
    status, err = starts("--database", made)
    assert status == 2 and len(err) == 1, err
    assert err[0].startswith(f"sat: error: database {made!r} keeps settings that are not "
                             "JSON"), err
    assert json.loads(json.dumps(err))  # one printable line


def test_the_settings_shown_are_toml_whatever_they_hold():
    doc = {"learner": "sa-ols", "seed": 3, "publish": "manual", "retain_days": None,
           "params": {"delta": 1e-05, "r0": -0.0, "cap": float("inf"), "gone": None,
                      "odd key": 'a"b\\c\x7f\x01é😀'},
           "features": [{"name": "=\tx", "unit": "€", "definition": "two\nlines",
                         "mean": -1e100, "scale": 2.5}]}
    lines = settings.toml_lines(doc)
    assert "# retain_days: unset" in lines and "# gone: null (TOML has none)" in lines
    assert tomllib.loads("\n".join(lines)) == {
        "learner": "sa-ols", "seed": 3, "publish": "manual",
        "params": {k: v for k, v in doc["params"].items() if v is not None},
        "features": doc["features"]}
