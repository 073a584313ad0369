"""Saving and loading a learner: a versioned file of JSON metadata plus arrays, never pickle.

A saved learner is a zip archive (``unzip -l`` lists it) holding ``meta.json`` (the format and
its version, the release that wrote it, the learner's name and parameters, its dimension, its
random generator's state, its decision bookkeeping), one ``.npy`` file per array of its state,
and ``sha256``, a digest of everything else: a file changed by accident (a flipped byte, an
edit) is refused as corrupt rather than loaded as a different learner.

**Nothing in a file runs code when loaded**, however it was made: arrays are read with
``allow_pickle=False`` after their headers are checked; the ``learner`` it names must be a
registered learner or one the caller allows (``load(path, allow=[MyLearner])``), and nothing is
imported for any other name (the only code that runs is that learner's own, on parameters it
checks); and every field is checked before anything uses it
(:mod:`.loading`): the learner's own template (``_init_state(d)`` of the saved parameters)
fixes every array's dtype and shape, the learner checks the values its kernels rely on
(:meth:`~.base.Learner._check_state`), and the decision bookkeeping must be consistent. The
digest guards against accidents only (anyone can recompute it); the checks hold without it.
The archive is read without trusting its members' sizes (:mod:`.archive`): ``meta.json``
first, then each array capped by what the learner's template says its field can need, and an
array the document names nowhere is never read.
Any refusal is one ``ValueError`` naming the file and the field.

A newer release keeps a reader for each older format (:data:`READERS`); a file from a newer
format is refused with the version it needs.

A learner can be saved if its state is ``None`` or a ``NamedTuple`` of arrays, numbers,
strings and further such ``NamedTuple``s, and so is whatever else it keeps on itself (a
plain-Python learner's ``self._gram``): every learner of this package, and a plain-Python
learner that keeps its model that way. A learner whose state lives in another library's objects
(the peer adapters) cannot be saved without pickle, and says so. Files are created readable by
their owner only (mode 0600): a saved learner holds applicants' features.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..learners.encoding import jsonable
from ..learners.introspect import model_attributes
from ..learners.registry import LEARNERS
from .archive import Archive
from .desk import encode_desk
from .fields import Refused
from .loading import BIT_GENERATORS, Prepared, allowed, array_cap, prepare, read, referenced
from .states import encode

#: What the ``format`` field of a saved learner's metadata says.
FORMAT = "strategic-apple-tasting learner"
#: The format this release writes (3: a digest of the contents, ``sha256``; 2: the decisions
#: awaiting outcomes as one array; 1: one array each, which made a service's saved state grow a
#: file per pending decision).
FORMAT_VERSION = 3
#: The member of a format-3 file holding the digest of the others.
DIGEST = "sha256"

def _short(value: Any) -> str:
    return _clip(repr(value))


def _clip(text: str, most: int = 100) -> str:
    """``text`` on one line, at most ``most`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most - 3] + "..."


# -- the learner -------------------------------------------------------------------------------
def _class_name(learner: Any) -> str:
    cls = type(learner)
    if LEARNERS.get(cls.name) is cls:
        return cls.name
    return f"{cls.__module__}:{cls.__qualname__}"


def _writable(path: Path) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ValueError(f"path {str(path)!r} is a directory; give a file name")
    if not parent.is_dir():
        raise ValueError(f"path {str(path)!r} cannot be written: directory {str(parent)!r} "
                         "does not exist")
    if not os.access(parent, os.W_OK):
        raise ValueError(f"path {str(path)!r} cannot be written: directory {str(parent)!r} is "
                         "not writable")


def _digest(members: Iterable[tuple[str, bytes]]) -> str:
    """SHA-256 of the members, each as its name, its length and its bytes (in file order)."""
    h = hashlib.sha256()
    for name, data in members:
        h.update(name.encode())
        h.update(b"\0")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def dumps(learner: Any) -> bytes:
    """``learner`` (reset, at any point of a run) in the saved format, as bytes (what
    :func:`save` writes; a database keeps them in a column)."""
    live = learner.state  # refuses a learner not reset
    owner = type(learner).__name__
    arrays: dict[str, np.ndarray] = {}
    state = encode(live, "state", arrays, owner)
    attributes = {name: encode(value, f"attribute.{name}", arrays, owner)
                  for name, value in model_attributes(learner).items()}
    desk = encode_desk(learner, arrays, owner)
    meta = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "written_by": __version__,
        "learner": _class_name(learner), "params": jsonable(learner.get_params()),
        "d": learner.dimension, "rng": _jsonable_rng(learner.generator, owner), "state": state,
        "attributes": attributes, "desk": desk,
    }
    members = [("meta.json", json.dumps(meta, indent=1).encode())]
    for name, arr in arrays.items():
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
        members.append((f"{name}.npy", buf.getvalue()))
    members.append((DIGEST, _digest(members).encode()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return out.getvalue()


def save(learner: Any, path: str | os.PathLike) -> Path:
    """Write ``learner`` (reset, at any point of a run) to ``path``; returns the path.

    The file is created with mode 0600 (it holds applicants' features), written next to its
    final name and renamed into place, so a crash never leaves half a file under that name.
    """
    learner.state  # noqa: B018 (refuses a learner not reset, before the file is touched)
    path = Path(path)
    _writable(path)
    with learner.desk.lock:  # a decision on another thread waits: the file is one moment's
        data = dumps(learner)
    # mkstemp creates the file 0600 before a byte is written, under a name nobody else has.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def load(path: str | os.PathLike, allow: Iterable[type | str] | None = None) -> Any:
    """The learner saved at ``path``, ready to continue where it was saved.

    ``allow`` lists the learners outside the registry that the file may name: classes, or
    import paths ``"package.module:Class"`` (a file naming any other learner is refused, and
    nothing is imported for it). ``ValueError`` in one line, naming the file and the field, if
    the file is missing, is not a saved learner, is corrupt, comes from a newer format than this
    release reads, or does not describe its learner.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} is not a file")
    return loads(path.read_bytes(), f"path {str(path)!r}", allow)


def loads(data: bytes, source: str = "the data",
          allow: Iterable[type | str] | None = None) -> Any:
    """The learner that :func:`dumps` gave ``data`` (``source`` names it in errors; ``allow``
    as for :func:`load`).

    Nothing is inflated beyond what its field can need: ``meta.json`` is read first (an
    archive's members are checked as declared, :class:`~.archive.Archive`), the learner and its
    template are made from it, and only then is each array read, capped by the template's
    largest array (the pending decisions' features by their count); an array no field names is
    refused without being read.
    """
    permitted = allowed(allow)
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ValueError(f"{source} must be bytes, got {type(data).__name__}")
    data = bytes(data)
    archive = Archive(data, source)
    document = archive.read("meta.json")
    try:
        meta = json.loads(document)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{source} is not a saved learner (meta.json is not JSON: "
                         f"{_clip(str(exc))})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{source} is not a saved learner (no {FORMAT!r} format field)")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version not in READERS:
        newest = max(READERS)
        raise ValueError(f"{source} is in saved-learner format {_short(version)} (written "
                         f"by release {_short(meta.get('written_by'))}); this release reads "
                         f"formats {', '.join(map(str, sorted(READERS)))}"
                         + (": upgrade to read it" if isinstance(version, int)
                            and version > newest else ""))
    if version >= 3 and DIGEST not in archive.names:
        raise ValueError(f"{source} is corrupt: its contents do not match their digest "
                         f"({DIGEST})")
    if version < 3 and DIGEST in archive.names:
        raise archive.refuse(f"it holds {DIGEST!r}, which is neither meta.json nor an array")
    # An array the document names nowhere is never read: no field can use it, and the reader
    # refuses it after the fields' own checks.
    named = referenced(meta)
    unread = [n[:-4] for n in archive.names if n.endswith(".npy") and n[:-4] not in named]
    wanted = [n for n in archive.names if n.endswith(".npy") and n[:-4] in named]
    try:
        prepared = prepare(meta, permitted, len(data))
        caps = {n: array_cap(prepared, meta, n[:-4]) for n in wanted}
    except Refused as exc:
        raise ValueError(f"{source}: {exc}") from None
    except Exception as exc:  # a check this reader lacks: still one line, never a traceback
        raise ValueError(f"{source} cannot be loaded: unexpected {type(exc).__name__} "
                         f"({_clip(str(exc))})") from None
    blobs = {n: archive.read(n, *caps[n]) for n in wanted}
    if version >= 3 and not unread:  # with an unread member the reader refuses the file
        kept = [(n, document if n == "meta.json" else blobs[n])
                for n in archive.names if n != DIGEST]
        if archive.read(DIGEST, 64, "a SHA-256 in hex") != _digest(kept).encode():
            raise ValueError(f"{source} is corrupt: its contents do not match their digest "
                             f"({DIGEST})")
    arrays = {n[:-4]: _array(blob, n, source) for n, blob in blobs.items()}
    del blobs
    try:
        return READERS[version](meta, arrays, prepared, unread)
    except Refused as exc:
        raise ValueError(f"{source}: {exc}") from None
    except Exception as exc:  # a check this reader lacks: still one line, never a traceback
        raise ValueError(f"{source} cannot be loaded: unexpected {type(exc).__name__} "
                         f"({_clip(str(exc))})") from None


def _array(blob: bytes, name: str, source: str) -> np.ndarray:
    """A ``.npy`` member, its header checked before anything is allocated: no Python objects,
    and exactly the bytes its shape and dtype need."""
    buf = io.BytesIO(blob)
    try:
        version = np.lib.format.read_magic(buf)
        header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                  else np.lib.format.read_array_header_2_0)
        shape, _, dtype = header(buf)
        if dtype.hasobject:
            raise ValueError("it holds Python objects")
        need = math.prod(shape) * dtype.itemsize
        if len(blob) - buf.tell() != need:
            raise ValueError(f"its header needs {need:,} bytes of data, it has "
                             f"{len(blob) - buf.tell():,}")
        return np.lib.format.read_array(io.BytesIO(blob), allow_pickle=False)
    except (ValueError, TypeError, OverflowError, SyntaxError) as exc:
        raise ValueError(f"{source} is not a saved learner ({name} is not an array file: "
                         f"{_clip(str(exc))})") from None


def _read_v1(meta: dict[str, Any], arrays: dict[str, np.ndarray], prepared: Prepared,
             unread: list[str]) -> Any:
    """Format 1: one array per pending decision."""
    return read(meta, arrays, 1, prepared, unread)


def _read_v2(meta: dict[str, Any], arrays: dict[str, np.ndarray], prepared: Prepared,
             unread: list[str]) -> Any:
    """Format 2: the pending decisions' features as one array."""
    return read(meta, arrays, 2, prepared, unread)


def _read_v3(meta: dict[str, Any], arrays: dict[str, np.ndarray], prepared: Prepared,
             unread: list[str]) -> Any:
    """Format 3: format 2 with a digest, which :func:`loads` checks before this."""
    return read(meta, arrays, 3, prepared, unread)


#: Format version → reader. A new format adds a reader and keeps the old ones.
READERS = {1: _read_v1, 2: _read_v2, 3: _read_v3}


# -- the random generator ----------------------------------------------------------------------
def _jsonable_rng(rng: np.random.Generator, owner: str) -> dict[str, Any]:
    state = rng.bit_generator.state
    if state.get("bit_generator") not in BIT_GENERATORS:
        raise ValueError(f"{owner}: its random generator's {state.get('bit_generator')} cannot "
                         f"be saved (one of {', '.join(BIT_GENERATORS)} can: "
                         "numpy.random.default_rng makes a PCG64)")
    return state
