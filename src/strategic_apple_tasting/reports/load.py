"""Results tables from what the command line writes: a sweep directory (``sat sweep``) or a
run's output directory (``sat run``, ``sat demo``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from ..engine.simulate import RESULT_COLUMNS
from ..experiments.storage import read_table
from ..experiments.sweep import CELLS, MANIFEST, load

#: The file ``sat run`` and ``sat demo`` write their results to, in their ``--out`` directory.
RUN_RESULTS = "results.parquet"


def load_results(path: str | os.PathLike, *, warn: Callable[[str], None] | None = None
                 ) -> pa.Table:
    """The results table in ``path``: a sweep directory (its ``spec.json`` and the finished
    cells in ``cells/``) or a ``sat run``/``sat demo`` output directory (its
    ``results.parquet``).

    Parameters
    ----------
    path : str or os.PathLike
        The directory.
    warn : callable, optional
        For a sweep directory: gets one line per file it ignores (see
        :func:`~strategic_apple_tasting.experiments.sweep.load`).

    Returns
    -------
    pyarrow.Table
        Every row of the results.

    Raises
    ------
    ValueError
        In one line, when ``path`` is neither kind of directory, its results cannot be read,
        or they lack a results column or rows.

    Examples
    --------
    >>> import tempfile
    >>> from strategic_apple_tasting import Game, simulate
    >>> from strategic_apple_tasting.experiments.storage import write_table
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = write_table(simulate(Game(dimension=2), ["oracle"], horizon=20, seeds=2),
    ...                     Path(tmp) / RUN_RESULTS)
    ...     load_results(tmp).num_rows > 0
    True
    """
    path = Path(path)
    # A sweep directory is recognised by either of its parts, so that one missing the other
    # gets the sweep loader's own message rather than the generic one below.
    if (path / MANIFEST).exists() or (path / CELLS).is_dir():
        return load(path, warn=warn)
    file = path / RUN_RESULTS
    if not file.is_file():
        raise ValueError(f"{str(path)!r} is not a sweep directory nor a run's output: it must "
                         f"hold {MANIFEST} and {CELLS}/ (sat sweep) or {RUN_RESULTS} "
                         "(sat run, sat demo)")
    try:
        table = read_table(file)
    except (OSError, pa.ArrowException) as exc:
        # pyarrow's messages can span lines; the CLI promises one.
        reason = " ".join(str(exc).split())
        raise ValueError(f"cannot read {str(file)!r} as Parquet results: {reason}") from None
    # Tables written before the ``learned`` column are still read (every clean point was
    # learned from), and so are those before the learner's name and parameters were columns
    # (the reports then know a learner by its label); every other column is needed by the
    # summaries and figures.
    optional = ("learned", "learner_name", "learner_params")
    needed = [c for c in (*RESULT_COLUMNS, "horizon") if c not in optional]
    missing = [c for c in needed if c not in table.column_names]
    if missing:
        raise ValueError(f"{str(file)!r} is not a results table: it lacks the column(s) "
                         f"{', '.join(missing)}")
    if table.num_rows == 0:
        raise ValueError(f"{str(file)!r} holds no rows: nothing to summarize")
    return table
