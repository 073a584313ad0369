r"""Exact constants and explicit regret bounds from the paper (DESIGN §4).

The geometric constants of the uniform distribution on the unit ball of
:math:`\mathbb{R}^d` are computed exactly (regularized incomplete beta functions),
not via the paper's lower bounds, whose lemmas contain slips (noted in
:mod:`.clean_points`).  The explicit bounds of the other theorems are reproduced as
the paper states them, with the discrepancies between statement and proof noted in
each docstring.  One module per theorem:

* :mod:`.clean_points` (``lem:lb``, ``lem:spheres``, ``cor:c1``): ``c1(d, delta)``
  :math:`= P(x_1 \ge \delta)`, ``c2(d, delta)`` :math:`= E[x_2^2 \mid x_1 \ge \delta]`
  and ``expected_clean_points``.  The paper writes ``c1(delta, d)``; the functions
  here take ``(d, delta)``, and ``surface=True`` selects the sphere surface.
* :mod:`.saols` (``thm:stochastic-main-app``): ``saols_regret_bound``.
* :mod:`.etc` (``thm:etc-reg``): ``etc_exploration_rounds`` (``T0``),
  ``etc_regret_bound`` and ``etc_commit_regret_bound`` (the commit term of its proof).
* :mod:`.unknown_horizon` (``alg:unknown_T``, ``thm:best-both``): ``switching_time``
  (the switching time the paper leaves undefined: the crossing of the SA-OLS and
  explore-then-commit bounds) and ``unknown_horizon_regret_bound``.
* :mod:`.exp3_sae` (``alg:UPD-ONE``, ``thm:upd-one-app``): ``Exp3SAEParameters``,
  ``exp3_sae_parameters`` and ``exp3_sae_regret_bound``.
* :mod:`.beyond_paper` (not in the paper): ``band_regret`` and
  ``saols_no_clean_probability``.

Every name is importable from this package (``from strategic_apple_tasting.theory
import c1``); the argument validation they share lives in ``_checks``.
"""

from __future__ import annotations

from .beyond_paper import band_regret, saols_no_clean_probability
from .clean_points import c1, c2, expected_clean_points
from .etc import etc_commit_regret_bound, etc_exploration_rounds, etc_regret_bound
from .exp3_sae import Exp3SAEParameters, exp3_sae_parameters, exp3_sae_regret_bound
from .saols import saols_regret_bound
from .unknown_horizon import switching_time, unknown_horizon_regret_bound

__all__ = [
    "Exp3SAEParameters",
    "band_regret",
    "c1",
    "c2",
    "etc_commit_regret_bound",
    "etc_exploration_rounds",
    "etc_regret_bound",
    "exp3_sae_parameters",
    "exp3_sae_regret_bound",
    "expected_clean_points",
    "saols_no_clean_probability",
    "saols_regret_bound",
    "switching_time",
    "unknown_horizon_regret_bound",
]
