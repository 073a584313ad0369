"""Files written for their owner's eyes only (mode 0600), whatever the umask.

``sat serve keys create > lender.key`` gives the key file the shell's umask (often 0644:
readable by every user of the machine); ``--out FILE`` writes it through here instead. The
file is made 0600 under a temporary name beside the target and renamed into place, so a
reader never sees half a file, and an existing file is replaced only when told (``force``).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

#: The mode of a private file.
MODE = 0o600


def check_target(path: str | Path, flag: str, force: bool) -> Path:
    """``path`` if a private file may be written there; else a ``ValueError`` in one line
    naming ``flag``: it exists (and ``force`` is not given), is a directory, or its folder is
    missing."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{flag} {str(path)!r} is a directory: give a file")
    if path.exists() and not force:
        raise ValueError(f"{flag} {str(path)!r} exists: give --force to replace it")
    if not path.resolve().parent.is_dir():
        raise ValueError(f"{flag} {str(path)!r}: directory {str(path.resolve().parent)!r} "
                         "does not exist")
    return path


def write_private(path: str | Path, fill: Callable[[Path], None], flag: str) -> None:
    """Make ``path`` a private file filled by ``fill`` (given a private, empty file beside
    ``path`` to write into); renamed into place only once ``fill`` returns."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, MODE))
    except OSError as exc:
        raise ValueError(f"{flag} {str(path)!r} cannot be written ({exc.strerror})") from None
    try:
        fill(temporary)
        os.chmod(temporary, MODE)  # (what fill wrote through another handle keeps 0600)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str, flag: str) -> None:
    """Make ``path`` a private file holding ``text``."""
    write_private(path, lambda p: p.write_text(text, encoding="utf-8"), flag)
