"""Where ``sat serve`` takes its database URL from, keeping a password off the command line.

``ps`` shows every process's arguments to every user of the machine (and the shell keeps them
in its history), so a PostgreSQL password in ``--database`` is one every user can read. The URL
may come, first given first taken, from:

1. ``--database URL`` (a URL with a password warns, one line on stderr, naming the others);
2. ``--database-file FILE``: the file's first line (keep it 0600; one readable by other users
   warns when it holds a password);
3. the environment's ``SAT_DATABASE``;
4. ``database = "URL"`` in the ``--config`` TOML (:class:`~..service.config.ServiceConfig`);
5. the default, ``sqlite:///sat-service.db``.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Any

#: The environment variable that gives ``sat serve`` its database URL.
VARIABLE = "SAT_DATABASE"
#: The safer ways, named in the warning.
SAFER = (f"give it in a file (--database-file FILE, mode 0600), the environment "
         f"({VARIABLE}=...) or the settings (--config FILE: database = \"...\")")


def has_password(url: str) -> bool:
    """Whether ``url`` carries a password (a URL that cannot be read carries none here: the
    check of the URL says what is wrong with it)."""
    import sqlalchemy as sa

    try:
        return sa.engine.make_url(url).password is not None
    except Exception:
        return False


def read_url_file(path: str) -> str:
    """The database URL in file ``path`` (its first line, stripped); a ``ValueError`` in one
    line if it has none."""
    where = f"--database-file {path!r}"
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(65_536)
    except FileNotFoundError:
        raise ValueError(f"{where} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"{where} is a directory, not a file") from None
    except UnicodeDecodeError:
        raise ValueError(f"{where} does not hold a database URL (it is not text)") from None
    except PermissionError:
        raise ValueError(f"{where} cannot be read (permission denied)") from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) != 1:
        raise ValueError(f"{where} must hold one line, the database URL (sqlite:///FILE or "
                         f"postgresql://USER:PASSWORD@HOST/NAME), got {len(lines)} lines")
    return lines[0]


def resolve(args: Any, environ: dict[str, str] | None = None) -> str | None:
    """The database URL the arguments, the environment and the settings give (None: the
    settings' or the default; :class:`ServiceConfig` fills it in); warns on stderr where a
    password is exposed. A ``ValueError`` in one line for ``--database`` beside
    ``--database-file`` or a file without a URL."""
    environ = os.environ if environ is None else environ
    given = getattr(args, "database", None)
    path = getattr(args, "database_file", None)
    if given is not None and path is not None:
        raise ValueError("give the database as --database URL or --database-file FILE, not "
                         "both")
    if given is not None:
        if has_password(given):
            print(f"sat serve: warning: --database puts the database's password where `ps` "
                  f"shows it to every user of the machine: {SAFER}", file=sys.stderr)
        return given
    if path is not None:
        url = read_url_file(path)
        mode = stat.S_IMODE(os.stat(path).st_mode)
        if has_password(url) and mode & 0o077:
            print(f"sat serve: warning: --database-file {path!r} holds a password and other "
                  f"users may read it (mode {mode:04o}): chmod 600 {path}", file=sys.stderr)
        return url
    url = environ.get(VARIABLE, "").strip()
    return url or None
