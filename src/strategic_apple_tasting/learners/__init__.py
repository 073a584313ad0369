"""Learners (DESIGN §3) behind one protocol, and the registry mapping names to classes.

A learner is named by its registry name (``"sa-ols"``), by a name another installed package
registers under the entry-point group :data:`ENTRY_POINTS`, or by its import path
(``"package.module:Class"``): :func:`learner_class` resolves all three, so a learner written
outside this package runs from ``sat run``, ``sat sweep`` (spawned workers import it by name)
and the reports.

:func:`njit` is the decorator for a compiled learner's kernels: numba's, with the package's
options (cached on disk under stamps that follow the source, no fast-math, the GIL released).
"""

from .._jit import njit
from .base import Learner, LearnerKernels
from .baselines import AcceptAll, Oracle, RejectAll
from .decisions import Decision, PublishedRule
from .epsilon_greedy import EpsilonGreedy
from .etc import ExploreThenCommit
from .exp3_sae import Exp3SAE
from .exp3p_sae import Exp3PSAE
from .greedy_ols import SAOLS, NaiveGreedyOLS, ShiftedOLS
from .lin_ts import LinTS
from .linucb import LinUCB
from .logistic import NaiveLogistic, OffsetLogistic, SALogistic
from .offset_ols import OffsetOLS
from .registry import ENTRY_POINTS, LEARNERS, learner_class, make_learner
from .sampled_sae import SampledSAE
from .tags import LearnerTags
from .theorem import Theorem
from .unknown_horizon import UnknownHorizon

__all__ = ["ENTRY_POINTS", "LEARNERS", "SAOLS", "AcceptAll", "Decision", "EpsilonGreedy",
           "Exp3PSAE", "Exp3SAE", "ExploreThenCommit", "Learner", "LearnerKernels", "LearnerTags",
           "LinTS",
           "LinUCB", "NaiveGreedyOLS", "NaiveLogistic", "OffsetLogistic", "OffsetOLS", "Oracle",
           "PublishedRule", "RejectAll", "SALogistic", "SampledSAE", "ShiftedOLS", "Theorem",
           "UnknownHorizon", "learner_class", "make_learner", "njit"]
