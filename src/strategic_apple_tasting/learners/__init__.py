"""Learners (DESIGN §3) behind one protocol, and the registry mapping names to classes."""

from .base import Learner, LearnerKernels
from .baselines import AcceptAll, Oracle, RejectAll
from .etc import ExploreThenCommit
from .exp3_sae import Exp3SAE
from .exp3p_sae import Exp3PSAE
from .greedy_ols import SAOLS, NaiveGreedyOLS, ShiftedOLS
from .ridge_bandits import EpsilonGreedy, LinTS, LinUCB
from .unknown_horizon import UnknownHorizon

#: Name (as on the command line) → learner class.
LEARNERS: dict[str, type[Learner]] = {
    cls.name: cls for cls in (SAOLS, ExploreThenCommit, UnknownHorizon, Exp3SAE, Exp3PSAE,
                              Oracle, NaiveGreedyOLS, ShiftedOLS, AcceptAll, RejectAll, LinUCB,
                              LinTS, EpsilonGreedy)
}


def make_learner(name: str, **params) -> Learner:
    """Build a registered learner by name (``ValueError`` naming the choices if unknown).

    Examples
    --------
    >>> make_learner("sa-ols", delta=0.2)
    SAOLS(delta=0.2, r0=None, feedback=None, agents=None, accept_when_locked=False)
    """
    try:
        cls = LEARNERS[name]
    except KeyError:
        raise ValueError(f"learner must be one of {', '.join(LEARNERS)}, got {name!r}") from None
    return cls(**params)


__all__ = ["LEARNERS", "SAOLS", "AcceptAll", "EpsilonGreedy", "Exp3PSAE", "Exp3SAE",
           "ExploreThenCommit", "Learner", "LearnerKernels", "LinTS", "LinUCB", "NaiveGreedyOLS",
           "Oracle", "RejectAll", "ShiftedOLS", "UnknownHorizon", "make_learner"]
