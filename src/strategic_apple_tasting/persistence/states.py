"""A learner's state as a tree of JSON with its arrays aside, both ways: :func:`encode` writes
it (a state, a plain-Python learner's attributes, a published rule's state or snapshot) and
:class:`States` reads it back against the learner's own template, trusting nothing."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..game.agents import MODELS, AgentsCore
from ..learners.budget import BudgetBelief
from .fields import Refused
from .fields import doc_object as _object
from .fields import show as _show


# -- states as a tree of JSON with arrays aside ------------------------------------------------
def encode(value: Any, path: str, arrays: dict[str, np.ndarray], owner: str) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise ValueError(f"{owner}: state field {path} holds Python objects; it cannot be "
                             "saved without pickle")
        arrays[path] = value
        return {"array": path}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {"tuple": type(value).__name__,
                "fields": {k: encode(v, f"{path}.{k}", arrays, owner)
                           for k, v in value._asdict().items()}}
    if value is None or isinstance(value, bool | str | np.bool_):
        return {"value": bool(value) if isinstance(value, np.bool_) else value}
    if isinstance(value, int | np.integer):
        return {"value": int(value)}
    if isinstance(value, float | np.floating):
        value = float(value)
        return {"value": value if math.isfinite(value) else repr(value), "float": True}
    raise ValueError(f"{owner}: state field {path} is a {type(value).__name__}, which cannot be "
                     "saved without pickle (a learner saves if its state is None or a NamedTuple "
                     "of arrays, numbers and NamedTuples)")



def is_record(value: Any) -> bool:
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
        if is_record(template):
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
