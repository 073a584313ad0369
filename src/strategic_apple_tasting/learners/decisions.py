"""Deciding in the real world: rules published for a period, decisions by id, outcomes later.

A lender publishes a rule (the paper's principal commits to it publicly), decides many applicants
under it, and learns whether a loan was repaid months later, in any order. A
:class:`DecisionDesk` keeps that bookkeeping for one learner, by composition: a learner makes its
desk at ``reset``, hands it its hooks (:class:`DeskHooks`: its next rule, how it learns, its
state) and its lock, and offers it as ``learner.desk`` (each of the desk's methods holds the
learner's lock):

* :meth:`~DecisionDesk.publish` makes the learner's next rule the rule in force, with a version
  and the time it took effect;
* :meth:`~DecisionDesk.decide` decides one applicant's observed context under the rule in force
  and returns a :class:`Decision` (id, accepted, the rule's version);
* :meth:`~DecisionDesk.report` feeds a decision's outcome back whenever it arrives, and the
  learner learns from it against the rule in force *when the decision was made*: SA-OLS's clean
  test asks whether the applicant would have been accepted without moving, which only the rule
  the applicant answered can tell.

Under apple tasting a rejected applicant's outcome is never seen, so :meth:`~DecisionDesk.decide`
feeds the learner its (empty) feedback at once and the decision takes no report; under bandit
feedback every decision waits for its outcome. The rule changes only when published, by a call
to :meth:`~DecisionDesk.publish` or by a cadence (:meth:`~DecisionDesk.publish_every`: every k
outcomes, or once a period of the decision clock has passed).

The per-round API (``policy``, ``act``, ``update``) is the special case in which each round's
outcome is reported before the next rule is published: ``update`` learns under the rule in
force and the next ``policy`` call publishes.

Some learners' ``update`` reads what their ``policy`` drew (EXP3-SAE learns the weight of the
expert it played, with that expert's probability): they name those state fields in
``published_fields``, a copy of them is kept with each published rule, and an outcome is
learned with the copy of its decision's rule in place.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..game.game import check_number
from ..game.policies import GeneralRule, LinearThreshold
from .inputs import check_bound, check_vector


@dataclass(frozen=True)
class PublishedRule:
    """A rule in force from ``effective`` on, until the next publication.

    ``rule`` is what decides (``rule.accepts(x)``); :meth:`to_json` is what a lender would
    post: the version, β, the threshold, when it took effect, and the learner with its
    parameters.
    """

    version: int
    rule: LinearThreshold | GeneralRule
    effective: float
    learner: str
    params: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A small JSON-serializable document of the rule.

        A general rule (LinUCB's) is not linear: its linear part is given, marked
        ``"kind": "general"``, and decisions follow the learner's full rule.
        """
        from .encoding import jsonable

        return {
            "version": self.version,
            "kind": "general" if isinstance(self.rule, GeneralRule) else "linear",
            "beta": [float(b) for b in np.asarray(self.rule.beta, dtype=float)],
            "threshold": float(self.rule.threshold),
            "probability": float(self.rule.probability),
            "effective": self.effective,
            "learner": self.learner,
            "params": jsonable(self.params),
        }


@dataclass(frozen=True)
class Decision:
    """One applicant decided: its id, the decision, and the version of the rule it was made
    under (``time`` on the decision clock).

    ``used`` is whether the learner used the point for learning, for a decision learned from at
    once (a rejection under apple tasting: nothing will be observed); None for a decision that
    awaits its outcome, whose :meth:`~DecisionDesk.report` says it (the engine counts both).
    """

    id: int | str
    accepted: bool
    version: int
    time: float
    used: bool | None = None


@dataclass
class PendingDecision:
    """A decision awaiting its outcome: its rule's version, the observed context, the
    decision."""

    version: int
    x_obs: np.ndarray
    accepted: bool


@dataclass
class DeskRecord:
    """The decision bookkeeping of a learner (:meth:`DecisionDesk.desk_record`,
    :meth:`DecisionDesk.restore_desk`), as a saved file keeps it: written and read in one place,
    :mod:`strategic_apple_tasting.persistence.desk`.

    ``in_force`` is the rule in force (None before the first publication or after a per-round
    API round); ``rules`` the published rules some decision still needs, by version, with
    ``snapshots`` of their published fields and ``uses`` (the pending decisions and holds under
    each); ``pending`` the decisions awaiting outcomes, in decision order; ``reported`` the ids
    whose feedback is complete; ``version`` the last version published; ``next_id`` the next
    default id; ``clock`` the decision clock; ``stale`` whether the next decision publishes
    first; ``every_outcomes`` and ``period`` the publication cadence; ``outcomes_since`` the
    outcomes reported since the last publication.
    """

    in_force: PublishedRule | None
    rules: dict[int, PublishedRule]
    snapshots: dict[int, dict[str, Any]]
    uses: dict[int, int]
    pending: dict[int | str, PendingDecision]
    reported: set[int | str]
    version: int
    next_id: int
    clock: float
    stale: bool
    every_outcomes: int | None
    period: float | None
    outcomes_since: int


def _number(name: str, value: Any, **allowed: Any) -> float:
    """:func:`~strategic_apple_tasting.game.game.check_number`, for numpy scalars too."""
    return check_number(name, value.item() if isinstance(value, np.generic) else value,
                        **allowed)


def _count(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1 or None, got {value!r}")
    return int(value)


class DeskHooks(NamedTuple):
    """What a desk needs of the learner it serves, given by the learner at ``reset``.

    ``publish()`` is the learner's next rule (checked); ``learn(rule, x_obs, accepted,
    reward)`` learns one decision's feedback under ``rule`` and says whether the point was used;
    ``state()`` is the learner's live state (whose ``published_fields`` a publication copies);
    ``params()`` its hyperparameters; ``tags()`` its class's tags (the input bound among
    them); and its name, ``feedback`` parameter (None if it has none) and dimension.
    """

    name: str
    publish: Callable[[], LinearThreshold | GeneralRule]
    learn: Callable[[Any, np.ndarray, bool, float | None], bool]
    state: Callable[[], Any]
    params: Callable[[], dict[str, Any]]
    tags: Callable[[], Any]
    feedback: str | None
    dimension: int


def _locked(method: Callable) -> Callable:
    """A desk method run while holding the desk's lock (its learner's: reentrant)."""
    @functools.wraps(method)
    def locked(self: DecisionDesk, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return method(self, *args, **kwargs)
    return locked


class DecisionDesk:
    """Publication, decisions by id and delayed outcomes, for one learner (each
    :class:`~.base.Learner` makes one at ``reset``, its ``desk``; see the module's
    description). Each public method holds ``lock``, the learner's (a desk of its own when
    none is given).

    Examples
    --------
    >>> from strategic_apple_tasting.learners import SAOLS
    >>> learner = SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0)
    >>> desk = learner.desk
    >>> rule = desk.publish(time=0)
    >>> first = desk.decide([0.5, 0.2], time=1)
    >>> second = desk.decide([-0.4, 0.1], time=2)
    >>> first.version == second.version == rule.version == 1
    True
    >>> desk.pending()  # the accepted applicants' outcomes are awaited
    [0, 1]
    >>> desk.report(1, -0.2)  # whenever they arrive, in any order
    True
    >>> desk.report(0, 0.7)
    True
    >>> desk.publish(time=3).version
    2
    """

    def __init__(self, hooks: DeskHooks, lock: Any = None) -> None:
        self.hooks = hooks
        self.lock = threading.RLock() if lock is None else lock
        # The bookkeeping a saved file keeps, in one record (the desk's own fields beside it
        # are not saved).
        self._book = DeskRecord(
            in_force=None,
            rules={},  # versions some pending decision needs
            snapshots={},  # version → published fields
            uses={},  # version → pending decisions made under it
            pending={}, reported=set(), version=0, next_id=0,
            clock=0.0,  # the decision clock: the caller's times, else decisions made
            stale=False,  # the per-round API ended a round: publish before deciding
            every_outcomes=None, period=None, outcomes_since=0)
        self._learned_since = False  # whether the learner learned since its last publication

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["lock"]  # a lock does not pickle; the learner's copy gives its own
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # The learner's runtime may have given this copy its lock already (pickle's order).
        self.__dict__.update(state)
        self.__dict__.setdefault("lock", threading.RLock())

    @_locked
    def publish_every(self, outcomes: int | None = None, period: float | None = None
                      ) -> DecisionDesk:
        """Publish automatically: after every ``outcomes`` reports, and/or at the first
        decision once ``period`` has passed on the decision clock since the rule in force took
        effect (with no ``time`` given, the clock counts decisions). None turns a cadence off;
        returns ``self``."""
        self._book.every_outcomes = _count("outcomes", outcomes)
        if period is not None:
            period = _number("period", period, low=0.0, open_low=True, what="> 0 or None")
        self._book.period = period
        return self

    def _time(self, time: Any) -> float:
        if time is None:
            return self._book.clock
        time = _number("time", time)
        if time < self._book.clock:
            raise ValueError(f"time must not go back: got {time!r} after {self._book.clock!r}")
        self._book.clock = time
        return time

    # -- publication -----------------------------------------------------------------------
    @_locked
    def publish(self, time: float | None = None) -> PublishedRule:
        """Publish the learner's next rule: it decides from now on. Returns it with its
        version (1, 2, ...) and the time it took effect."""
        return self._publish_at(self._time(time))

    @_locked
    def adopt(self, rule: LinearThreshold, time: float | None = None) -> PublishedRule:
        """Publish a given linear rule (a lender's scorecard, a rule from elsewhere) in place
        of the learner's own next rule: it decides from now on, and the outcomes of its
        decisions are learned against it, as against a rule of the learner's. A learner whose
        update reads what its own rule drew (``published_fields``) cannot learn under a rule
        it did not draw, and refuses."""
        fields = self.hooks.tags().published_fields
        if fields:
            raise ValueError(f"{self.hooks.name} learns from what its own rule drew "
                             f"({', '.join(fields)}): it cannot adopt a given "
                             "rule")
        if not isinstance(rule, LinearThreshold):
            raise ValueError(f"a rule to adopt must be linear (β, threshold), got "
                             f"{type(rule).__name__}")
        beta = check_vector("rule.beta", rule.beta, self.hooks.dimension, np.inf)
        threshold = _number("rule.threshold", rule.threshold)
        return self._publish_at(self._time(time), LinearThreshold(beta, threshold))

    def _publish_at(self, time: float, given: LinearThreshold | None = None) -> PublishedRule:
        rule = self.hooks.publish() if given is None else given
        self._book.version += 1
        published = PublishedRule(self._book.version, rule, time, self.hooks.name,
                                  self.hooks.params())
        if self._book.in_force is not None and not self._book.uses.get(self._book.in_force.version):
            self._forget(self._book.in_force.version)
        self._book.in_force = published
        self._book.rules[published.version] = published
        fields = self.hooks.tags().published_fields
        if fields:
            self._book.snapshots[published.version] = {
                f: copy.deepcopy(getattr(self.hooks.state(), f)) for f in fields}
        self._book.stale = False
        self._book.outcomes_since = 0
        self._learned_since = False
        return published

    def _version_in_force(self) -> int | None:
        return None if self._book.in_force is None else self._book.in_force.version

    @_locked
    def end_round(self) -> None:
        """The per-round API's round is over: the next ``policy()`` publishes. The rule in
        force is dropped unless a decision awaits an outcome under it (it may be a function of
        the learner's model as it was, which neither stays valid nor pickles)."""
        self._book.stale = True
        if self._book.in_force is not None and not self._book.uses.get(self._book.in_force.version):
            self._forget(self._book.in_force.version)
            self._book.in_force = None

    def _forget(self, version: int) -> None:
        self._book.rules.pop(version, None)
        self._book.snapshots.pop(version, None)
        self._book.uses.pop(version, None)

    @_locked
    def rule_in_force(self) -> PublishedRule | None:
        """The published rule deciding now (None before the first publication)."""
        return self._book.in_force

    @property
    def clock(self) -> float:
        """The decision clock: the last time given to the API, else the decisions made."""
        with self.lock:
            return self._book.clock

    @_locked
    def desk_record(self) -> DeskRecord:
        """The decision bookkeeping (the live objects, not copies: read it, do not change
        it), for saving."""
        return self._book

    @_locked
    def restore_desk(self, record: DeskRecord) -> None:
        """Take ``record`` (checked for consistency by the loader) as the decision
        bookkeeping, in place of what :meth:`reset` made."""
        self._book = dataclasses.replace(record)

    @_locked
    def current(self) -> PublishedRule:
        """The rule in force, published first if there is none or a round has ended."""
        if self._book.in_force is None or self._book.stale:
            return self._publish_at(self._book.clock)
        return self._book.in_force

    # -- decisions -------------------------------------------------------------------------
    @_locked
    def decide(self, x_obs: Any, id: int | str | None = None, time: float | None = None
               ) -> Decision:
        """Decide one applicant under the rule in force (published first if none is, or if
        the cadence's period has passed). ``id`` defaults to the next integer; ``time`` to
        the decision clock (the number of decisions made)."""
        x = check_vector("x_obs", x_obs, self.hooks.dimension, self.hooks.tags().input_bound)
        id = _as_id(id)
        if id is None:
            book = self._book
            while book.next_id in book.pending or book.next_id in book.reported:
                book.next_id += 1
            id = self._book.next_id
        elif isinstance(id, bool) or not isinstance(id, int | str):
            raise ValueError(f"id must be an integer or a string, got {id!r}")
        elif id in self._book.pending or id in self._book.reported:
            raise ValueError(f"id {id!r} is already taken by an earlier decision")
        now = self._time(time)
        rule = self.current()
        if self._book.period is not None and now >= rule.effective + self._book.period:
            rule = self._publish_at(now)
        if self._learned_since and not self.hooks.tags().holds_rules:
            raise ValueError(f"{self.hooks.name}'s published rule reads its live model, which has "
                             "learned since it was published: publish() before deciding again")
        accepted = rule.rule.accepts(x)
        decision = Decision(id, accepted, rule.version, now,
                            self._file(id, accepted, rule.version, x))
        if not (accepted or self._bandit()):
            self._book.reported.add(id)  # its (empty) feedback is complete: no report will come
        if time is None:
            self._book.clock += 1.0
        return decision

    def _file(self, id: int | str, accepted: bool, version: int, x: np.ndarray) -> bool | None:
        """Keep a decision awaiting its outcome (None), or (a rejection under apple tasting,
        whose feedback, nothing observed, is complete now) learn from it at once and return
        whether the point was used."""
        if accepted or self._bandit():
            self._book.pending[id] = PendingDecision(version, x, accepted)
            self._book.uses[version] = self._book.uses.get(version, 0) + 1
            return None
        return self.learn_under(version, x, False, None)

    @_locked
    def record(self, x_obs: Any, id: int | str, accepted: bool, version: int, time: float
               ) -> Decision:
        """File a decision made elsewhere under published rule ``version`` (a decision
        service's workers decide from the published rule alone; the one learner records their
        decisions in the log's order). The rule must still be held (the one in force, one a
        pending decision needs, or one kept by :meth:`hold`) and must give ``accepted``.

        The log that calls this keeps ids unique, so the desk does not remember recorded ids
        (a service's log would otherwise grow the learner's state without end)."""
        x = check_vector("x_obs", x_obs, self.hooks.dimension, self.hooks.tags().input_bound)
        id = _as_id(id)
        if isinstance(id, bool) or not isinstance(id, int | str):
            raise ValueError(f"id must be an integer or a string, got {id!r}")
        if id in self._book.pending:
            raise ValueError(f"id {id!r} is already taken by a decision awaiting its outcome")
        published = self._book.rules.get(version)
        if published is None:
            raise ValueError(f"rule version {version!r} is not held (held: "
                             f"{sorted(self._book.rules) or 'none'}): hold() the versions deciders "
                             "may still use")
        if published.rule.accepts(x) != bool(accepted):
            raise ValueError(f"decision {id!r} says accepted={bool(accepted)}, but rule "
                             f"version {version} {'accepts' if not accepted else 'rejects'} "
                             "its context")
        now = self._time(time)
        return Decision(id, bool(accepted), version, now,
                        self._file(id, bool(accepted), version, x))

    @_locked
    def hold(self, version: int) -> None:
        """Keep published rule ``version`` (the one in force, or one still held) until
        :meth:`release`: deciders elsewhere may still decide under it."""
        if version not in self._book.rules:
            raise ValueError(f"rule version {version!r} is not held: it cannot be kept")
        self._book.uses[version] = self._book.uses.get(version, 0) + 1

    @_locked
    def release(self, version: int) -> None:
        """Undo one :meth:`hold` of ``version``; it is forgotten once nothing needs it."""
        if not self._book.uses.get(version):
            raise ValueError(f"rule version {version!r} is not held by hold()")
        self._book.uses[version] -= 1
        if not self._book.uses[version] and version != self._version_in_force():
            self._forget(version)

    def _bandit(self) -> bool:
        return self.hooks.feedback == "bandit"

    @_locked
    def pending(self) -> list[int | str]:
        """Ids of the decisions whose outcomes are awaited, in decision order."""
        return list(self._book.pending)

    @_locked
    def report(self, id: int | str, outcome: float) -> bool:
        """Feed back the outcome (the reward of the decision taken) of decision ``id``: the
        learner learns from it under the rule in force when the decision was made. Returns
        whether the point was used for learning; may publish, by the outcome cadence."""
        id = _as_id(id)
        pending = self._book.pending.get(id) if isinstance(id, int | str) else None
        if pending is None:
            if isinstance(id, int | str) and id in self._book.reported:
                raise ValueError(f"decision {id!r} has no outcome to report: it was a rejection "
                                 "under apple tasting (never observed) or was reported already")
            raise ValueError(f"decision {id!r} is unknown: no decision with that id awaits an "
                             "outcome")
        outcome = check_bound("outcome", _number("outcome", outcome),
                              self.hooks.tags().input_bound)
        del self._book.pending[id]
        self._book.reported.add(id)
        used = self.learn_under(pending.version, pending.x_obs, pending.accepted,
                                 float(outcome))
        self._book.uses[pending.version] -= 1
        if not self._book.uses[pending.version] and pending.version != self._version_in_force():
            self._forget(pending.version)
        self._book.outcomes_since += 1
        every = self._book.every_outcomes
        if every is not None and self._book.outcomes_since >= every:
            self._publish_at(self._book.clock)
        return used

    @_locked
    def learn_under(self, version: int, x_obs: np.ndarray, accepted: bool,
                     reward: float | None) -> bool:
        """Learn from one decision's feedback under the rule of ``version``, with the state
        fields its publication drew put back for the call."""
        rule = self._book.rules[version].rule
        snapshot = self._book.snapshots.get(version)
        self._learned_since = True
        if snapshot is None or version == self._version_in_force():
            return bool(self.hooks.learn(rule, x_obs, accepted, reward))
        now = {f: copy.deepcopy(getattr(self.hooks.state(), f)) for f in snapshot}
        _assign(self.hooks.state(), snapshot)
        try:
            return bool(self.hooks.learn(rule, x_obs, accepted, reward))
        finally:
            _assign(self.hooks.state(), now)


def _assign(state: Any, values: dict[str, Any]) -> None:
    """Write saved field values back into a state's arrays, in place (the compiled kernels
    hold the arrays, not the fields)."""
    for name, value in values.items():
        target = getattr(state, name)
        if isinstance(target, np.ndarray):
            target[...] = value
        else:
            raise TypeError(f"published field {name!r} of {type(state).__name__} must be an "
                            f"array (updated in place), got {type(target).__name__}")


def _as_id(id: Any) -> Any:
    """A numpy integer id as the int it is: ``publish_every`` takes numpy integers, and so do
    the ids of ``decide``, ``record`` and ``report`` (a decision id read back from an array
    is one); anything else is left for the caller's check."""
    return int(id) if isinstance(id, np.integer) else id
