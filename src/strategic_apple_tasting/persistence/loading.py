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

from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import numpy as np

from ..learners.base import Learner
from ..learners.encoding import from_jsonable
from ..learners.introspect import model_attributes, param_names
from ..learners.registry import ENTRY_POINTS, LEARNERS, learner_class
from .archive import INFLATE  # a state larger than a file's size times this cannot be in it
from .desk import Desk
from .fields import Refused
from .fields import doc_int as _int
from .fields import doc_object as _object
from .fields import show as _show
from .states import States, check_state, is_record

#: Largest dimension a saved learner may have. Some learners' parameters take time and memory
#: that grow with d before any state exists (EXP3-SAE's grid size n^d, an exact integer: at
#: d = 2^40 it took 22 GB); no learner the package runs comes near it.
MAX_D = 10**6
#: Bit generators whose state is plain JSON (the others keep arrays) and can be checked here.
BIT_GENERATORS = ("PCG64", "PCG64DXSM")

#: The keys of a saved learner's document and of its decision bookkeeping (every format).
META_KEYS = ("format", "format_version", "written_by", "learner", "params", "d", "rng", "state",
             "attributes", "desk")


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
    """Whether ``item`` is a learner class."""
    return isinstance(item, type) and issubclass(item, Learner)


def resolve(name: Any, allow: dict[str, type | None]) -> type:
    """The class a file's ``learner`` field names: registered, or allowed by the caller.
    Nothing is imported for any other name."""
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
    names = list(param_names(cls))
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
            elif is_record(value):
                for item in value:
                    walk(item)
        walk(self.learner.state)
        for value in model_attributes(self.learner).values():
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
    made = model_attributes(learner)
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
