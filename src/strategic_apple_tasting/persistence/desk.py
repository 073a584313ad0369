"""A learner's decision bookkeeping (:class:`~..learners.decisions.DeskRecord`) in a saved
file, both ways: :func:`encode_desk` writes it, :class:`Desk` reads it back with every field
checked against the learner it belongs to. The format is written and read here, and only here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..game.policies import GeneralRule, LinearThreshold
from ..learners.decisions import DeskRecord, PendingDecision, PublishedRule
from ..learners.encoding import ARRAY_TAG as _ARRAY
from ..learners.encoding import jsonable
from .fields import Refused
from .fields import doc_bool as _bool
from .fields import doc_id as _id
from .fields import doc_int as _int
from .fields import doc_list as _list
from .fields import doc_object as _object
from .fields import doc_real as _real
from .fields import show as _show
from .states import States, check_state, encode

DESK_KEYS = ("in_force", "rules", "uses", "pending", "reported", "version", "next_id", "clock",
             "stale", "every_outcomes", "period", "outcomes_since")


# -- the decision bookkeeping ------------------------------------------------------------------
def encode_rule(rule: Any, path: str, arrays: dict[str, np.ndarray], owner: str) -> Any:
    doc = {"beta": jsonable(np.asarray(rule.beta, dtype=float)),
           "threshold": float(rule.threshold), "probability": float(rule.probability)}
    if isinstance(rule, GeneralRule):
        if rule.function is not None:
            raise ValueError(f"{owner}: its published rule is a Python function, which cannot "
                             "be saved without pickle")
        doc["state"] = encode(rule.state, path, arrays, owner)
    return doc


def encode_desk(learner: Any, arrays: dict[str, np.ndarray], owner: str) -> dict[str, Any]:
    desk = learner.desk.desk_record()
    rules = []
    for version, published in desk.rules.items():
        rules.append({
            "version": version, "effective": published.effective,
            "rule": encode_rule(published.rule, f"rule{version}", arrays, owner),
            "snapshot": {f: encode(v, f"snapshot{version}.{f}", arrays, owner)
                         for f, v in desk.snapshots.get(version, {}).items()},
        })
    waiting = list(desk.pending.items())
    arrays["pending"] = (np.stack([p.x_obs for _, p in waiting]) if waiting
                         else np.empty((0, learner.dimension)))
    pending = {"ids": [id_ for id_, _ in waiting], "versions": [p.version for _, p in waiting],
               "accepted": [p.accepted for _, p in waiting]}
    return {
        "in_force": None if desk.in_force is None else desk.in_force.version,
        "rules": rules, "uses": [[v, n] for v, n in desk.uses.items()],
        "pending": pending, "reported": sorted(desk.reported, key=str),
        "version": desk.version, "next_id": desk.next_id, "clock": desk.clock,
        "stale": desk.stale, "every_outcomes": desk.every_outcomes,
        "period": desk.period, "outcomes_since": desk.outcomes_since,
    }


def _beta(node: Any, d: int, field: str) -> np.ndarray:
    node = _object(node, field, (_ARRAY, "dtype"))
    if node["dtype"] != "float64":
        raise Refused(f"{field}.dtype must be 'float64', got {_show(node['dtype'])}")
    values = _list(node[_ARRAY], field)
    if len(values) != d:
        raise Refused(f"{field} must have {d} elements (d), got {len(values)}")
    return np.array([_real(v, f"{field}[{k}]") for k, v in enumerate(values)], dtype=float)


class Desk:
    """Decodes the decision bookkeeping of ``learner`` (its template made by the loader)."""

    def __init__(self, learner: Any, states: States, template: Any, state: Any) -> None:
        self.learner = learner
        self.states = states
        self.template = template
        self.state = state  # the learner's decoded state, which snapshots are put into
        self.d = learner.dimension

    def read(self, node: Any, format_version: int) -> Any:
        """The desk's bookkeeping (a :class:`~.decisions.DeskRecord`), every field checked."""
        doc = _object(node, "desk", DESK_KEYS)
        version = _int(doc["version"], "desk.version")
        clock = _real(doc["clock"], "desk.clock", 0.0)
        rules, snapshots = self._rules(_list(doc["rules"], "desk.rules"), version, clock)
        in_force = doc["in_force"]
        if in_force is not None and (_int(in_force, "desk.in_force", 1) != version
                                     or in_force not in rules):
            raise Refused(f"desk.in_force must be null or the newest version, {version}, which "
                          f"the file holds; got {_show(in_force)}")
        uses: dict[int, int] = {}
        for k, pair in enumerate(_list(doc["uses"], "desk.uses")):
            field = f"desk.uses[{k}]"
            if not (isinstance(pair, list) and len(pair) == 2):
                raise Refused(f"{field} must be a pair [version, uses], got {_show(pair)}")
            v = self._held(pair[0], rules, f"{field}[0]")
            if v in uses:
                raise Refused(f"{field}[0] repeats version {v}")
            uses[v] = _int(pair[1], f"{field}[1]")
        pending = self._pending(doc["pending"], rules, format_version)
        for v, n in _tally(version for version, _, _ in pending.values()).items():
            if uses.get(v, 0) < n:
                raise Refused(f"desk.uses must count the {n} pending decisions under rule "
                              f"version {v}, counts {uses.get(v, 0)}")
        reported: set[int | str] = set()
        for k, value in enumerate(_list(doc["reported"], "desk.reported")):
            id_ = _id(value, f"desk.reported[{k}]")
            if id_ in reported or id_ in pending:
                raise Refused(f"desk.reported[{k}] repeats decision id {id_!r}")
            reported.add(id_)
        every = doc["every_outcomes"]
        period = doc["period"]
        return DeskRecord(
            in_force=None if in_force is None else rules[in_force], rules=rules,
            snapshots=snapshots, uses=uses,
            pending={i: PendingDecision(*p) for i, p in pending.items()},
            reported=reported, version=version,
            next_id=_int(doc["next_id"], "desk.next_id"), clock=clock,
            stale=_bool(doc["stale"], "desk.stale"),
            every_outcomes=None if every is None else _int(every, "desk.every_outcomes", 1),
            period=None if period is None else _real(period, "desk.period", 0.0,
                                                     open_low=True),
            outcomes_since=_int(doc["outcomes_since"], "desk.outcomes_since"),
        )

    @staticmethod
    def _held(value: Any, rules: dict[int, Any], field: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value not in rules:
            raise Refused(f"{field} must be a rule version the file holds "
                          f"({', '.join(map(str, sorted(rules))) or 'none'}), got "
                          f"{_show(value)}")
        return value

    def _rules(self, entries: list[Any], newest: int, clock: float
               ) -> tuple[dict[int, Any], dict[int, dict[str, Any]]]:
        learner = self.learner
        fields = learner.tags().published_fields
        rules: dict[int, Any] = {}
        snapshots: dict[int, dict[str, Any]] = {}
        for k, entry in enumerate(entries):
            field = f"desk.rules[{k}]"
            entry = _object(entry, field, ("version", "effective", "rule", "snapshot"))
            version = _int(entry["version"], f"{field}.version", 1)
            if version > newest or version in rules:
                raise Refused(f"{field}.version must be a version up to desk.version "
                              f"({newest}) held once, got {version}")
            effective = _real(entry["effective"], f"{field}.effective", 0.0, clock)
            rule = self._rule(entry["rule"], f"{field}.rule")
            rules[version] = PublishedRule(version, rule, effective, learner.name,
                                           learner.get_params())
            snapshot = _object(entry["snapshot"], f"{field}.snapshot", fields)
            if fields:
                where = f"{field}.snapshot"
                saved = {f: self.states.decode(snapshot[f], getattr(self.template, f),
                                               f"{where}.{f}") for f in fields}
                # The published fields are put back into the state to learn a late outcome:
                # the state with them must pass the learner's check.
                check_state(learner, self.state._replace(**saved), self.template, where)
                snapshots[version] = saved
        return rules, snapshots

    def _rule(self, node: Any, field: str) -> Any:
        general = isinstance(node, dict) and "state" in node
        if general and not self.learner.tags().nonlinear:
            raise Refused(f"{field} must be a linear threshold ({type(self.learner).__name__} "
                          "publishes no other), got a general rule")
        node = _object(node, field, ("beta", "threshold", "probability",
                                     *(("state",) if general else ())))
        beta = _beta(node["beta"], self.d, f"{field}.beta")
        threshold = _real(node["threshold"], f"{field}.threshold")
        probability = _real(node["probability"], f"{field}.probability", 0.0, 1.0)
        if not general:
            return LinearThreshold(beta=beta, threshold=threshold, probability=probability)
        state = self.states.decode(node["state"], self.template, f"{field}.state")
        check_state(self.learner, state, self.template, f"{field}.state")
        return GeneralRule(state=state, beta=beta, threshold=threshold, probability=probability)

    def _pending(self, node: Any, rules: dict[int, Any], format_version: int
                 ) -> dict[int | str, tuple[int, np.ndarray, bool]]:
        """Each pending decision's (version, x', accepted): ids unique, its rule held and
        deciding it as recorded (rejections wait for an outcome only under bandit feedback)."""
        field = "desk.pending"
        if format_version == 1:
            entries = _list(node, field)
            rows = []
            for k, entry in enumerate(entries):
                entry = _object(entry, f"{field}[{k}]", ("id", "version", "accepted"))
                if f"pending{k}" not in self.states.arrays:
                    raise Refused(f"the file is missing the array pending{k}.npy (pending "
                                  f"decision {k}'s features)")
                x = self.states.decode({"array": f"pending{k}"}, np.empty(self.d),
                                       f"pending{k}.npy")
                rows.append((entry["id"], entry["version"], entry["accepted"], x,
                             f"{field}[{k}]"))
        else:
            doc = _object(node, field, ("ids", "versions", "accepted"))
            ids = _list(doc["ids"], f"{field}.ids")
            versions = _list(doc["versions"], f"{field}.versions")
            accepted = _list(doc["accepted"], f"{field}.accepted")
            if not len(ids) == len(versions) == len(accepted):
                raise Refused(f"{field}: ids, versions and accepted must have one entry per "
                              f"decision, got {len(ids)}, {len(versions)} and {len(accepted)}")
            if "pending" not in self.states.arrays:
                raise Refused("the file is missing the array pending.npy (the pending "
                              "decisions' features)")
            xs = self.states.decode({"array": "pending"}, np.empty((len(ids), self.d)),
                                    "pending.npy")
            rows = [(i, v, a, xs[k], f"{field}[{k}]")
                    for k, (i, v, a) in enumerate(zip(ids, versions, accepted, strict=True))]
        bandit = self.learner.get_params().get("feedback") == "bandit"
        # A general rule's g writes scratch into its state: ask a copy, so that the loaded
        # rule is the saved one to the bit.
        deciding = {v: _copied(r.rule) for v, r in rules.items()}
        out: dict[int | str, tuple[int, np.ndarray, bool]] = {}
        for id_, version, accepted, x, where in rows:
            id_ = _id(id_, f"{where} id")
            if id_ in out:
                raise Refused(f"{where} repeats decision id {id_!r}")
            version = self._held(version, rules, f"{where} version")
            accepted = _bool(accepted, f"{where} accepted")
            if not np.all(np.isfinite(x)):
                raise Refused(f"{where}: its features must be finite, got {_show(x.tolist())}")
            if not (accepted or bandit):
                raise Refused(f"{where} is a rejection under apple tasting, which waits for no "
                              "outcome")
            if deciding[version].accepts(x) != accepted:
                raise Refused(f"{where} says accepted={accepted}, but rule version {version} "
                              f"{'rejects' if accepted else 'accepts'} its features")
            out[id_] = (version, x.copy(), accepted)
        return out


def _copied(rule: Any) -> Any:
    """``rule``, or for a general rule one on a copy of its state."""
    if isinstance(rule, GeneralRule):
        return GeneralRule.publish(rule.state, rule.beta, rule.threshold)
    return rule


def _tally(values: Iterable[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out

