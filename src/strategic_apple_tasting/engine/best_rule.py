"""The best linear rule on a data set's rows, by a stated search (DESIGN §2, "Data").

A rule (β, c) accepts row i iff ⟨β, x_i⟩ ≥ c and is worth V(β, c) = Σ_i w_i·g_i·1{⟨β, x_i⟩ ≥ c}
per applicant, where w_i is how often row i is drawn and g_i = E[r_i(1)] − r0 its gain. For a
fixed direction β the best threshold is exact: sort the scores and take the best suffix sum,
cutting only between distinct scores (tied rows cannot be told apart). The search is over
directions:

1. **Starts**: the least-squares direction θ* (the fit of the gains), every coordinate axis
   and its negation (so that data whose rows vary in one feature are solved exactly), and
   :data:`RESTARTS` random directions.
2. **Smooth ascent** from θ* and from each random start: the sigmoid surrogate
   Σ_i w_i·g_i·σ((⟨β, x_i⟩ − c)/τ) with ‖β‖ = 1, maximized by L-BFGS at a falling temperature
   τ (from 0.3 to 0.003 of the scores' spread), since the exact objective is a step function.
3. **Exact polish**: random perturbations of β at a falling scale, kept when the exact value
   rises.

The result keeps a direction per restart: the engine re-evaluates each of them with the best
threshold in hindsight on every seed's sampled applicants (:mod:`.hindsight`), which is a lower
bound on the best linear rule in hindsight. Upper bounds: ``bound``, the value of accepting
exactly the rows with positive gain (no rule does better, none need reach it), and the spread
of the restarts' values says how reproducible the maximum is.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from .._memo import ArrayMemo

#: Random starts of the search (besides θ* and the coordinate axes).
RESTARTS = 12
#: Temperatures of the smooth ascent, as fractions of the spread of the scores.
TEMPERATURES = (0.3, 0.1, 0.03, 0.01, 0.003)
#: Perturbations tried by the exact polish of each start.
POLISH_STEPS = 300


@dataclass(frozen=True)
class RuleSearch:
    """What the search found on a data set's rows.

    Attributes
    ----------
    directions : numpy.ndarray
        (K, d) unit directions: θ* first, then the best found from each start (the best
        overall among them).
    best : int
        Index of the best direction.
    value, threshold : float
        The best rule's value per applicant (mean gain over the rows' draw probabilities) and
        its threshold.
    values : numpy.ndarray
        (K,) each direction's value with its best threshold (``values[0]``: θ*'s direction; the
        least-squares rule itself, threshold r0, is :attr:`ls_value`).
    starts : numpy.ndarray
        The value reached from each start of the ascent (θ*, then the random ones): how
        reproducible the maximum is.
    ls_value : float
        The least-squares rule's value: accept iff ⟨θ*, x⟩ ≥ r0.
    bound : float
        Accept exactly the rows with positive gain: an upper bound on any rule's value.
    restarts : int
        Random starts run.
    """

    directions: np.ndarray
    best: int
    value: float
    threshold: float
    values: np.ndarray
    starts: np.ndarray
    ls_value: float
    bound: float
    restarts: int

    def describe(self) -> str:
        """One line: the method, the best value, how many starts reached it, the bound."""
        near = int(np.sum(self.starts >= self.value - 0.01 * abs(self.value)))
        return (f"a search over the rows (θ* and {self.restarts} random starts, smooth ascent "
                f"then exact polish; the axes): the best linear rule earns {self.value:.5g} per "
                f"applicant (in reward units, above r0), reached within 1% from {near} of "
                f"{len(self.starts)} starts; the least-squares rule {self.ls_value:.5g}; "
                f"accepting exactly the rows that gain (an upper bound) {self.bound:.5g}")


def exact_value(scores: np.ndarray, wg: np.ndarray) -> tuple[float, float]:
    """The best threshold for these scores: (value, threshold), value ≥ 0 (accepting nobody is
    worth 0; its threshold is +inf). ``wg`` is each row's w_i·g_i.

    Examples
    --------
    >>> exact_value(np.array([0.0, 1.0, 1.0, 2.0]), np.array([-1.0, 2.0, -0.5, 1.0]))
    (2.5, 1.0)
    """
    order = np.argsort(scores, kind="stable")
    s, v = scores[order], wg[order]
    suffix = np.cumsum(v[::-1])[::-1]
    # A cut can fall only before a new score: tied rows are accepted or rejected together.
    starts = np.flatnonzero(np.r_[True, s[1:] > s[:-1]])
    k = starts[np.argmax(suffix[starts])]
    if suffix[k] <= 0:
        return 0.0, float("inf")
    return float(suffix[k]), float(s[k])


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def _surrogate(z: np.ndarray, rows: np.ndarray, wg: np.ndarray, tau: float
               ) -> tuple[float, np.ndarray]:
    """Minus the sigmoid surrogate at z = (v, c), β = v/‖v‖, and its gradient."""
    d = rows.shape[1]
    v, c = z[:d], z[d]
    norm = np.linalg.norm(v)
    if norm == 0:
        return 0.0, np.zeros(d + 1)
    arg = np.clip((rows @ v / norm - c) / tau, -60.0, 60.0)
    sig = 1.0 / (1.0 + np.exp(-arg))
    f = float(wg @ sig)
    dsig = wg * sig * (1.0 - sig) / tau  # ∂f/∂score_i
    grad_b = rows.T @ dsig  # ∂f/∂β; then through β = v/‖v‖
    g_v = (grad_b - (grad_b @ v) * v / norm**2) / norm
    return -f, -np.r_[g_v, -dsig.sum()]


def _smooth_ascent(rows: np.ndarray, wg: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Maximize the sigmoid surrogate from ``beta`` at falling temperatures."""
    # Imported here: scipy.optimize is a tenth of the start-up of the commands and the service
    # that import the engine and never search a data game's best rule.
    from scipy.optimize import minimize

    d = rows.shape[1]
    u = _unit(beta)
    scores = rows @ u
    spread = float(np.std(scores)) or 1.0
    c = exact_value(scores, wg)[1]
    c = float(np.median(scores)) if not np.isfinite(c) else c
    z = np.r_[u, c]
    for frac in TEMPERATURES:
        z = minimize(_surrogate, z, args=(rows, wg, frac * spread), jac=True,
                     method="L-BFGS-B", options={"maxiter": 200}).x
    return _unit(z[:d])


def _polish(rows: np.ndarray, wg: np.ndarray, beta: np.ndarray, rng: np.random.Generator
            ) -> tuple[np.ndarray, float]:
    """Random perturbations of ``beta`` at a falling scale, kept when the exact value rises."""
    best = _unit(beta)
    value = exact_value(rows @ best, wg)[0]
    for step in np.geomspace(0.3, 0.001, POLISH_STEPS):
        trial = _unit(best + step * _unit(rng.standard_normal(best.shape[0])))
        v = exact_value(rows @ trial, wg)[0]
        if v > value:
            best, value = trial, v
    return best, value


def search_rules(rows: np.ndarray, gains: np.ndarray, weights: np.ndarray, *,
                 restarts: int = RESTARTS, seed: int = 0) -> RuleSearch:
    """Search the best linear rule on ``rows`` (module docstring).

    Parameters
    ----------
    rows : numpy.ndarray
        (n, d) contexts.
    gains : numpy.ndarray
        (n,) each row's mean reward of accepting minus r0.
    weights : numpy.ndarray
        (n,) probabilities of drawing each row.
    restarts : int
        Random starts.
    seed : int
        Seed of the random starts and perturbations (the search is deterministic).

    Examples
    --------
    >>> rows = np.array([[1.0, -1.0], [1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> found = search_rules(rows, np.array([-1.0, -1.0, 1.0, 1.0]), np.full(4, 0.25),
    ...                      restarts=2)
    >>> found.value, found.bound
    (0.5, 0.5)
    """
    with _one_blas_thread():
        return _search(rows, gains, weights, restarts, seed)


def _one_blas_thread() -> contextlib.AbstractContextManager:
    """BLAS on one thread where threadpoolctl is installed: the search's vectors are small, and
    on a busy machine OpenBLAS's threads made L-BFGS ten times slower (13 s against 1.3 s on
    German credit)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # an optional speed-up: the results are the same without it
        return contextlib.nullcontext()
    # A limit reaches only the libraries loaded when it is set, and L-BFGS runs on scipy's own
    # OpenBLAS, loaded with scipy.optimize: imported here first, or it kept its threads (34 s
    # against 6 s on 2,000 rows of taiwan-credit in a fresh process).
    import scipy.optimize  # noqa: F401

    return threadpool_limits(1, user_api="blas")


def _search(rows: np.ndarray, gains: np.ndarray, weights: np.ndarray, restarts: int,
            seed: int) -> RuleSearch:
    rng = np.random.default_rng(seed)
    wg = weights * gains
    d = rows.shape[1]
    root = np.sqrt(weights)
    theta, *_ = np.linalg.lstsq(rows * root[:, None], gains * root, rcond=None)
    ls_scores = rows @ theta
    ls_value = float(wg[ls_scores >= 0].sum())
    starts = [_unit(theta) if np.linalg.norm(theta) > 0 else np.eye(d)[0]]
    starts += [_unit(rng.standard_normal(d)) for _ in range(restarts)]
    # θ*'s own direction first (with its best threshold: never below the least-squares rule).
    found = [(starts[0], exact_value(rows @ starts[0], wg)[0])]
    for start in starts:
        beta = _smooth_ascent(rows, wg, start)
        found.append(_polish(rows, wg, beta, rng))
    axes = [(sign * e, exact_value(rows @ (sign * e), wg)[0])
            for e in np.eye(d) for sign in (1.0, -1.0)]
    top_axis = max(axes, key=lambda a: a[1])
    found.append(top_axis)
    directions = np.array([b for b, _ in found])
    values = np.array([v for _, v in found])
    best = int(np.argmax(values))
    value, threshold = exact_value(rows @ directions[best], wg)
    return RuleSearch(directions=directions, best=best, value=value, threshold=threshold,
                      values=values, starts=values[1:len(starts) + 1], ls_value=ls_value,
                      bound=float(wg[gains > 0].sum()), restarts=restarts)


#: One search per rows, gains, weights and restarts, per process.
_SEARCHES: ArrayMemo[RuleSearch] = ArrayMemo()


def cached_search(rows: np.ndarray, gains: np.ndarray, weights: np.ndarray,
                  restarts: int = RESTARTS) -> RuleSearch:
    """:func:`search_rules` (with ``restarts`` random starts), once per process for the same
    rows, gains and weights (a sweep's cells at several budgets share one search)."""
    return _SEARCHES.get((rows, gains, weights),
                         lambda: search_rules(rows, gains, weights, restarts=restarts),
                         extra=restarts)
