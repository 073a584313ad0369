"""What a learner's theorem promises: its regret exponent and the assumptions it rests on.

A learner class states its own theorem (``theorem``, a :class:`Theorem`, None for learners the
paper proves nothing about); the reports read it from there, for the package's learners and for
learners from outside alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

#: Setting → (whether a value satisfies it, what is needed): the assumption of every
#: strategy-aware theorem, that every agent games (with some truthful agents, the shift is paid
#: for nothing and regret grows linearly in their share).
EVERY_AGENT_GAMES: Mapping[str, tuple[Callable[[object], bool], str]] = {
    "truthful": (lambda v: v == 0, "every agent to game: truthful = 0"),
}

#: The settings under which the oracle's regret is exactly 0: every agent games, lazily, with a
#: budget δ > 0.
ORACLE_ASSUMPTIONS: Mapping[str, tuple[Callable[[object], bool], str]] = {
    **EVERY_AGENT_GAMES,
    "delta": (lambda v: isinstance(v, int | float) and v > 0,
              "agents able to game, δ > 0; at δ = 0 regret 0 holds by construction"),
    "agents": (lambda v: v == "lazy", "lazy agents"),
}


@dataclass(frozen=True)
class Theorem:
    """A learner's regret exponent as its theorem states it: E[Reg(T)] = Õ(T^exponent).

    Attributes
    ----------
    text : str
        The exponent as shown (``"1/2"``, ``"(d+1)/(d+2)"``).
    ref : str
        The paper's label of the theorem.
    exponent : callable or None
        The exponent at dimension ``d``; None when it is not one number.
    brief : str
        A few characters for an exponent that is not one number.
    assumptions : mapping
        Setting → (predicate on its value, what is needed): runs whose settings break one are
        outside the theorem (default: :data:`EVERY_AGENT_GAMES`).
    after_switching_time : bool
        The exponent holds only after the unknown-horizon learner's switching time τ*.

    Examples
    --------
    >>> rate = Theorem("(d+1)/(d+2)", "thm:upd-one-app", lambda d: (d + 1) / (d + 2))
    >>> rate.short(2), rate.shown(2)
    ('3/4', '(d+1)/(d+2) = 3/4 (thm:upd-one-app)')
    """

    text: str
    ref: str
    exponent: Callable[[int], float] | None
    brief: str = ""
    assumptions: Mapping[str, tuple[Callable[[object], bool], str]] = field(
        default_factory=lambda: EVERY_AGENT_GAMES)
    after_switching_time: bool = False

    def short(self, d: int | None) -> str:
        """The exponent in a few characters, at dimension ``d`` when it depends on it."""
        if self.exponent is None:
            return self.brief or self.text
        if d is None:
            return self.text
        return str(Fraction(self.exponent(d)).limit_denominator(1000))

    def shown(self, d: int | None) -> str:
        """The exponent at dimension ``d`` (if it depends on it) with its theorem."""
        text = self.text
        if "d" in text and d is not None and self.exponent is not None:
            text = f"{text} = {d + 1}/{d + 2}"
        return f"{text} ({self.ref})"
