"""Secrets and private data: a database URL's password is never printed, the SQLite files are
private (0600), and ``sat serve play`` never takes its key on the command line."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.service import redact

from .conftest import SA_OLS, free_port

PASSWORD = "pw-Zq81-not-for-logs"


def _with_password(url: str) -> str:
    return url.replace("postgresql://sat@", f"postgresql://sat:{PASSWORD}@", 1)


def _one_line_without_the_password(err: str) -> str:
    assert err.startswith("sat: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and PASSWORD not in err, err
    return err


# -- passwords -------------------------------------------------------------------------------
def test_redact_masks_a_password_wherever_it_appears():
    url = f"postgresql://sat:{PASSWORD}@db.example:5432/service"
    assert redact.shown(url) == "postgresql://sat:***@db.example:5432/service"
    assert redact.shown("sqlite:////var/lib/sat/x.db") == "sqlite:////var/lib/sat/x.db"
    assert redact.shown("postgres://u:secret@h/db") == "postgres://u:***@h/db"
    assert PASSWORD not in redact.shown(f"postgresql+psycopg://sat:{PASSWORD}@h:notaport/db")
    said = (f'connection to "{url}" failed; dsn host=h password={PASSWORD} user=sat; '
            f"retry with password='{PASSWORD}' and {PASSWORD.upper()}")
    masked = redact.redact(said, url)
    assert PASSWORD not in masked and "password=***" in masked and "sat:***@" in masked
    assert redact.redact("GET http://host:8000/a@b", None) == "GET http://host:8000/a@b"


#: A PostgreSQL server that is not there (nothing listens on the port).
UNREACHABLE = f"postgresql://sat:{PASSWORD}@127.0.0.1:{{port}}/service"


@pytest.mark.parametrize("argv", [
    ["serve", "keys", "list"], ["serve", "keys", "create", "--name", "k"],
    ["serve", "keys", "revoke", "abc123"], ["serve", "check"], ["serve", *SA_OLS, "-d", "3"]])
def test_an_unreachable_postgresql_is_one_line_with_its_password_masked(argv, capsys,
                                                                         monkeypatch):
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("sat serve served"))
    monkeypatch.setenv("SAT_DATABASE", UNREACHABLE.format(port=free_port()))
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2 and out == "", (status, out)
    _one_line_without_the_password(err)
    assert "sat:***@127.0.0.1" in err and "cannot be used" in err, err


def test_a_password_is_never_printed_by_the_service_or_the_command_line(serve, postgres_db,
                                                                        capsys, monkeypatch):
    url = _with_password(postgres_db)
    monkeypatch.setenv("SAT_DATABASE", url)  # (the server below is given it as a flag)
    server = serve("--publish", "manual", database=url)
    log = server.log.read_text()
    assert "sat serve: sa-ols (all)" in log and "sat:***@127.0.0.1" in log, log
    assert PASSWORD not in log
    standby = serve("--publish", "manual", database=url)  # it stands by, saying so
    said = standby.log.read_text()
    assert "already has a learner running" in said and "sat:***@127.0.0.1" in said, said
    assert PASSWORD not in said and "+psycopg" not in said  # the URL as typed, masked
    standby.kill()
    assert main(["serve", "keys", "list"]) == 0
    assert main(["serve", "keys", "create", "--name", "pw"]) == 0
    server.stop()
    assert main(["serve", "check"]) == 0
    out, err = capsys.readouterr()
    assert "bit for bit" in out and PASSWORD not in out + err
    # A start with other settings is refused naming the database, masked.
    status = main(["serve", *SA_OLS, "-d", "4", "--port", str(free_port())])
    assert status == 2
    err = _one_line_without_the_password(capsys.readouterr().err)
    assert "sat:***@" in err and "created with dimension = 3" in err
    assert PASSWORD not in server.log.read_text()


# -- private files ---------------------------------------------------------------------------
def test_the_sqlite_files_are_created_private(serve, tmp_path, capsys):
    before = os.umask(0o022)  # the usual umask, which leaves new files world-readable
    try:
        server = serve("--publish", "manual")
        assert main(["serve", "keys", "create", "--name", "k",
                     "--database", f"sqlite:///{tmp_path}/keys-first.db"]) == 0
    finally:
        os.umask(before)
    with server.client() as c:
        assert c.post("/decisions", json={"id": "private-1", "x": [0.1, 0.2, 0.3]}
                      ).status_code == 200
    path = Path(server.database.removeprefix("sqlite:///"))
    files = [path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}.learner-lock"),
             tmp_path / "keys-first.db"]
    modes = {f.name: oct(stat.S_IMODE(os.stat(f).st_mode)) for f in files}
    assert set(modes.values()) == {"0o600"}, modes


# -- the key of sat serve play ---------------------------------------------------------------
PLAY = ["--seed", "3", "--dimension", "3", "--delta", "0.3", "--horizon", "6"]


def test_play_takes_its_key_from_the_environment_or_a_file(serve, tmp_path, monkeypatch,
                                                           capsys):
    by_env, by_file = (serve("--publish", "manual", "--seed", "3") for _ in range(2))
    monkeypatch.setenv("SAT_KEY", by_env.key)
    assert main(["serve", "play", "--url", by_env.url, *PLAY]) == 0
    monkeypatch.delenv("SAT_KEY")
    key_file = tmp_path / "play.key"
    key_file.write_text(by_file.key + "\n")
    assert main(["serve", "play", "--url", by_file.url, "--key-file", str(key_file), *PLAY]) == 0
    out = capsys.readouterr().out
    assert out.count("6 rounds over the wire") == 2, out
    # Neither given: one line that says where a key goes.
    assert main(["serve", "play", "--url", by_file.url, *PLAY]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "set SAT_KEY or give --key-file FILE" in err, err


def test_play_refuses_a_key_on_the_command_line(capsys):
    status = main(["serve", "play", "--url", "http://127.0.0.1:1", "--key", "sat_ab_cd", *PLAY])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert "where `ps` shows it" in err and "SAT_KEY" in err and "sat_ab_cd" not in err


# -- the database URL off the command line ---------------------------------------------------
def test_the_database_url_comes_from_a_file_the_environment_or_the_settings(
        tmp_path, monkeypatch, capsys):
    url = f"sqlite:///{tmp_path}/where.db"
    assert main(["serve", "keys", "create", "--name", "where", "--database", url]) == 0
    key_id = capsys.readouterr().out.split("_")[1]
    url_file = tmp_path / "database.url"
    url_file.write_text(url + "\n")
    settings = tmp_path / "service.toml"
    settings.write_text(f'database = "{url}"\n')
    monkeypatch.chdir(tmp_path)  # the default database (sat-service.db) would be made here
    for argv, env in ((["--database-file", str(url_file)], None), ([], url),
                      (["--config", str(settings)], None)):
        if env is None:
            monkeypatch.delenv("SAT_DATABASE", raising=False)
        else:
            monkeypatch.setenv("SAT_DATABASE", env)
        assert main(["serve", "keys", "list", *argv]) == 0, argv
        out, err = capsys.readouterr()
        assert out.startswith(f"{key_id}\tactive\twhere\t") and err == "", (argv, out, err)
    # The order: the command line, then the environment, then the settings.
    monkeypatch.setenv("SAT_DATABASE", f"sqlite:///{tmp_path}/elsewhere.db")
    assert main(["serve", "keys", "list", "--config", str(settings)]) == 2
    assert "elsewhere.db' does not exist" in capsys.readouterr().err
    assert main(["serve", "keys", "list", "--database-file", str(url_file)]) == 0
    assert main(["serve", "keys", "list", "--database", url, "--database-file",
                 str(url_file)]) == 2
    assert capsys.readouterr().err.endswith("give the database as --database URL or "
                                            "--database-file FILE, not both\n")
    assert not (tmp_path / "sat-service.db").exists()


def test_a_password_on_the_command_line_or_in_a_shared_file_warns(tmp_path, monkeypatch,
                                                                  capsys):
    url = UNREACHABLE.format(port=free_port())
    assert main(["serve", "keys", "list", "--database", url]) == 2
    warning, error = capsys.readouterr().err.splitlines()
    assert warning == ("sat serve: warning: --database puts the database's password where "
                       "`ps` shows it to every user of the machine: give it in a file "
                       "(--database-file FILE, mode 0600), the environment (SAT_DATABASE=...) "
                       "or the settings (--config FILE: database = \"...\")")
    assert error.startswith("sat: error: ") and PASSWORD not in warning + error
    # The controls: no warning for the same URL from the environment or a private file, nor
    # for a URL without a password on the command line.
    monkeypatch.setenv("SAT_DATABASE", url)
    assert main(["serve", "keys", "list"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    monkeypatch.delenv("SAT_DATABASE")
    url_file = tmp_path / "database.url"
    url_file.write_text(url)
    url_file.chmod(0o600)
    assert main(["serve", "keys", "list", "--database-file", str(url_file)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["serve", "keys", "list", "--database", url.replace(f":{PASSWORD}", "")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    url_file.chmod(0o644)
    assert main(["serve", "keys", "list", "--database-file", str(url_file)]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"sat serve: warning: --database-file {str(url_file)!r} holds a password and other "
        f"users may read it (mode 0644): chmod 600 {url_file}")
