"""Loading a saved learner from bytes nobody vouches for: every field checked before use.

:mod:`.persistence` unpacks a saved file into its ``meta.json`` document and its arrays and
hands them here. :func:`read` then builds the learner, refusing the first field it cannot
accept with a :class:`Refused` error that names it (``desk.pending.versions[3]``):

* **Nothing runs that the caller did not allow.** The ``learner`` field may name a registered
  learner (:data:`~strategic_apple_tasting.learners.LEARNERS`, or one installed under the
  entry-point group :data:`~strategic_apple_tasting.learners.ENTRY_POINTS`) or an entry of the
  caller's allow-list (a class, or an import path ``"package.module:Class"``). Any other name
  is refused before anything is imported.
* **The learner's own template decides the shape of everything.** The parameters must be the
  class's, exactly; the learner is built from them and reset on a throwaway generator, and its
  state is the template: the file must give every field of it, arrays of the same dtype and
  shape (but those the class's tags name in ``variable_shapes``), and for a compiled learner scalars
  equal to the template's (its kernels cannot change them). The learner's
  :meth:`~.base.Learner._check_state` then checks what its kernels rely on in the values
  (counters, slots, finiteness) before any kernel sees the state.
* **The decision bookkeeping is consistent.** Published rules have β of length d and finite,
  a finite threshold, a probability in [0, 1], and a general rule's state is checked like the
  learner's; the rule in force is held, every pending decision's rule is held and decides it as
  recorded, uses cover the pending decisions, ids are unique integers or strings, counters are
  >= 0, the clock is finite and the cadence valid; the generator's state is a valid PCG64 one.
* **Nothing is allocated that the file cannot hold**: a state larger than the file could
  inflate to is refused before the template is built.

A learner that passes is assembled only at the end, so a refusal leaves nothing half-made.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import numpy as np

#: A file whose learner's state is larger than its size times deflate's largest ratio cannot
#: hold it.
from .archive import INFLATE

#: Largest dimension a saved learner may have. Some learners' parameters take time and memory
#: that grow with d before any state exists (EXP3-SAE's grid size n^d, an exact integer: at
#: d = 2^40 it took 22 GB); no learner the package runs comes near it.
MAX_D = 10**6
#: Bit generators whose state is plain JSON (the others keep arrays) and can be checked here.
BIT_GENERATORS = ("PCG64", "PCG64DXSM")

#: The keys of a saved learner's document and of its decision bookkeeping (every format).
META_KEYS = ("format", "format_version", "written_by", "learner", "params", "d", "rng", "state",
             "attributes", "desk")
DESK_KEYS = ("in_force", "rules", "uses", "pending", "reported", "version", "next_id", "clock",
             "stale", "every_outcomes", "period", "outcomes_since")


class Refused(ValueError):
    """A field of a saved learner that cannot be loaded; the message names it."""


# -- plain JSON fields -----------------------------------------------------------------------
def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _object(node: Any, field: str, keys: Iterable[str]) -> dict[str, Any]:
    """``node`` as a JSON object with exactly ``keys``."""
    keys = tuple(keys)
    if not isinstance(node, dict):
        raise Refused(f"{field} must be an object with keys {', '.join(keys)}, got "
                      f"{_show(node)}")
    for key in keys:
        if key not in node:
            raise Refused(f"{field} is missing {key!r}")
    extra = sorted(set(node) - set(keys))
    if extra:
        raise Refused(f"{field} has an unknown key {extra[0]!r}")
    return node


def _list(node: Any, field: str) -> list[Any]:
    if not isinstance(node, list):
        raise Refused(f"{field} must be a list, got {_show(node)}")
    return node


def _int(value: Any, field: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise Refused(f"{field} must be an integer >= {low}, got {_show(value)}")
    return value


def _bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise Refused(f"{field} must be true or false, got {_show(value)}")
    return value


def _real(value: Any, field: str, low: float = -math.inf, high: float = math.inf,
          open_low: bool = False) -> float:
    """A finite number in [low, high] (or (low, high]) as a float."""
    try:
        number = float(value) if not isinstance(value, bool | str) else math.nan
    except (TypeError, OverflowError):
        number = math.nan
    if not (math.isfinite(number) and low <= number <= high and not (open_low and number == low)):
        bounds = "" if low == -math.inf and high == math.inf else \
            f" in {'(' if open_low else '['}{low:g}, {high:g}]"
        raise Refused(f"{field} must be a finite number{bounds}, got {_show(value)}")
    return number


def _id(value: Any, field: str) -> int | str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise Refused(f"{field} must be an integer or a string (a decision id), got "
                      f"{_show(value)}")
    return value


# -- which learner ---------------------------------------------------------------------------
def _path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def allowed(allow: Any) -> dict[str, type | None]:
    """The caller's allow-list as import path → class (None: a path to import if named).

    ``ValueError`` (the caller's mistake, not the file's) unless ``allow`` is a list of learner
    classes and import paths.
    """
    if allow is None:
        return {}
    if isinstance(allow, str | bytes) or not isinstance(allow, Iterable):
        raise ValueError(f"allow must be a list of learner classes or import paths "
                         f"'package.module:Class', got {allow!r}")
    out: dict[str, type | None] = {}
    for item in allow:
        if _learner_class(item):
            out[_path(item)] = item
        elif isinstance(item, str) and ":" in item:
            out[item] = None
        else:
            raise ValueError(f"allow must hold learner classes or import paths "
                             f"'package.module:Class', got {item!r}")
    return out


def _learner_class(item: Any) -> bool:
    """Whether ``item`` is a learner class: by what a learner class has (the loader sits above
    the protocol it reads, and imports no learner's base)."""
    return isinstance(item, type) and all(
        callable(getattr(item, name, None))
        for name in ("tags", "param_names", "reset", "check_state", "restore"))


def resolve(name: Any, allow: dict[str, type | None]) -> type:
    """The class a file's ``learner`` field names: registered, or allowed by the caller.
    Nothing is imported for any other name."""
    from . import ENTRY_POINTS, LEARNERS, learner_class

    if not isinstance(name, str):
        raise Refused(f"learner must be a learner's name, got {_show(name)}")
    if name in LEARNERS:
        return LEARNERS[name]
    if name in allow:
        found = allow[name]
        if found is not None:
            return found
    elif not any(e.name == name for e in metadata.entry_points(group=ENTRY_POINTS)):
        raise Refused(f"learner {name!r} is not a registered learner, and the caller did not "
                      "allow it (nothing was imported): pass allow=[its class or "
                      f"{name!r}] to load a learner written elsewhere")
    try:  # an installed entry point, or an import path the caller allowed
        return learner_class(name)
    except ValueError as exc:
        raise Refused(f"learner {exc}") from None


# -- the learner's template ------------------------------------------------------------------
def _params(node: Any, cls: type) -> dict[str, Any]:
    from .encoding import from_jsonable

    names = cls.param_names()
    node = _object(node, "params", names)
    try:
        return {k: from_jsonable(v) for k, v in node.items()}
    except ValueError as exc:
        raise Refused(f"params: {exc}") from None


def template_learner(cls: type, params: dict[str, Any], d: int, size: int) -> Any:
    """The learner built from the file's parameters and reset at dimension ``d`` on a
    throwaway generator: its state is the template the file must match. A state larger than a
    file of ``size`` bytes could inflate to is refused before it is allocated."""
    name = getattr(cls, "name", cls.__name__)
    try:
        learner = cls(**params)
        need = learner.state_bytes(d)
    except Exception as exc:  # the learner's own checks of its (untrusted) parameters
        raise Refused(f"params do not make a {name} learner ({type(exc).__name__}: "
                      f"{exc})") from None
    if need > INFLATE * size + 2**20:
        raise Refused(f"d = {d} with these params makes a state of about {need:,} bytes, more "
                      f"than a file of {size:,} bytes holds")
    try:
        learner.reset(d, np.random.default_rng(0))
    except Exception as exc:  # as above: the learner's checks of its parameters and d
        raise Refused(f"params and d = {d} do not make a {name} learner "
                      f"({type(exc).__name__}: {exc})") from None
    return learner


# -- states ------------------------------------------------------------------------------------
def _record(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _kind(value: Any) -> str | None:
    """The JSON kind of a scalar (numpy scalars as Python's)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    return None


def _same_scalar(value: Any, template: Any) -> bool:
    if _kind(value) != _kind(template):
        return False
    if isinstance(template, np.generic):
        template = template.item()
    if isinstance(template, float):
        return value == template or (math.isnan(value) and math.isnan(template))
    return value == template


class States:
    """Decodes state trees (a state, a plain-Python learner's attributes, a published rule's
    state or snapshot) against their templates, from the file's arrays, remembering which
    arrays were used.

    ``exact``: a compiled learner, whose state's scalars must equal the template's.
    ``variable``: the fields whose arrays may differ from the template's shape.
    """

    def __init__(self, arrays: dict[str, np.ndarray], exact: bool,
                 variable: Iterable[str] = ()) -> None:
        self.arrays = arrays
        self.exact = exact
        self.variable = frozenset(variable)
        self.used: set[str] = set()

    def decode(self, node: Any, template: Any, field: str, exact: bool | None = None) -> Any:
        exact = self.exact if exact is None else exact
        if isinstance(template, np.ndarray):
            return self._array(node, template, field)
        if _record(template):
            cls = type(template)
            names = template._fields
            node = _object(node, field, ("tuple", "fields"))
            name = node["tuple"]
            if name != cls.__name__ and name not in getattr(cls, "former_names", ()):
                older = None if not isinstance(name, str) else (
                    self._agent_model(node, template, field, exact)
                    or self._told_belief(node, template, field, exact))
                if older is not None:
                    return older
                raise Refused(f"{field} must be a {cls.__name__}, got {_show(name)}")
            fields = _object(node["fields"], f"{field}.fields", names)
            return cls(**{k: self.decode(fields[k], getattr(template, k), f"{field}.{k}", exact)
                          for k in names})
        value = self._scalar(node, field)
        if exact:
            if not _same_scalar(value, template):
                raise Refused(f"{field} must be {_show(template)} (what the learner's "
                              f"parameters make it), got {_show(value)}")
            return template
        # A plain-Python learner's scalar may change between numbers as it runs (a count that
        # became a mean); nothing else changes kind unless the template has none (None).
        kind, want = _kind(value), _kind(template)
        if kind != want and want != "none" and {kind, want} != {"int", "float"}:
            raise Refused(f"{field} must be a {want} (as the learner's template has it), got "
                          f"{_show(value)}")
        if isinstance(template, np.generic) and kind == want:
            return type(template)(value)
        return value

    def _agent_model(self, node: dict[str, Any], template: Any, field: str,
                     exact: bool) -> Any:
        """Files written before every built-in agent model reached compiled code as one
        :class:`~..game.agents.AgentsCore` hold the model's own record (``LazyBestResponse``
        with its fields): rebuilt by the model's class and compiled, then held to the template
        as any field is. None when ``node`` is no such record."""
        from ..game.agents import MODELS, AgentsCore

        model = {m.__name__: m for m in MODELS}.get(node["tuple"])
        if type(template) is not AgentsCore or model is None:
            return None
        fields = _object(node["fields"], f"{field}.fields", model._fields)
        values: dict[str, Any] = {}
        for key in model._fields:
            sub = fields[key]
            if isinstance(sub, dict) and set(sub) == {"array"}:
                name = sub["array"]
                if not isinstance(name, str) or name not in self.arrays:
                    raise Refused(f"{field}.{key} names array {_show(name)}, which the file "
                                  "does not hold")
                self.used.add(name)
                values[key] = np.array(self.arrays[name], copy=True)
            else:
                values[key] = self._scalar(sub, f"{field}.{key}")
        try:
            compiled = model(**values).compiled()
        except (TypeError, ValueError) as exc:
            raise Refused(f"{field} is not a {model.__name__} ({exc})") from None
        if not exact:
            return compiled
        for key in AgentsCore._fields:
            have, want = getattr(compiled, key), getattr(template, key)
            same = (isinstance(have, np.ndarray) and isinstance(want, np.ndarray)
                    and have.dtype == want.dtype and np.array_equal(have, want)) \
                or (not isinstance(want, np.ndarray) and _same_scalar(have, want))
            if not same:
                raise Refused(f"{field} must be the agent model the learner's parameters make "
                              f"({model.__name__} differs in {key})")
        return template

    def _told_belief(self, node: dict[str, Any], template: Any, field: str,
                     exact: bool) -> Any:
        """Files written before a learner told δ held its agent model in a
        :class:`~.budget.BudgetBelief` hold the model alone: decoded as the belief's ``base``.
        None when the template is no told belief."""
        from .budget import BudgetBelief

        if type(template) is not BudgetBelief or template.estimating:
            return None
        return template._replace(base=self.decode(node, template.base, field, exact))

    def _array(self, node: Any, template: np.ndarray, field: str) -> np.ndarray:
        node = _object(node, field, ("array",))
        name = node["array"]
        if not isinstance(name, str) or name not in self.arrays:
            raise Refused(f"{field} names array {_show(name)}, which the file does not hold")
        arr = self.arrays[name]
        shape_ok = arr.shape == template.shape or (field in self.variable
                                                   and arr.ndim == template.ndim)
        if arr.dtype != template.dtype or not shape_ok:
            shape = (f"{template.ndim} dimensions" if field in self.variable
                     else f"shape {template.shape}")
            raise Refused(f"{field} must be an array of dtype {template.dtype} and {shape}, got "
                          f"dtype {arr.dtype} and shape {arr.shape}")
        self.used.add(name)
        return np.array(arr, order="C", copy=True)  # writable: kernels update in place

    @staticmethod
    def _scalar(node: Any, field: str) -> Any:
        if isinstance(node, dict) and "float" in node:
            node = _object(node, field, ("value", "float"))
            value = node["value"]
            if node["float"] is not True:
                raise Refused(f"{field}.float must be true, got {_show(node['float'])}")
            if isinstance(value, str) and value in ("nan", "inf", "-inf"):
                return float(value)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise Refused(f"{field} must be a number, got {_show(value)}")
            try:
                return float(value)
            except OverflowError:
                raise Refused(f"{field} must be a float, got {_show(value)}") from None
        node = _object(node, field, ("value",))
        value = node["value"]
        if not (value is None or isinstance(value, bool | int | str)):
            raise Refused(f"{field} must be a number, a string or null, got {_show(value)}")
        return value


def check_state(learner: Any, state: Any, template: Any, field: str) -> None:
    """The learner's own check of a decoded state (its kernels' invariants)."""
    try:
        learner.check_state(state, template, field)
    except ValueError as exc:
        raise Refused(str(exc)) from None


# -- the random generator ----------------------------------------------------------------------
def rng_from(node: Any) -> np.random.Generator:
    """A Generator from a saved bit generator's state, every field checked (numpy would
    coerce some and raise other errors on others)."""
    node = _object(node, "rng", ("bit_generator", "state", "has_uint32", "uinteger"))
    name = node["bit_generator"]
    if name not in BIT_GENERATORS:
        raise Refused(f"rng.bit_generator must be one of {', '.join(BIT_GENERATORS)}, got "
                      f"{_show(name)}")
    inner = _object(node["state"], "rng.state", ("state", "inc"))
    value = _int(inner["state"], "rng.state.state")
    inc = _int(inner["inc"], "rng.state.inc")
    if value >= 2**128:
        raise Refused(f"rng.state.state must be below 2^128, got {_show(value)}")
    if inc >= 2**128 or inc % 2 == 0:
        raise Refused(f"rng.state.inc must be odd and below 2^128 (a PCG increment), got "
                      f"{_show(inc)}")
    has = _int(node["has_uint32"], "rng.has_uint32")
    if has > 1:
        raise Refused(f"rng.has_uint32 must be 0 or 1, got {has}")
    spare = _int(node["uinteger"], "rng.uinteger")
    if spare >= 2**32:
        raise Refused(f"rng.uinteger must be below 2^32, got {spare}")
    bitgen = getattr(np.random, name)()
    bitgen.state = node
    if bitgen.state != node:
        raise Refused(f"rng does not survive numpy's {name}: {_show(node)}")
    return np.random.Generator(bitgen)


# -- the decision bookkeeping ------------------------------------------------------------------
def _beta(node: Any, d: int, field: str) -> np.ndarray:
    from .encoding import ARRAY_TAG as _ARRAY

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
        from .decisions import DeskRecord, PendingDecision

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
        from .decisions import PublishedRule

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
        from ..game.policies import GeneralRule, LinearThreshold

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
    from ..game.policies import GeneralRule

    if isinstance(rule, GeneralRule):
        return GeneralRule.publish(rule.state, rule.beta, rule.threshold)
    return rule


def _tally(values: Iterable[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


# -- the whole learner ---------------------------------------------------------------------------
#: Bytes an ``.npy`` member may hold beyond its data: its header (numpy reads at most 10,000).
NPY_HEADER = 1 << 14


@dataclass
class Prepared:
    """What a saved document's ``learner``, ``params`` and ``d`` make: the class and the
    template learner (reset at ``d`` on a throwaway generator), before any array is read."""

    cls: type
    learner: Any

    def largest_array(self) -> int | None:
        """Bytes of the template's largest array (state and attributes): no member a field
        of them reads can be larger. None when the class lets a field's shape vary."""
        if self.cls.tags().variable_shapes:
            return None
        sizes = [0]

        def walk(value: Any) -> None:
            if isinstance(value, np.ndarray):
                sizes.append(value.nbytes)
            elif _record(value):
                for item in value:
                    walk(item)
        walk(self.learner.state)
        for value in self.learner.model_attributes().values():
            walk(value)
        return max(sizes)


def prepare(meta: Any, allow: dict[str, type | None], size: int) -> Prepared:
    """The class and template a saved document names (``size``: the file's bytes), or
    :class:`Refused`: nothing of the file's arrays is read for this."""
    meta = _object(meta, "meta.json", META_KEYS)
    if not isinstance(meta["written_by"], str):
        raise Refused(f"written_by must be a release, got {_show(meta['written_by'])}")
    cls = resolve(meta["learner"], allow)
    params = _params(meta["params"], cls)
    d = _int(meta["d"], "d", 1)
    # Every learner keeps d numbers or more (an estimate, a rule, a played expert): a file that
    # cannot inflate to them does not describe a learner of that dimension.
    most = min(MAX_D, INFLATE * size // 8 + 1)
    if d > most:
        raise Refused(f"d must be at most {most:,} (a file of {size:,} bytes holds fewer "
                      f"numbers; no saved learner has more than {MAX_D:,}), got {d:,}")
    return Prepared(cls, template_learner(cls, params, d, size))


def array_cap(prepared: Prepared, meta: dict[str, Any], name: str) -> tuple[int | None, str]:
    """The most bytes array member ``name`` (without ``.npy``) can hold for the learner
    ``prepared`` describes, and why: the template's largest array, or the pending decisions'
    features (one row of d float64 a decision the document lists). None: no cap but the
    archive's total (a class whose fields' shapes vary)."""
    learner = prepared.learner
    row = 8 * learner.dimension
    if name == "pending" or (name.startswith("pending") and name[7:].isdigit()):
        pending = meta["desk"].get("pending") if isinstance(meta["desk"], dict) else None
        ids = pending.get("ids") if isinstance(pending, dict) else None
        count = len(ids) if isinstance(ids, list) and name == "pending" else 1
        return (row * count + NPY_HEADER,
                f"{count:,} pending decision(s) of {learner.dimension} float64 features")
    largest = prepared.largest_array()
    if largest is None:
        return None, ""
    return (largest + NPY_HEADER,
            f"the largest array of a {prepared.cls.__name__} of d = {learner.dimension} takes "
            f"{largest:,} bytes")


def referenced(meta: Any) -> set[str]:
    """The array names a saved document refers to (``{"array": name}`` anywhere in it, and
    the pending decisions' features): a member outside them is used by no field."""
    found: set[str] = {"pending"}
    stack = [meta]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if set(node) == {"array"} and isinstance(node["array"], str):
                found.add(node["array"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    desk = meta.get("desk") if isinstance(meta, dict) else None
    pending = desk.get("pending") if isinstance(desk, dict) else None
    if isinstance(pending, list):  # format 1: an array a pending decision
        found.update(f"pending{k}" for k in range(len(pending)))
    return found


def read(meta: Any, arrays: dict[str, np.ndarray], format_version: int,
         prepared: Prepared, unread: Iterable[str] = ()) -> Any:
    """The learner a saved document describes (formats 1 to 3: they differ in how pending
    decisions are kept and in the digest, checked before this), from its class and template
    (:func:`prepare`), or :class:`Refused`. ``unread``: the file's arrays that the document
    names nowhere (left unread: no field can use them)."""
    cls, learner = prepared.cls, prepared.learner
    template = learner.state
    states = States(arrays, exact=cls.kernels is not None, variable=cls.tags().variable_shapes)
    state = states.decode(meta["state"], template, "state")
    made = learner.model_attributes()
    node = meta["attributes"]
    if not isinstance(node, dict) or set(node) != set(made):
        given = ", ".join(sorted(node)) if isinstance(node, dict) else _show(node)
        raise Refused(f"attributes must be {', '.join(sorted(made)) or 'none'} (what "
                      f"{cls.__name__} keeps), got {given or 'none'}")
    # A plain-Python learner's attributes are its model: decoded as saved, not as the
    # template's kinds (its code, not a kernel, reads them).
    attributes = {name: states.decode(node[name], made[name], f"attribute.{name}", exact=False)
                  for name in sorted(made)}
    for name, value in attributes.items():  # the learner's check may read them
        setattr(learner, name, value)
    check_state(learner, state, template, "state")
    rng = rng_from(meta["rng"])
    desk = Desk(learner, states, template, state).read(meta["desk"], format_version)
    unused = sorted((set(arrays) | set(unread)) - states.used)
    if unused:
        raise Refused(f"it holds arrays no field uses: {', '.join(unused[:3])}")
    learner.restore(state, rng, desk)
    return learner
