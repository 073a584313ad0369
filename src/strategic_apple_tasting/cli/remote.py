"""What every command that reaches a running service over its API shares (``sat serve play``,
``rollback``, ``shadows``, ``promote``): its flags, its API key, and one request's answer.

The API key comes from ``--key-file`` or the environment's ``SAT_KEY``, never from the command
line: ``ps`` shows every process's arguments to every user of the machine (and the shell keeps
them in its history)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

#: The environment variable that gives a command its API key.
KEY_VARIABLE = "SAT_KEY"


def remote_flags(p: argparse.ArgumentParser, url_help: str) -> None:
    """``--url`` (required), ``--key-file``, and ``--key`` (refused: see :func:`api_key`)."""
    p.add_argument("--url", required=True, help=url_help)
    p.add_argument("--key-file", metavar="FILE",
                   help=f"a file holding the API key (else the environment's {KEY_VARIABLE})")
    p.add_argument("--key", help=argparse.SUPPRESS)


def api_key(args: argparse.Namespace, command: str) -> str:
    """The API key ``command`` sends: from ``--key-file`` or :data:`KEY_VARIABLE`; a key
    given on the command line is refused in one line."""
    if args.key is not None:
        raise ValueError(f"--key puts the API key where `ps` shows it to every user: give it in "
                         f"the environment ({KEY_VARIABLE}=...) or in a file (--key-file FILE), "
                         "and revoke this one if others share the machine")
    if args.key_file is not None:
        try:
            with open(args.key_file, encoding="utf-8") as f:
                key = f.read(4096).strip()
        except FileNotFoundError:
            raise ValueError(f"--key-file {args.key_file!r} does not exist") from None
        except IsADirectoryError:
            raise ValueError(f"--key-file {args.key_file!r} is a directory, not a file") from None
        except UnicodeDecodeError:
            raise ValueError(f"--key-file {args.key_file!r} does not hold a key (it is not "
                             "text)") from None
        where = f"--key-file {args.key_file!r}"
    else:
        key = os.environ.get(KEY_VARIABLE, "").strip()
        where = KEY_VARIABLE
        if not key:
            raise ValueError(f"{command} needs an API key: set {KEY_VARIABLE} or give "
                             "--key-file FILE (sat serve keys create prints one)")
    if not key.isascii() or not key.isprintable() or not key.startswith("sat_") \
            or len(key.split("_")) < 3:
        raise ValueError(f"{where} does not hold an API key (one line sat_<id>_<secret>, as "
                         "sat serve keys create prints it)")
    return key


def post(url: str, route: str, body: dict[str, Any], key: str, command: str
         ) -> dict[str, Any] | None:
    """The service's answer to ``POST route``, or None after printing its refusal."""
    import httpx

    try:
        answer = httpx.post(url.rstrip("/") + route, json=body,
                            headers={"Authorization": f"Bearer {key}"}, timeout=60)
    except httpx.HTTPError as exc:
        raise ValueError(f"--url {url!r}: POST {route} failed ({exc})") from None
    return answered(answer, command)


def answered(answer: Any, command: str) -> dict[str, Any] | None:
    """An answer's JSON, or None after printing the service's refusal in one line."""
    try:
        doc = answer.json()
    except ValueError:
        doc = {}
    if answer.status_code != 200:
        print(f"{command}: the service answered {answer.status_code}: "
              f"{doc.get('error', answer.text[:200])}", file=sys.stderr)
        return None
    return doc
