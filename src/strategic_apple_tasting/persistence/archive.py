"""A saved learner's zip archive, read without trusting what it declares: no bombs.

A zip member says how large it inflates to, and nothing but the reader holds it to that. This
module opens the archive and refuses, before inflating a byte, any member that is not
``meta.json``, the digest or an ``.npy`` array, any member compressed by other than deflate (or
stored: bzip2 and lzma reach far higher ratios), any member claiming more than deflate's largest
ratio (:data:`INFLATE`) of its compressed size, and an archive whose members claim more than
:data:`MAX_TOTAL` in all. :meth:`Archive.read` then inflates one member at most ``most`` bytes
(the caller's cap: what the learner's template says the member's field can hold), refusing a
member that declares more before reading it, in chunks of :data:`CHUNK` so that a member
inflating to more than it declares is cut at its declared size (zipfile stops there, and the
CRC then fails) without the rest ever being allocated.

Any refusal is one :class:`Unreadable` line naming the source and the member.
"""

from __future__ import annotations

import io
import zipfile

#: Largest ratio of a member's size to its compressed size that deflate can reach (1032:1),
#: with room: a member claiming more is a bomb or a lie.
INFLATE = 1100
#: Bytes all members of a saved learner may inflate to together, at most (twice the largest
#: file the service reads as a warm start: no learner the package runs comes near it).
MAX_TOTAL = 1 << 31
#: Bytes inflated at a time: the most a member can allocate beyond its cap.
CHUNK = 1 << 16
#: The member names a saved learner has besides its arrays (``*.npy``).
DOCUMENT, DIGEST = "meta.json", "sha256"
#: How a member may be compressed.
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}


class Unreadable(ValueError):
    """An archive or a member that cannot be read as a saved learner's; the message is the
    whole line, the source named."""


def _clip(text: str, most: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most - 3] + "..."


class Archive:
    """The members of a saved learner's archive, checked as declared; inflated on request."""

    def __init__(self, data: bytes, source: str) -> None:
        self.source = source
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except Exception as exc:  # any way an archive can fail to open: not a file we wrote
            raise self.refuse(_clip(str(exc))) from None
        names = [info.filename for info in infos]
        if len(set(names)) != len(names):
            raise self.refuse("a member's name appears twice")
        for info in infos:
            name = info.filename
            if name not in (DOCUMENT, DIGEST) and (not name.endswith(".npy") or name == ".npy"):
                raise self.refuse(f"it holds {name!r}, which is neither {DOCUMENT} nor an array")
            if info.compress_type not in METHODS:
                raise self.refuse(f"{name} is compressed by method {info.compress_type}; a "
                                  "saved learner's members are stored or deflated")
            if info.file_size > INFLATE * info.compress_size + 4096:
                raise self.refuse(f"{name!r} claims {info.file_size:,} bytes from "
                                  f"{info.compress_size:,}")
        total = sum(info.file_size for info in infos)
        if total > MAX_TOTAL:
            raise self.refuse(f"its members claim {total:,} bytes in all, more than the "
                              f"{MAX_TOTAL:,} a saved learner may hold")
        if DOCUMENT not in names:
            raise self.refuse(f"there is no {DOCUMENT}")
        self.infos = {info.filename: info for info in infos}

    def refuse(self, reason: str) -> Unreadable:
        return Unreadable(f"{self.source} is not a saved learner ({reason})")

    @property
    def names(self) -> list[str]:
        """The members' names, in file order."""
        return list(self.infos)

    def declared(self, name: str) -> int:
        """Bytes member ``name`` says it inflates to."""
        return self.infos[name].file_size

    def read(self, name: str, most: int | None = None, why: str = "") -> bytes:
        """Member ``name`` inflated, refused if it declares more than ``most`` bytes (``why``
        says where that cap comes from) or inflates to other than it declares."""
        info = self.infos[name]
        if most is not None and info.file_size > most:
            raise Unreadable(f"{self.source}: {name} declares {info.file_size:,} bytes "
                             f"inflated, more than the {most:,} its field can need ({why})")
        chunks = []
        got = 0
        try:
            with self._zip.open(info) as member:
                while chunk := member.read(CHUNK):
                    got += len(chunk)
                    chunks.append(chunk)
        except Exception as exc:  # a damaged stream, a CRC that fails: one line
            raise self.refuse(f"{name}: {_clip(str(exc))}") from None
        if got != info.file_size:
            raise self.refuse(f"{name} inflates to {got:,} bytes, not the {info.file_size:,} "
                              "it declares")
        return b"".join(chunks)
