"""``sat serve``: run the decision service, manage its API keys, check its log, play the game
against it.

* ``sat serve [--config FILE] [flags]``: serve (until Ctrl-C);
* ``sat serve keys create --name NAME [--scope S,S] [--expires DAYS|DATE] [--out FILE]`` /
  ``keys revoke ID`` / ``keys list`` / ``keys access-log``;
* ``sat serve backup --out FILE``: a copy of a live SQLite database (SQLite's online backup);
* ``sat serve check``: replay the log from nothing and compare with the saved learner, and
  learn the log after it, reporting the entries a learner skipped (or would skip); exit
  status 1 naming where a replay diverges;
* ``sat serve settings [URL]``: the settings the database keeps, as a ``--config`` file;
* ``sat serve export --out FOLDER [--since T] [--until T] [--format csv|parquet] [--force]``:
  the decisions, outcomes and rules written in a time range, and their history as
  ``--start-log`` reads it, one file each (it changes nothing in the database);
* ``sat serve rollback VERSION``, ``sat serve shadows attach NAME`` / ``detach NAME`` /
  ``list``, ``sat serve promote NAME``: change a running service (``--url``, with an API key);
* ``sat serve play --url URL [--key-file FILE] [game flags]``: the strategic game over the
  wire, with ``--compare`` to check it against the engine in process. The API key comes from
  the environment (``SAT_KEY``) or a file, never from the command line, where ``ps`` shows it
  to every user of the machine.

A database URL is shown with its password masked, in every line printed; it may come from
a file, the environment or the settings instead of the command line (:mod:`.database_url`).
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import contextmanager
from typing import Any

EXTRA = "the decision service needs the 'serve' extra: pip install 'strategic-apple-tasting[serve]'"
#: The environment variable that gives ``sat serve`` its database URL.
DATABASE_VARIABLE = "SAT_DATABASE"


def _param(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--param must be NAME=VALUE, got {text!r}")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def _database_flags(p: argparse.ArgumentParser, sub: bool = False) -> None:
    """``--config``, ``--database`` and ``--database-file``; a subcommand's (``sub``) leave
    unset what was given before the subcommand (``sat serve --database URL keys list``)."""
    unset = argparse.SUPPRESS if sub else None
    p.add_argument("--config", metavar="FILE", default=unset,
                   help="the service's TOML settings (its database = \"URL\" too)")
    p.add_argument("--database", metavar="URL", default=unset,
                   help="sqlite:///FILE (default sqlite:///sat-service.db) or "
                   "postgresql://USER@HOST/NAME; a URL with a password belongs in "
                   f"--database-file, {DATABASE_VARIABLE} or --config, not here")
    p.add_argument("--database-file", metavar="FILE", default=unset,
                   help="a file holding the database URL (keep it 0600); else the "
                   f"environment's {DATABASE_VARIABLE}, else --config's database")


def fill_serve(p: argparse.ArgumentParser) -> None:
    """``sat serve``'s flags and their help.

    Why it is long: one declaration per flag, in the order ``--help`` shows them; split, it
    would only scatter the command's help."""
    from .common import (
        Parser,
        add_game_flags,
        int_in,
        learner_name,
        name_list,
        number,
        positive_int,
    )
    from .remote import remote_flags

    _database_flags(p)
    p.add_argument("--learner", "-l", type=learner_name, help="learner (default sa-ols)")
    p.add_argument("--param", type=_param, action="append", metavar="NAME=VALUE",
                   help="a learner parameter (repeat), e.g. --param delta=0.3 --param r0=0")
    p.add_argument("--dimension", "-d", type=int_in("--dimension", 1, 10_000),
                   help="features per applicant")
    p.add_argument("--features", type=name_list("--features"), metavar="A,B,...",
                   help="the features' names, in order")
    p.add_argument("--seed", type=int_in("--seed", 0), help="the learner's seed (default 0)")
    p.add_argument("--publish", metavar="CADENCE",
                   help="manual, outcomes:K or period:SECONDS, or both joined by a comma "
                   "(outcomes:100,period:3600: whichever comes first; default outcomes:100)")
    p.add_argument("--min-interval", type=number("--min-interval"), metavar="SECONDS",
                   help="seconds at least between two publications by the cadence (default 0)")
    p.add_argument("--warm-cap", type=int_in("--warm-cap", 0), metavar="N",
                   help="acceptances allowed in all under rules published before any outcome "
                   "was learned (default: no cap)")
    p.add_argument("--explore", type=number("--explore"), metavar="SHARE",
                   help="accept this share (at most 0.2) of the applicants a learned rule "
                   "rejects, at random, each decision's propensity logged for sat serve "
                   "evaluate (default 0)")
    p.add_argument("--contact", metavar="TEXT",
                   help="how a rejected applicant reaches the lender (shown on the applicants' "
                   "page), e.g. 'loans@lender.example, +1 555 0100'")
    p.add_argument("--retain-days", type=number("--retain-days"), metavar="DAYS",
                   help="drop log entries this old once a saved learner holds them (default: "
                   "keep for ever)")
    p.add_argument("--shadow", type=learner_name, metavar="LEARNER",
                   help="a candidate learner fed the same log, never answering (compared on "
                   "the page)")
    p.add_argument("--shadow-param", type=_param, action="append", metavar="NAME=VALUE",
                   help="a parameter of the shadow learner (repeat)")
    start = p.add_mutually_exclusive_group()
    start.add_argument("--start-rule", metavar="FILE",
                       help="a new database's first rule: JSON {beta, threshold} (GET /policy "
                       "of another service is one)")
    start.add_argument("--start-learner", metavar="FILE",
                       help="a new database's learner: a saved learner of the same kind and "
                       "parameters (sat's persistence)")
    start.add_argument("--start-log", metavar="FILE",
                       help="a new database's history: CSV or Parquet of past decisions and "
                       "outcomes (a column per feature, accepted, outcome), learned first")
    p.add_argument("--rate-limit", type=number("--rate-limit"), metavar="PER_SECOND",
                   help="requests a second each API key may make, per worker, else 429 with "
                   "Retry-After (a burst of one second's worth; default 0: no limit)")
    p.add_argument("--max-batch", type=positive_int("--max-batch"),
                   help="applicants or outcomes per request (default 10000)")
    p.add_argument("--max-body", type=int_in("--max-body", 1024),
                   help="bytes per request body (default 4 MiB)")
    p.add_argument("--body-timeout", type=number("--body-timeout"), metavar="SECONDS",
                   help="seconds a request's body may take to arrive, else 408 (default 10)")
    p.add_argument("--snapshot-every", type=positive_int("--snapshot-every"),
                   help="log entries between saved learner states (default 10000)")
    p.add_argument("--snapshot-minutes", type=number("--snapshot-minutes"), metavar="MINUTES",
                   help="minutes at most between saved learner states while the log grows "
                   "(default 60)")
    p.add_argument("--max-groups", type=positive_int("--max-groups"), metavar="N",
                   help="distinct group labels counted at most; a request bringing one more is "
                   "refused (default 1000)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                   "127.0.0.1; 0.0.0.0 for every interface)")
    p.add_argument("--port", type=int_in("--port", 1, 65535), default=8000,
                   help="port (default 8000)")
    p.add_argument("--role", choices=("all", "decide"), default="all",
                   help="all: decide and learn (one per database); decide: decide only "
                   "(more workers beside the one that learns)")
    sub = p.add_subparsers(dest="action", parser_class=Parser)
    keys = sub.add_parser("keys", help="create, revoke or list API keys")
    keys_sub = keys.add_subparsers(dest="keys_action", required=True, parser_class=Parser)
    create = keys_sub.add_parser("create", help="create a key (printed once, or written to "
                                 "a 0600 file with --out)")
    create.add_argument("--name", required=True, help="who or what uses the key")
    create.add_argument("--scope", metavar="S,S",
                        help="what the key may do, from decide, report (outcomes), explain "
                        "(GET /decisions/{id}) and admin (publish, rollback), joined by "
                        "commas; default decide,report (service.keys.DEFAULT_SCOPES)")
    create.add_argument("--expires", metavar="DAYS|DATE",
                        help="the key stops working after DAYS days or on DATE (ISO 8601, UTC "
                        "unless it says); default never")
    create.add_argument("--out", metavar="FILE",
                        help="write the key into FILE, mode 0600 (a shell's > gives it the "
                        "umask's mode, often readable by every user)")
    create.add_argument("--force", action="store_true", help="replace an existing --out file")
    _database_flags(create, sub=True)
    revoke = keys_sub.add_parser("revoke", help="revoke a key")
    revoke.add_argument("id", help="the key's id (or the whole key)")
    _database_flags(revoke, sub=True)
    listing = keys_sub.add_parser("list", help="list keys: id, state, name, scopes, expiry, "
                                  "last use (never secrets)")
    _database_flags(listing, sub=True)
    reads = keys_sub.add_parser("access-log", help="who read which applicant's explanation, "
                                "and when")
    reads.add_argument("--decision", metavar="ID", help="only this decision's reads")
    reads.add_argument("--key", metavar="ID", help="only this key's reads")
    reads.add_argument("--since", metavar="TIME", help="only reads at or after TIME (ISO "
                       "8601, UTC unless it says; or unix seconds)")
    _database_flags(reads, sub=True)
    backup = sub.add_parser("backup", help="copy a live SQLite database into a 0600 file "
                            "(SQLite's online backup; PostgreSQL: pg_dump)")
    backup.add_argument("--out", required=True, metavar="FILE", help="the copy's file")
    backup.add_argument("--force", action="store_true", help="replace an existing --out file")
    _database_flags(backup, sub=True)
    check = sub.add_parser("check", help="replay the log from nothing; compare with the "
                           "saved learner; learn the rest of the log")
    _database_flags(check, sub=True)
    shown = sub.add_parser("settings", help="show the settings the database keeps (as a "
                           "--config file)")
    shown.add_argument("url", nargs="?", metavar="URL",
                       help="the database (or --database URL)")
    _database_flags(shown, sub=True)
    export = sub.add_parser("export", help="write decisions, outcomes, rules and the history "
                            "(by time range) to CSV or Parquet files in a folder")
    export.add_argument("--out", required=True, metavar="FOLDER",
                        help="the folder to write decisions, outcomes and rules into")
    export.add_argument("--since", metavar="TIME", help="rows written at or after TIME "
                        "(ISO 8601, UTC unless it says; or unix seconds)")
    export.add_argument("--until", metavar="TIME", help="rows written before TIME")
    export.add_argument("--format", choices=("csv", "parquet"), default="csv",
                        help="csv (default) or parquet")
    export.add_argument("--force", action="store_true",
                        help="overwrite files an earlier export left in the folder")
    _database_flags(export, sub=True)
    evaluate = sub.add_parser("evaluate", help="estimate from the log what a candidate rule "
                              "would have earned (inverse propensity, doubly robust)")
    which = evaluate.add_mutually_exclusive_group(required=True)
    which.add_argument("--rule", metavar="FILE",
                       help="a candidate rule: JSON {beta, threshold}, on the standardized "
                       "features as GET /policy shows them")
    which.add_argument("--version", type=positive_int("--version"), metavar="N",
                       help="a rule the service published (an earlier or the current one)")
    which.add_argument("--shadow", nargs="?", const="shadow", metavar="NAME",
                       help="a shadow's newest rule (default: the settings' shadow, named "
                       "shadow)")
    _database_flags(evaluate, sub=True)
    rollback = sub.add_parser("rollback", help="put an earlier rule back in force on a running "
                              "service (a new version naming it; the learner keeps learning)")
    rollback.add_argument("version", type=positive_int("version"),
                          help="the rule version to restore (GET /policy/history lists them)")
    shadows = sub.add_parser("shadows", help="attach, detach or list the shadow learners of a "
                             "running service")
    shadows_sub = shadows.add_subparsers(dest="shadows_action", required=True,
                                         parser_class=Parser)
    attach = shadows_sub.add_parser("attach", help="attach a shadow learner, fed the log from "
                                    "now on")
    attach.add_argument("name", help="the shadow's name (letters, digits, -, _, .)")
    attach.add_argument("--learner", "-l", required=True, type=learner_name,
                        help="the shadow's learner")
    attach.add_argument("--param", type=_param, action="append", metavar="NAME=VALUE",
                        help="a parameter of the shadow's learner (repeat)")
    attach.add_argument("--base", metavar="FILE",
                        help="a saved learner to start from (as --start-learner reads one)")
    attach.add_argument("--canary", type=number("--canary"), metavar="SHARE",
                        help="the share of applicants its rule decides instead of the live "
                        "rule (default 0: it never answers)")
    detach = shadows_sub.add_parser("detach", help="detach a shadow learner")
    detach.add_argument("name", help="the shadow's name")
    listed = shadows_sub.add_parser("list", help="list the shadows attached (with their "
                                    "agreement with the live rule)")
    promote = sub.add_parser("promote", help="put a shadow's rule in force on a running "
                             "service (a new version; the live learner keeps learning)")
    promote.add_argument("name", help="the shadow's name")
    for command in (rollback, attach, detach, listed, promote):
        remote_flags(command, "the service's learning worker, e.g. http://127.0.0.1:8000")
    play = sub.add_parser("play", help="play the strategic game against a running service")
    remote_flags(play, "the service, e.g. http://127.0.0.1:8000")
    play.add_argument("--horizon", "-T", type=positive_int("--horizon"), default=1000,
                      help="rounds (default 1000)")
    play.add_argument("--seed", type=int_in("--seed", 0), default=0,
                      help="the game's seed (default 0; the service's --seed must match)")
    play.add_argument("--compare", action="store_true",
                      help="also play the game in process with the service's learner and "
                      "compare decisions, rules and regret")
    add_game_flags(play)


def _config(args: argparse.Namespace) -> Any:
    """The settings as given, over the defaults (what a command that is not a start reads:
    the database's URL)."""
    from ..service.config import ServiceConfig

    return ServiceConfig(**_given(args))


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The settings a start states: its ``--config`` file's, flags over them (None: not
    stated; a restart takes those from its database)."""
    from ..service.config import ServiceConfig

    given = {"learner": getattr(args, "learner", None),
             "dimension": getattr(args, "dimension", None),
             "features": getattr(args, "features", None), "seed": getattr(args, "seed", None),
             "publish": getattr(args, "publish", None), "database": args.database,
             "max_batch": getattr(args, "max_batch", None),
             "max_body": getattr(args, "max_body", None),
             "body_timeout": getattr(args, "body_timeout", None),
             "snapshot_every": getattr(args, "snapshot_every", None)}
    for name in ("min_interval", "warm_cap", "explore", "contact", "retain_days",
                 "snapshot_minutes", "max_groups", "shadow", "start_rule",
                 "start_learner", "start_log", "rate_limit"):
        given[name] = getattr(args, name, None)
    stated = ServiceConfig.read_file(args.config) if args.config else {}
    stated.update({k: v for k, v in given.items() if v is not None})
    for table, flag in (("params", "param"), ("shadow_params", "shadow_param")):
        entries = stated.get(table)
        stated[table] = {**(entries if isinstance(entries, dict) else {}),
                         **dict(getattr(args, flag, None) or [])}
        if entries is not None and not isinstance(entries, dict):
            stated[table] = entries  # refused by the settings' check, in one line
    return stated


@contextmanager
def _database_errors(url: str) -> Any:
    """A database that cannot be reached or used, inside the block, is a ``ValueError`` in one
    line (the URL's password masked) instead of the driver's traceback."""
    import sqlalchemy as sa

    from ..service.redact import reason, shown
    from ..service.sqlite_file import DatabaseLost

    try:
        yield
    except (sa.exc.SQLAlchemyError, DatabaseLost) as exc:
        raise ValueError(f"database {shown(url)!r} cannot be used: "
                         f"{reason(exc, url)}") from None


def _engine(args: argparse.Namespace, write: bool = True) -> Any:
    """The database's engine: migrated to the newest schema (a command that writes), or, for
    one that only reads (``write=False``), a database that must exist already at the newest
    schema: nothing is created or upgraded by a read."""
    from ..service import store

    url = _config(args).database
    engine = store.connect(url, create=write)
    try:
        with _database_errors(url):
            if write:
                store.migrate(engine)
            else:
                store.require_head(engine, url)
    except BaseException:
        engine.dispose()
        raise
    return engine


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise ValueError(EXTRA) from None
    action = args.action
    if action == "settings" and getattr(args, "url", None) is not None:
        if getattr(args, "database", None) not in (None, args.url):
            raise ValueError(f"sat serve settings: give the database once, not "
                             f"{args.url!r} and --database {args.database!r}")
        args.database = args.url
    if action not in ("play", "rollback"):  # (they reach a service, not a database)
        from .database_url import resolve

        # Once, here: every later _config(args) reads the URL as resolved, and warns no more.
        args.database = resolve(args)
        args.database_file = None
    if action in ("keys", "check", "export", "evaluate", "backup", "settings"):
        with _database_errors(_config(args).database):
            return {"keys": _keys, "check": _check, "export": _export,
                    "evaluate": _evaluate, "backup": _backup,
                    "settings": _settings}[action](args)
    if action == "play":
        return _play(args)
    if action == "rollback":
        return _rollback(args)
    if action in ("shadows", "promote"):
        from .shadows import cmd_shadows

        return cmd_shadows(args)
    from ..service import settings
    from ..service.server import serve

    serve(settings.resolve(_given(args)), args.host, args.port, args.role)
    return 0


def _stored(args: argparse.Namespace, engine: Any, need_saved: bool = True
            ) -> tuple[Any, int | None]:
    """The settings the database keeps, as a config on its URL, and the log position of the
    newest saved learner; a ``ValueError`` in one line for a database without a service's
    log (without a saved learner, where ``need_saved``)."""
    import sqlalchemy as sa

    from ..service import settings, store
    from ..service.redact import shown

    url = _config(args).database
    where = f"database {shown(url)!r}"
    with engine.connect() as conn:
        stored = settings.read(conn, where)
        saved = conn.execute(sa.select(sa.func.max(store.learner_state.c.seq))).scalar()
    if stored is None or (saved is None and need_saved):
        raise ValueError(f"{where} has no service's log (start `sat serve` on it first)")
    return settings.merge(stored, {"database": url}), saved


def _settings(args: argparse.Namespace) -> int:
    from ..service import settings
    from ..service.redact import shown

    engine = _engine(args, write=False)
    try:
        config, _ = _stored(args, engine, need_saved=False)
    finally:
        engine.dispose()
    print(f"# the settings database {shown(config.database)!r} keeps (a --config file: "
          "a start may change the cadence, retention, the cap, the limits and the features' "
          "words; the rest is fixed by its log)")
    for line in settings.toml_lines(settings.kept(config)):
        print(line)
    return 0


def _keys(args: argparse.Namespace) -> int:
    from ..service import keys, store

    if args.keys_action == "create":  # every flag checked before the key is made
        scopes = keys.parse_scopes(args.scope or keys.DEFAULT_SCOPES)
        expires = None if args.expires is None else keys.parse_expiry(args.expires)
        if args.out is not None:
            from .private_file import check_target

            check_target(args.out, "--out", args.force)
    engine = _engine(args, write=args.keys_action in ("create", "revoke"))
    try:
        if args.keys_action == "create":
            _create_key(engine, args, scopes, expires)
        elif args.keys_action == "revoke":
            keys.revoke_key(engine, args.id)
            print(f"revoked {args.id}")
        elif args.keys_action == "access-log":
            from ..service.export import parse_time

            since = None if args.since is None else parse_time("--since", args.since)
            for read in keys.access_log(engine, args.decision, args.key, since):
                print(f"{keys.when(read['read_at'])}\t{read['key_id']}\t"
                      f"{read['name'] or '(deleted)'}\t{read['decision_id']}")
        else:
            now = store.now()
            for k in keys.list_keys(engine):
                state = ("revoked" if k["revoked_at"] else "expired"
                         if k["expires_at"] is not None and k["expires_at"] <= now
                         else "active")
                print(f"{k['id']}\t{state}\t{k['name']}\t{','.join(k['scopes'])}\t"
                      f"expires {keys.when(k['expires_at'])}\t"
                      f"last used {keys.when(k['last_used_at'])}")
    finally:
        engine.dispose()
    return 0


def _create_key(engine: Any, args: argparse.Namespace, scopes: tuple[str, ...],
                expires: float | None) -> None:
    """Make the key; print it, or write it into ``--out`` (0600), revoking it if that
    fails (a key nobody holds is no use, and one half-written is a risk)."""
    from ..service import keys

    key = keys.create_key(engine, args.name, scopes, expires)
    said = (f"scopes {','.join(scopes)}, expires {keys.when(expires)}; keep this key: only "
            "its hash is stored")
    if args.out is None:
        print(key)
        print(f"sat serve: {said}", file=sys.stderr)
        return
    from .private_file import write_text

    try:
        write_text(args.out, key + "\n", "--out")
    except BaseException:
        keys.revoke_key(engine, key)
        raise
    print(f"key {key.split('_')[1]} written to {args.out} (mode 0600); {said}")


def _backup(args: argparse.Namespace) -> int:
    from ..service.backup import backup, sqlite_path
    from ..service.redact import shown
    from .private_file import check_target, write_private

    url = _config(args).database
    sqlite_path(url)  # PostgreSQL is refused before anything is read
    check_target(args.out, "--out", args.force)
    engine = _engine(args, write=False)  # it exists, at the newest schema
    engine.dispose()
    counts: dict[str, int] = {}
    write_private(args.out, lambda into: counts.update(backup(url, into)), "--out")
    print(f"backed up {shown(url)} to {args.out} (mode 0600): {counts['decisions']:,} "
          f"decisions, {counts['outcomes']:,} outcomes")
    return 0


def _check(args: argparse.Namespace) -> int:
    import sqlalchemy as sa

    from ..service import learning, store

    engine = _engine(args, write=False)
    try:
        why = store.damaged(engine)
        if why is not None:  # (reads could pass over the damaged pages)
            print(f"the database is damaged (PRAGMA quick_check: {why}): restore it from a "
                  "backup (sat serve backup)")
            return 1
        config, saved = _stored(args, engine)
        try:
            from_saved = learning.restore(engine, config, upto=saved)
            replayed = learning.restore(engine, config, upto=saved, saved=False)
            differences = learning.state_differences(from_saved.learner, replayed.learner)
            differences += _shadow_differences(from_saved, replayed)
            # The log past the saved learner (what the learner has yet to learn, or could not
            # learn) must be learnable too: a learner started on it would stop there.
            with engine.connect() as conn:
                end = conn.execute(sa.select(sa.func.max(store.log_counter.c.seq))).scalar()
                k = store.skipped_entries
                skipped = [r._asdict() for r in conn.execute(
                    sa.select(k).order_by(k.c.seq, k.c.id))]
            ahead = learning.restore(engine, config, upto=max(saved, end or 0)).skipped
        except learning.SavedStateError:
            raise  # bad input: one line, exit status 2
        except ValueError as exc:  # an entry the learner refuses, or a replay that diverged
            print(f"the log cannot be replayed: {exc}")
            return 1
    finally:
        engine.dispose()
    if differences:
        print(f"the log replayed from nothing differs from the saved learner (position {saved})"
              f" in: {', '.join(differences)}")
        return 1
    print(f"the log replayed from nothing gives the saved learner at position {saved}, bit "
          f"for bit ({replayed.learned} outcomes learned, rule version {replayed.version}), "
          f"and the log after it, to position {max(saved, end or 0)}, can be learned"
          + "".join(f"; {_skips(rows, what)}" for rows, what in (
              (skipped, "skipped"), (ahead, "to skip (not learned yet)")) if rows))
    return 0


def _skips(rows: list[Any], what: str) -> str:
    """``N entries skipped ..., the first at position S (decision ID: reason)``."""
    first = rows[0]
    who = "" if first["shadow"] is None else f" by shadow {first['shadow']!r}"
    return (f"{len(rows)} {'entry' if len(rows) == 1 else 'entries'} {what}, the first at "
            f"position {first['seq']}{who} (decision {first['decision_id']!r}: "
            f"{first['reason']})")


def _shadow_differences(saved: Any, replayed: Any) -> list[str]:
    """Where the shadows of two rebuilt learners differ: which are attached, and each one's
    saved state (the settings' shadow is "the shadow learner")."""
    from ..service import learning

    mine, theirs = saved.shadows, replayed.shadows
    if list(mine) != list(theirs):
        return [f"the shadows attached ({', '.join(mine) or 'none'} against "
                f"{', '.join(theirs) or 'none'})"]
    out = []
    for name in mine:
        label = "the shadow learner's" if name == "shadow" and saved.shadow is not None \
            else f"shadow {name!r}'s"
        out += [f"{label} {d}" for d in
                learning.state_differences(mine[name].learner, theirs[name].learner)]
    return out


def _evaluate(args: argparse.Namespace) -> int:
    import numpy as np
    import sqlalchemy as sa

    from ..game.policies import LinearThreshold
    from ..service import store, warmstart
    from ..service.candidates import newest_rule
    from ..service.evaluation import evaluate, format_estimate, read_logged
    from ..service.groups import rule_shift

    engine = _engine(args, write=False)
    try:
        config, _ = _stored(args, engine, need_saved=False)
        if args.rule is not None:
            label = f"rule {args.rule}"
            candidate = warmstart.read_rule(f"--rule {args.rule!r}", args.rule, config)
        else:
            r = store.rules
            with engine.connect() as conn:
                row = (newest_rule(conn, args.shadow) if args.shadow else conn.execute(
                    sa.select(r).where(r.c.version == args.version)).first())
            if row is None:
                raise ValueError(f"--shadow {args.shadow}: the service has no rule of shadow "
                                 f"{args.shadow!r}" if args.shadow else
                                 f"--version {args.version}: the service published no such "
                                 "rule")
            label = (f"shadow {args.shadow!r}'s rule version {row.version}" if args.shadow
                     else f"rule version {row.version}")
            candidate = store.rule_of(row)
        logged = read_logged(engine, config)
    finally:
        engine.dispose()
    estimate = evaluate(logged, candidate)
    # Under gaming: the applicants within the candidate's reach (the learner's δ at the
    # candidate's β) would move up to its threshold, so it accepts them too.
    reach = rule_shift(config.make_learner(), np.asarray(candidate.beta, dtype=float))
    gamed = None if reach <= 0.0 else evaluate(
        logged, LinearThreshold(candidate.beta, candidate.threshold - reach))
    print(format_estimate(estimate, label))
    if gamed is not None:
        print(format_estimate(gamed, f"{label}, if applicants game it within the learner's δ "
                              f"(everyone within {reach:.4g} of its threshold moves up to it)"))
    return 0


def _export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..service import export

    since = None if args.since is None else export.parse_time("--since", args.since)
    until = None if args.until is None else export.parse_time("--until", args.until)
    if since is not None and until is not None and until <= since:
        raise ValueError(f"--until {args.until!r} must come after --since {args.since!r}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {args.out!r} is a file: give a folder")
    there = export.existing(out, args.format)
    if there and not args.force:
        raise ValueError(f"--out {args.out!r} holds {there[0].name} already (an earlier "
                         "export's?): give --force to overwrite it, or another folder")
    engine = _engine(args, write=False)
    try:
        config, _ = _stored(args, engine, need_saved=False)
        tables = export.frames(engine, config.names(), since, until, config.bandit())
    finally:
        engine.dispose()
    try:
        written = export.write(tables, out, args.format)
    except OSError as exc:
        raise ValueError(f"--out {args.out!r} cannot be written ({exc.strerror})") from None
    for path in written:
        print(f"{path}\t{len(tables[path.stem]):,} rows")
    return 0


def _rollback(args: argparse.Namespace) -> int:
    from .remote import api_key, post

    key = api_key(args, "sat serve rollback")
    doc = post(args.url, "/rollback", {"version": args.version}, key, "sat serve rollback")
    if doc is None:
        return 1
    print(f"rule version {doc['version']} is in force: it restores version {doc['restores']} "
          f"(beta {doc['beta']}, threshold {doc['threshold']})")
    return 0


def _play(args: argparse.Namespace) -> int:
    from ..learners import make_learner
    from ..learners.encoding import from_jsonable
    from ..service import wire
    from .common import game_from_args
    from .remote import api_key

    key = api_key(args, "sat serve play")
    game = game_from_args(args)
    run = wire.play_over_the_wire(args.url, key, game, args.seed, args.horizon)
    print(f"{args.horizon} rounds over the wire ({run.requests} requests): regret "
          f"{run.regret:.6g}, accepted {sum(run.accepted)}, rules published {len(run.rules)}")
    if not args.compare:
        return 0
    import httpx

    try:
        doc = httpx.get(args.url.rstrip("/") + "/policy", timeout=30).json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ValueError(f"--url {args.url!r}: GET /policy failed ({exc})") from None
    learner = make_learner(doc["learner"], **from_jsonable(doc["params"]))
    here = wire.play_in_process(game, learner, args.seed, args.horizon)
    differences = wire.compare_with_engine(run, here)
    if differences:
        print("differs from the engine in process: " + "; ".join(differences))
        return 1
    print(f"the same as the engine in process: every decision, every rule, regret "
          f"{here.regret:.6g}")
    return 0
