"""Linear threshold policies: the rule a principal publishes, and how it is evaluated.

Every accept/reject decision in the package, by a learner or inside the simulation, goes through
:func:`score` so that an agent's landing point and the learner's test see the same arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._jit import njit

#: Relative width of the band above a threshold in which a learner refuses to call a point clean.
#: A lazy mover lands within a few ulps of the boundary (DESIGN §2, "Floating point"); 1e-9 of the
#: scale of the score is far above that rounding error and far below any statistical effect.
CLEAN_RTOL = 1e-9


@njit
def score(beta, x):
    """⟨β, x⟩, summed in index order (the one dot product of the package)."""
    s = 0.0
    for i in range(beta.shape[0]):
        s += beta[i] * x[i]
    return s


@njit
def norm(beta):
    """‖β‖₂."""
    s = 0.0
    for i in range(beta.shape[0]):
        s += beta[i] * beta[i]
    return math.sqrt(s)


@njit
def accepts(beta, threshold, x):
    """The decision of policy (β, c) on an observed context: ⟨β, x⟩ ≥ c."""
    return score(beta, x) >= threshold


@njit
def clean_above(beta, threshold, x, margin):
    """Whether an accepted x can be certified unmoved: strictly above c + margin, with room.

    ``margin`` is the model's own band (0 for lazy agents, γ‖β‖ for trembling hands); the extra
    ``CLEAN_RTOL`` band guarantees that no rounding of a landing point passes the test.
    """
    s = score(beta, x)
    scale = abs(threshold) + norm(beta) * norm(x) + 1e-300
    return s > threshold + margin + CLEAN_RTOL * scale


@dataclass(frozen=True, eq=False)
class LinearThreshold:
    """A published policy: accept iff ⟨β, x'⟩ ≥ threshold.

    Accept-all and reject-all are β = 0 with threshold −1 and +1.

    Examples
    --------
    >>> import numpy as np
    >>> rule = LinearThreshold(beta=np.array([1.0, 0.0]), threshold=0.2)
    >>> rule.accepts(np.array([0.3, 5.0]))
    True
    """

    beta: np.ndarray
    threshold: float
    probability: float = 1.0  # chance the learner drew this policy (randomized learners)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LinearThreshold):
            return NotImplemented
        return (np.array_equal(self.beta, other.beta) and self.threshold == other.threshold
                and self.probability == other.probability)

    __hash__ = None  # type: ignore[assignment]  (holds an array)

    def accepts(self, x: np.ndarray) -> bool:
        return bool(accepts(np.asarray(self.beta, float), float(self.threshold),
                            np.asarray(x, float)))
