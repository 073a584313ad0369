"""Results on disk: Parquet files written atomically (a crash never leaves half a file)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def write_table(table: pa.Table, path: str | os.PathLike) -> Path:
    """Write ``table`` to ``path`` as Parquet via a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_table(path: str | os.PathLike) -> pa.Table:
    """Read a results file or a directory of them as one table."""
    return pq.read_table(path)
