"""Saving and loading a learner: a versioned file of JSON metadata plus arrays, never pickle.

A saved learner is a zip archive (``unzip -l`` lists it) holding ``meta.json`` (the format and
its version, the release that wrote it, the learner's name and parameters, its dimension, its
random generator's state, its decision bookkeeping) and one ``.npy`` file per array of its
state, read back with ``allow_pickle=False``. Nothing in it runs code when loaded.

A state is rebuilt on the learner's own template (``_init_state(d)`` of the saved parameters):
the file must give every field of it, of the same kind and dtype, so a file that does not
describe this learner is refused in one line rather than half-loaded. A newer release keeps a
reader for each older format (:data:`READERS`); a file from a newer format is refused with the
version it needs.

A learner can be saved if its state is ``None`` or a ``NamedTuple`` of arrays, numbers,
strings and further such ``NamedTuple``s, and so is whatever else it keeps on itself (a
plain-Python learner's ``self._gram``): every learner of this package, and a plain-Python
learner that keeps its model that way. A learner whose state lives in another library's objects
(the peer adapters) cannot be saved without pickle, and says so.
"""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

#: What the ``format`` field of a saved learner's metadata says.
FORMAT = "strategic-apple-tasting learner"
#: The format this release writes (2: the decisions awaiting outcomes as one array; 1: one
#: array each, which made a service's saved state grow a file per pending decision).
FORMAT_VERSION = 2

_AGENTS = "__agents__"
_ARRAY = "__array__"


# -- parameters (and rules' documents) as JSON -----------------------------------------------
def jsonable(value: Any) -> Any:
    """``value`` (a learner's parameters) as plain JSON: agent models and arrays are tagged so
    that :func:`from_jsonable` rebuilds them."""
    from ..game.agents import AGENTS

    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return {_ARRAY: value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, tuple) and type(value) in AGENTS.values():
        return {_AGENTS: type(value).name,
                "fields": {k: jsonable(v) for k, v in value._asdict().items()}}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    raise ValueError(f"parameter value {value!r} ({type(value).__name__}) cannot be written "
                     "as JSON")


def from_jsonable(value: Any) -> Any:
    """The inverse of :func:`jsonable`."""
    from ..game.agents import AGENTS

    if isinstance(value, dict):
        if _ARRAY in value:
            return np.asarray(value[_ARRAY], dtype=value["dtype"])
        if _AGENTS in value:
            if value[_AGENTS] not in AGENTS:
                raise ValueError(f"agent model {value[_AGENTS]!r} is unknown; allowed: "
                                 f"{', '.join(AGENTS)}")
            return AGENTS[value[_AGENTS]](**{k: from_jsonable(v)
                                             for k, v in value["fields"].items()})
        return {k: from_jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_jsonable(v) for v in value]
    return value


# -- states as a tree of JSON with arrays aside ------------------------------------------------
def _encode(value: Any, path: str, arrays: dict[str, np.ndarray], owner: str) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise ValueError(f"{owner}: state field {path} holds Python objects; it cannot be "
                             "saved without pickle")
        arrays[path] = value
        return {"array": path}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {"tuple": type(value).__name__,
                "fields": {k: _encode(v, f"{path}.{k}", arrays, owner)
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


def _decode(node: Any, template: Any, path: str, arrays: dict[str, np.ndarray]) -> Any:
    def wrong(what: str) -> ValueError:
        return ValueError(f"the file does not describe this learner: state field {path} "
                          f"{what}")

    if isinstance(template, np.ndarray):
        if not isinstance(node, dict) or "array" not in node or node["array"] not in arrays:
            raise wrong("should be an array")
        arr = arrays[node["array"]]
        if arr.dtype != template.dtype or arr.ndim != template.ndim:
            raise wrong(f"should be a {template.ndim}-d {template.dtype} array, got "
                        f"{arr.ndim}-d {arr.dtype}")
        return np.array(arr, order="C", copy=True)  # writable: kernels update in place
    if isinstance(template, tuple) and getattr(type(template), "from_parameters", False):
        # A function of the learner's parameters (the compiled agent model it believes in):
        # the one they give now, whatever form an earlier release saved it in.
        return template
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        if not isinstance(node, dict) or node.get("tuple") != type(template).__name__ \
                or set(node["fields"]) != set(template._fields):
            raise wrong(f"should be a {type(template).__name__} with fields "
                        f"{', '.join(template._fields)}")
        return type(template)(**{k: _decode(node["fields"][k], getattr(template, k),
                                            f"{path}.{k}", arrays) for k in template._fields})
    if not isinstance(node, dict) or "value" not in node:
        raise wrong("should be a number, a string or None")
    value = node["value"]
    if node.get("float"):
        value = float(value)
    if template is None or value is None:
        return value
    try:
        return type(template)(value)
    except (TypeError, ValueError):
        raise wrong(f"should be a {type(template).__name__}, got {value!r}") from None


# -- the learner -------------------------------------------------------------------------------
def _class_name(learner: Any) -> str:
    from . import LEARNERS

    cls = type(learner)
    if LEARNERS.get(cls.name) is cls:
        return cls.name
    return f"{cls.__module__}:{cls.__qualname__}"


def _writable(path: Path) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ValueError(f"path {str(path)!r} is a directory; give a file name")
    if not parent.is_dir():
        raise ValueError(f"path {str(path)!r} cannot be written: directory {str(parent)!r} "
                         "does not exist")
    if not os.access(parent, os.W_OK):
        raise ValueError(f"path {str(path)!r} cannot be written: directory {str(parent)!r} is "
                         "not writable")


def dumps(learner: Any) -> bytes:
    """``learner`` (reset, at any point of a run) in the saved format, as bytes (what
    :func:`save` writes; a database keeps them in a column)."""
    from .. import __version__

    learner._require_reset()
    owner = type(learner).__name__
    arrays: dict[str, np.ndarray] = {}
    state = _encode(learner._state, "state", arrays, owner)
    attributes = {name: _encode(value, f"attribute.{name}", arrays, owner)
                  for name, value in _attributes(learner).items()}
    desk = _encode_desk(learner, arrays, owner)
    meta = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "written_by": __version__,
        "learner": _class_name(learner), "params": jsonable(learner.get_params()),
        "d": learner._d, "rng": _jsonable_rng(learner._rng), "state": state,
        "attributes": attributes, "desk": desk,
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("meta.json", json.dumps(meta, indent=1))
        for name, arr in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
            zf.writestr(f"{name}.npy", buf.getvalue())
    return out.getvalue()


def save(learner: Any, path: str | os.PathLike) -> Path:
    """Write ``learner`` (reset, at any point of a run) to ``path``; returns the path.

    The file is written next to its final name and renamed into place, so a crash never leaves
    half a file under that name.
    """
    learner._require_reset()
    path = Path(path)
    _writable(path)
    data = dumps(learner)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def load(path: str | os.PathLike) -> Any:
    """The learner saved at ``path``, ready to continue where it was saved.

    ``ValueError`` in one line if the file is missing, is not a saved learner, comes from a
    newer format than this release reads, or does not describe its learner.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} is not a file")
    return loads(path.read_bytes(), f"path {str(path)!r}")


def loads(data: bytes, source: str = "the data") -> Any:
    """The learner that :func:`dumps` gave ``data`` (``source`` names it in errors)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            meta = json.loads(zf.read("meta.json"))
            arrays = {name[:-4]: np.lib.format.read_array(io.BytesIO(zf.read(name)),
                                                          allow_pickle=False)
                      for name in zf.namelist() if name.endswith(".npy")}
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, ValueError, OSError) as exc:
        raise ValueError(f"{source} is not a saved learner ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{source} is not a saved learner (no {FORMAT!r} format field)")
    version = meta.get("format_version")
    if version not in READERS:
        newest = max(READERS)
        raise ValueError(f"{source} is in saved-learner format {version!r} (written "
                         f"by release {meta.get('written_by')!r}); this release reads formats "
                         f"{', '.join(map(str, sorted(READERS)))}"
                         + (": upgrade to read it" if isinstance(version, int)
                            and version > newest else ""))
    return READERS[version](meta, arrays)


def _read_v1(meta: dict[str, Any], arrays: dict[str, np.ndarray], format_version: int = 1
             ) -> Any:
    """Formats 1 and 2 (they differ only in how pending decisions are kept)."""
    from . import learner_class

    cls = learner_class(meta["learner"])
    learner = cls(**from_jsonable(meta["params"]))
    # The reset builds a template of the state only: a learner that draws at reset (its
    # sampled experts) must not move the saved generator, which is put back after.
    learner.reset(int(meta["d"]), np.random.default_rng(0))
    template = learner._state
    learner._state = _decode(meta["state"], template, "state", arrays)
    learner._rng = _rng_from(meta["rng"])
    made = _attributes(learner)
    if set(made) != set(meta["attributes"]):
        raise ValueError(f"the file does not describe this learner: it keeps attributes "
                         f"{', '.join(sorted(meta['attributes'])) or 'none'}, this learner "
                         f"{', '.join(sorted(made)) or 'none'}")
    for name, node in meta["attributes"].items():
        setattr(learner, name, _decode(node, made[name], f"attribute.{name}", arrays))
    _decode_desk(learner, meta["desk"], template, arrays, format_version)
    return learner


def _read_v2(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any:
    return _read_v1(meta, arrays, 2)


def _attributes(learner: Any) -> dict[str, Any]:
    """What a learner keeps on itself besides its hyperparameters, its state and the decision
    bookkeeping: a plain-Python learner may keep its model there (``self._gram``)."""
    from .decisions import DESK_ATTRIBUTES

    params = set(learner.get_params())
    return {k: v for k, v in vars(learner).items()
            if k not in params and k not in DESK_ATTRIBUTES}


#: Format version → reader. A new format adds a reader and keeps the old ones.
READERS = {1: _read_v1, 2: _read_v2}


# -- the random generator ----------------------------------------------------------------------
def _jsonable_rng(rng: np.random.Generator) -> dict[str, Any]:
    return rng.bit_generator.state


def _rng_from(state: dict[str, Any]) -> np.random.Generator:
    name = state.get("bit_generator")
    bitgen_cls = getattr(np.random, str(name), None)
    if not (isinstance(bitgen_cls, type) and issubclass(bitgen_cls, np.random.BitGenerator)):
        raise ValueError(f"the file's random generator {name!r} is not a numpy BitGenerator")
    bitgen = bitgen_cls()
    bitgen.state = state
    return np.random.Generator(bitgen)


# -- the decision bookkeeping ------------------------------------------------------------------
def _encode_rule(rule: Any, path: str, arrays: dict[str, np.ndarray], owner: str) -> Any:
    from ..game.policies import GeneralRule

    doc = {"beta": jsonable(np.asarray(rule.beta, dtype=float)),
           "threshold": float(rule.threshold), "probability": float(rule.probability)}
    if isinstance(rule, GeneralRule):
        if rule.function is not None:
            raise ValueError(f"{owner}: its published rule is a Python function, which cannot "
                             "be saved without pickle")
        doc["state"] = _encode(rule.state, path, arrays, owner)
    return doc


def _decode_rule(doc: dict[str, Any], template: Any, path: str,
                 arrays: dict[str, np.ndarray]) -> Any:
    from ..game.policies import GeneralRule, LinearThreshold

    beta = from_jsonable(doc["beta"])
    if "state" in doc:
        return GeneralRule(state=_decode(doc["state"], template, path, arrays), beta=beta,
                           threshold=doc["threshold"], probability=doc["probability"])
    return LinearThreshold(beta=beta, threshold=doc["threshold"],
                           probability=doc["probability"])


def _encode_desk(learner: Any, arrays: dict[str, np.ndarray], owner: str) -> dict[str, Any]:
    rules = []
    for version, published in learner._rules.items():
        rules.append({
            "version": version, "effective": published.effective,
            "rule": _encode_rule(published.rule, f"rule{version}", arrays, owner),
            "snapshot": {f: _encode(v, f"snapshot{version}.{f}", arrays, owner)
                         for f, v in learner._snapshots.get(version, {}).items()},
        })
    waiting = list(learner._pending.items())
    arrays["pending"] = (np.stack([p.x_obs for _, p in waiting]) if waiting
                         else np.empty((0, learner._d)))
    pending = {"ids": [id_ for id_, _ in waiting], "versions": [p.version for _, p in waiting],
               "accepted": [p.accepted for _, p in waiting]}
    return {
        "in_force": None if learner._in_force is None else learner._in_force.version,
        "rules": rules, "uses": [[v, n] for v, n in learner._uses.items()],
        "pending": pending, "reported": sorted(learner._reported, key=str),
        "version": learner._version, "next_id": learner._next_id, "clock": learner._clock,
        "stale": learner._stale, "every_outcomes": learner._every_outcomes,
        "period": learner._period, "outcomes_since": learner._outcomes_since,
    }


def _decode_desk(learner: Any, doc: dict[str, Any], template: Any,
                 arrays: dict[str, np.ndarray], format_version: int) -> None:
    from .decisions import PublishedRule, _Pending

    params = learner.get_params()
    learner._rules = {}
    learner._snapshots = {}
    for entry in doc["rules"]:
        version = entry["version"]
        rule = _decode_rule(entry["rule"], template, f"rule{version}", arrays)
        learner._rules[version] = PublishedRule(version, rule, entry["effective"],
                                                learner.name, params)
        if entry["snapshot"]:
            learner._snapshots[version] = {
                f: _decode(node, getattr(template, f), f"snapshot{version}.{f}", arrays)
                for f, node in entry["snapshot"].items()}
    in_force = doc["in_force"]
    learner._in_force = None if in_force is None else learner._rules[in_force]
    learner._uses = {v: n for v, n in doc["uses"]}
    learner._pending = {}
    if format_version == 1:
        for k, p in enumerate(doc["pending"]):
            learner._pending[p["id"]] = _Pending(p["version"], arrays[f"pending{k}"],
                                                 p["accepted"])
    else:
        p, xs = doc["pending"], arrays["pending"]
        if xs.shape != (len(p["ids"]), learner._d):
            raise ValueError(f"the file does not describe this learner: {len(p['ids'])} "
                             f"pending decisions but an array of shape {xs.shape}")
        for k, (id_, version, accepted) in enumerate(zip(p["ids"], p["versions"],
                                                         p["accepted"], strict=True)):
            learner._pending[id_] = _Pending(version, xs[k].copy(), accepted)
    learner._reported = set(doc["reported"])
    learner._version = doc["version"]
    learner._next_id = doc["next_id"]
    learner._clock = doc["clock"]
    learner._stale = doc["stale"]
    learner._every_outcomes = doc["every_outcomes"]
    learner._period = doc["period"]
    learner._outcomes_since = doc["outcomes_since"]
