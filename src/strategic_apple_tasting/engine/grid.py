"""The rounds at which a run is recorded: log-spaced, plus the last."""

from __future__ import annotations

import numpy as np

#: Recorded rounds per decade at most (the grid is built in memory before a run).
MAX_PER_DECADE = 10_000


def recording_grid(horizon: int, per_decade: int = 20) -> np.ndarray:
    """Rounds 1..horizon at about ``per_decade`` log-spaced points a decade, always with the last.

    Examples
    --------
    >>> recording_grid(10, per_decade=4).tolist()
    [1, 2, 3, 6, 10]
    """
    if not (isinstance(horizon, int | np.integer) and not isinstance(horizon, bool)
            and horizon >= 1):
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    if not (isinstance(per_decade, int | np.integer) and not isinstance(per_decade, bool)
            and 1 <= per_decade <= MAX_PER_DECADE):
        raise ValueError(f"per_decade must be an integer from 1 to {MAX_PER_DECADE:,}, "
                         f"got {per_decade!r}")
    n = int(np.ceil(np.log10(horizon) * per_decade)) + 1
    points = np.unique(np.round(np.logspace(0, np.log10(horizon), n)).astype(np.int64))
    return np.unique(np.append(points[points <= horizon], horizon))
