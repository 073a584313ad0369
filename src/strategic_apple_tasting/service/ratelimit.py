"""Rate limits per API key: a token bucket per key in each worker process.

A key may make ``rate`` requests a second on average and a burst of ``burst`` at once (the
bucket's size); a request that finds the bucket empty is refused with 429 and the seconds
until a token is back (``Retry-After``). Buckets live in the process: with N workers behind a
proxy a key gets up to N times the rate. A worker keeps at most :data:`MAX_KEYS` buckets (the
least recently used forgotten, which refills it: only valid keys reach a bucket, so the cost
of forgetting is one burst per key).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

#: Buckets a worker keeps at most.
MAX_KEYS = 1024


class RateLimits:
    """A token bucket per key id: ``rate`` tokens a second, at most ``burst`` held.

    ``clock`` gives monotonic seconds (a test passes its own, so nothing sleeps).

    Examples
    --------
    >>> now = [0.0]
    >>> limits = RateLimits(rate=2.0, burst=2, clock=lambda: now[0])
    >>> [limits.take("k") for _ in range(3)]
    [None, None, 0.5]
    >>> now[0] = 0.5
    >>> limits.take("k")
    """

    def __init__(self, rate: float, burst: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not (math.isfinite(rate) and rate > 0):
            raise ValueError(f"rate_limit must be requests a second > 0, got {rate!r}")
        self.rate = float(rate)
        self.burst = float(burst if burst is not None else max(1, math.ceil(rate)))
        self.clock = clock
        # key id → (tokens, when counted), least recently used first
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str) -> float | None:
        """Take a token from ``key``'s bucket: None if there was one, else the seconds until
        there is (nothing is taken)."""
        now = self.clock()
        with self._lock:
            tokens, then = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - then) * self.rate)
            if tokens >= 1.0:
                tokens -= 1.0
                wait = None
            else:
                wait = (1.0 - tokens) / self.rate
            self._buckets[key] = (tokens, now)
            self._buckets.move_to_end(key)
            while len(self._buckets) > MAX_KEYS:
                self._buckets.popitem(last=False)
        return wait

    def __len__(self) -> int:
        """Buckets kept."""
        return len(self._buckets)
