"""Results on disk: Parquet files written atomically (a crash never leaves half a file)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def write_table(table: pa.Table, path: str | os.PathLike,
                metadata: Mapping[str, str] | None = None) -> Path:
    """Write ``table`` to ``path`` as Parquet via a temporary file and an atomic rename.

    Parameters
    ----------
    table : pyarrow.Table
        The rows.
    path : str or os.PathLike
        The file; its directory is created if needed.
    metadata : mapping of str to str, optional
        Key-value metadata stored in the file's footer (readable with
        ``pyarrow.parquet.read_metadata`` without reading the rows).

    Returns
    -------
    Path
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if metadata:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               **{k.encode(): v.encode()
                                                  for k, v in metadata.items()}})
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            pq.write_table(table, fh)
            fh.flush()
            # Without it a power cut after the rename can leave a named but empty file.
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write a small text file atomically: a temporary file beside it, then a rename."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def read_table(path: str | os.PathLike) -> pa.Table:
    """Read a results file or a directory of them as one table."""
    return pq.read_table(path)
