"""A SQLite database's files: created private, and watched while the service runs.

Private: the database holds applicants' features, so its file is created with mode 0600
before SQLite opens it; SQLite gives its write-ahead log (``-wal``) and shared memory
(``-shm``) the database file's mode, and the learner's lock file beside it is made 0600 too.
An existing file keeps the mode its owner gave it.

Watched: a process that has a file open keeps writing to it after the file is deleted or
another file is moved onto its path, and a commit into such a file succeeds, though nothing
will ever read it again. :class:`FileGuard` remembers which file the path named when the
service opened it, and after every commit (before any response) checks that the path still
names that file and that no file the process has open under the database's names was deleted
(Linux: ``/proc/self/fd``; a stat and three ``readlink`` calls). Once either fails, the
database is lost for this process for good (:class:`DatabaseLost`): nothing more is
acknowledged until a restart.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import IO

#: The mode of a database file the service creates (and so of its -wal and -shm files).
MODE = 0o600
#: Where Linux shows a process's open files.
FDS = Path("/proc/self/fd")


class DatabaseLost(RuntimeError):
    """The database file was deleted or replaced under the running service."""


def create_private(path: str | Path) -> None:
    """Create ``path`` (empty, mode 0600) unless it exists; an existing file is left as it is.
    (The umask can only take bits away from 0600.)"""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, MODE))
    except FileExistsError:  # (opened only to be made: an existing file is SQLite's to open)
        pass


def open_private(path: str | Path, mode: str = "a") -> IO[str]:
    """Open ``path`` as ``open`` does, creating it with mode 0600 if it is missing."""
    return open(os.open(path, os.O_RDWR | os.O_CREAT, MODE), mode)


class FileGuard:
    """Which file a SQLite database's path named when the service opened it; :meth:`check`
    says whether it still does (see the module's description)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).resolve()
        stat = os.stat(self.path)
        self.identity = (stat.st_dev, stat.st_ino)
        self.names = {str(self.path) + suffix for suffix in ("", "-wal", "-shm")}
        self.lost: str | None = None
        self._fds: dict[int, str] = {}  # a descriptor of each database file the process has open
        self._rescan = True
        self._lock = threading.Lock()

    def connecting(self) -> None:
        """Before a new connection opens the path: refuse if it names another file now (SQLite
        would create a new, empty database in a deleted one's place)."""
        reason = self.check()
        if reason is not None:
            raise DatabaseLost(reason)
        with self._lock:
            self._rescan = True  # the new connection's descriptors are found at the next check

    def check(self) -> str | None:
        """None while the path names the database the service opened and none of its open
        files was deleted; else why not (and from then on, for good)."""
        with self._lock:
            if self.lost is None:
                self.lost = self._path_changed() or self._open_file_deleted()
            return self.lost

    def _path_changed(self) -> str | None:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return (f"the database file {str(self.path)!r} was deleted (or moved) while the "
                    "service ran: writes since then would be lost, so none is acknowledged: put "
                    "the file back and restart the service")
        except OSError as exc:
            return f"the database file {str(self.path)!r} cannot be checked: {exc.strerror}"
        if (stat.st_dev, stat.st_ino) != self.identity:
            return (f"the database file {str(self.path)!r} was replaced by another file while "
                    "the service ran: writes since then would go to the old one, so none is "
                    "acknowledged; restart the service")
        return None

    def _open_file_deleted(self) -> str | None:
        # One descriptor a name is read again (a few microseconds each): every connection of
        # the process has the same files open, since a new one is checked before it opens
        # (connecting). The whole table is read only after a new connection, or when one of
        # those descriptors changed.
        if not FDS.is_dir():
            return None
        if not self._rescan:
            for fd, name in self._fds.items():
                try:
                    link = os.readlink(f"{FDS}/{fd}")
                except OSError:
                    link = ""
                if link == f"{name} (deleted)":
                    return self._deleted(name)
                if link != name:
                    self._rescan = True
                    break
            else:
                return None
        found: dict[str, int] = {}
        for entry in os.listdir(FDS):
            try:
                link = os.readlink(f"{FDS}/{entry}")
            except OSError:
                continue
            name = link.removesuffix(" (deleted)")
            if name in self.names:
                if name != link:
                    return self._deleted(name)
                found.setdefault(name, int(entry))
        self._fds, self._rescan = {fd: name for name, fd in found.items()}, False
        return None

    def _deleted(self, name: str) -> str:
        return (f"the database's file {name!r} was deleted while the service had it open: "
                "writes since then would be lost, so none is acknowledged; restart the service")
