"""Argument validation shared by the theory modules, and an overflow-safe ``exp``.

Every public function of :mod:`strategic_apple_tasting.theory` validates its arguments
with these helpers, so all of them raise the same one-line ``ValueError`` naming the
argument, what it must be, and the offending value.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable


def _show(value: object) -> str:
    """Format an offending value for an error message (``nan``, ``-0.5``, ``3``, ``'x'``)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return repr(float(value))
    return repr(value)


def _check_int(value: object, name: str, minimum: int) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= minimum``, else raise."""
    if not isinstance(value, bool):
        try:
            ivalue = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
        else:
            if ivalue >= minimum:
                return ivalue
    raise ValueError(f"{name} must be an integer >= {minimum}, got {_show(value)}")


def _check_real(
    value: object, name: str, allowed: str = "", ok: Callable[[float], bool] | None = None
) -> float:
    """Return ``value`` as a finite ``float`` satisfying ``ok``, else raise.

    ``allowed`` completes the sentence "``name`` must be a finite number ...".
    """
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        fvalue = float(value)
        if math.isfinite(fvalue) and (ok is None or ok(fvalue)):
            return fvalue
    allowed = f" {allowed}" if allowed else ""
    raise ValueError(f"{name} must be a finite number{allowed}, got {_show(value)}")


def _check_dim(d: object, surface: bool) -> int:
    if surface:
        # The "sphere" in R^1 is the two-point set {-1, 1}: no density, excluded.
        return _check_int(d, "d", 2)
    return _check_int(d, "d", 1)


def _check_delta(delta: object) -> float:
    return _check_real(delta, "delta", ">= 0", lambda v: v >= 0.0)


def _check_sigma(sigma: object) -> float:
    return _check_real(sigma, "sigma", ">= 0", lambda v: v >= 0.0)


def _check_gamma(gamma: object) -> float:
    return _check_real(gamma, "gamma", "in (0, 1)", lambda v: 0.0 < v < 1.0)


def _check_c0(c0: object) -> float:
    return _check_real(c0, "c0", "in (0, 1]", lambda v: 0.0 < v <= 1.0)


def _check_gamma_or_schedule(gamma: object) -> float | None:
    if gamma is None:
        return None
    return _check_real(gamma, "gamma", "in (0, 1) (or None for 1/T^2)", lambda v: 0.0 < v < 1.0)


# Largest log-value whose exp is a finite float (log(DBL_MAX) ≈ 709.78).
_LOG_MAX = 709.0


def _exp_or_inf(log_value: float) -> float:
    """``exp(log_value)``, or ``math.inf`` when that would overflow a float."""
    return math.exp(log_value) if log_value < _LOG_MAX else math.inf
