"""The settings a database keeps, and a start's against them.

Every start writes its settings into the database (the ``service`` table, key ``settings``),
so a restart needs only ``--database``: what it leaves out is taken from the database, what it
states is compared with what the database keeps.

* **Fixed by the log**: the learner, its parameters (compared as the learner they build, so
  stating a default is no change), the dimension, the seed, the shadow learner and its
  parameters, and each feature's ``mean`` and ``scale`` (the rule sees the standardized
  features). A start that gives another value is refused in one line naming the setting, the
  kept value and the given one.
* **Changeable** (:data:`CHANGEABLE`, and each feature's ``name``, ``unit`` and
  ``definition``): nothing a decision or the log's replay computes depends on them. A start
  that changes one says so in one line, old and new, and the database keeps the new value.

A database made before the settings were kept has only the fixed ones (key ``fixed``, which
every database keeps as it was made); the rest then come from the start.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .config import FEATURE_KEYS, ServiceConfig

#: Settings a start may change on a database's log: the cadence, retention, the cap, the
#: limits of a request, exploration's share (each decision logs its own propensity), the
#: lender's contact, the bounds on group labels and requests (none of them is in a decision's
#: bits or the log's replay).
CHANGEABLE = ("publish", "min_interval", "retain_days", "warm_cap", "max_batch", "max_body",
              "body_timeout", "snapshot_every", "snapshot_minutes", "explore", "contact",
              "max_groups", "rate_limit")
#: What a feature may change on a log: its words (the rule sees only its mean and scale).
FEATURE_WORDS = ("name", "unit", "definition")
#: Settings fixed by the log, compared in this order (the first that differs is named).
FIXED = ("learner", "dimension", "seed", "shadow", "features", "params", "shadow_params")
#: Every setting a database keeps, in the order they are shown.
KEPT = ("learner", "params", "dimension", "seed", "features", "shadow", "shadow_params",
        *CHANGEABLE)
#: Settings whose value is a table of parameters: a start's entries go over the kept ones.
TABLES = ("params", "shadow_params")


def kept(config: ServiceConfig) -> dict[str, Any]:
    """The settings of ``config`` as the database keeps them (plain JSON)."""
    from ..learners.encoding import jsonable

    doc = {key: getattr(config, key) for key in KEPT}
    doc.update({key: jsonable(getattr(config, key)) for key in TABLES})
    doc["features"] = config.feature_tables()
    return doc


def read(conn: Any, where: str) -> dict[str, Any] | None:
    """What the database keeps (None: a new database). A database made before the settings
    were kept gives its fixed ones only; a setting missing from the kept ones is taken from
    them too."""
    from . import store
    from .redact import reason

    try:
        fixed = store.read_setting(conn, "fixed")
        doc = store.read_setting(conn, "settings")
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where} keeps settings that are not JSON ({reason(exc, None)})"
                         ) from None
    if fixed is None and doc is None:
        return None
    for name, value in (("fixed", fixed), ("settings", doc)):
        if value is not None and not isinstance(value, dict):
            raise ValueError(f"{where} keeps {name} that are not a table: {value!r:.80}")
    out = _from_fixed(fixed) if fixed is not None else {}
    out.update({k: v for k, v in (doc or {}).items() if k in KEPT})
    return out


def _from_fixed(fixed: dict[str, Any]) -> dict[str, Any]:
    """The settings a database made before they were all kept: the learner, its parameters,
    the dimension, the seed, the scaling (features named x1, x2, ...) and the shadow."""
    out = {k: fixed[k] for k in ("learner", "params", "dimension", "seed") if k in fixed}
    scaling = fixed.get("scaling")
    if isinstance(scaling, dict):
        out["features"] = [{"name": f"x{i + 1}", "unit": "", "definition": "", "mean": m,
                            "scale": s}
                           for i, (m, s) in enumerate(zip(scaling.get("means", []),
                                                          scaling.get("scales", []),
                                                          strict=False))]
    shadow = fixed.get("shadow") or {}
    out["shadow"] = shadow.get("learner")
    out["shadow_params"] = shadow.get("params", {})
    return out


def read_at(url: str) -> dict[str, Any] | None:
    """What the database at ``url`` keeps, read without making or changing anything (None:
    no database there yet, or one without a service's settings)."""
    import sqlalchemy as sa

    from . import store
    from .redact import reason, shown

    store.check_url(url)
    try:
        engine = store.connect(url, create=False)
    except ValueError:  # a SQLite file not made yet: a new database
        return None
    try:
        with engine.connect() as conn:
            if not sa.inspect(conn).has_table(store.service.name):
                return None
            return read(conn, f"database {shown(url)!r}")
    except sa.exc.SQLAlchemyError as exc:
        raise ValueError(f"database {shown(url)!r} cannot be used: {reason(exc, url)}"
                         ) from None
    finally:
        engine.dispose()


def merge(stored: dict[str, Any] | None, given: dict[str, Any]) -> ServiceConfig:
    """The settings of a start: ``given`` (what it states; None: not stated) over ``stored``
    (what the database keeps; None: a new database). A table of parameters is merged entry by
    entry (for the same learner), a declared feature key by key (a name given alone keeps the
    kept unit, definition, mean and scale). Unstated with features declared, the dimension is
    their number."""
    from ..learners.encoding import from_jsonable

    given = {k: v for k, v in given.items() if v is not None}
    doc: dict[str, Any] = {}
    if stored is not None:
        doc = {k: v for k, v in stored.items() if k in KEPT and v is not None}
        for key in TABLES:
            doc[key] = from_jsonable(doc.get(key) or {})
    # A table of parameters is merged for the same learner only: another learner's are its own.
    kept_by = {"params": "learner", "shadow_params": "shadow"}
    same = {key: given.get(by, doc.get(by)) == doc.get(by) for key, by in kept_by.items()}
    for key, value in given.items():
        if key in TABLES and isinstance(value, dict) and isinstance(doc.get(key), dict) \
                and same[key]:
            doc[key] = {**doc[key], **value}
        elif key == "features":
            doc[key] = _features(doc.get("features"), value)
        else:
            doc[key] = value
    if "dimension" not in doc and isinstance(doc.get("features"), list):
        doc["dimension"] = len(doc["features"])
    try:
        config = ServiceConfig(**doc)
    except TypeError as exc:  # a kept setting this release does not know
        raise ValueError(f"the settings cannot be read: {exc}") from None
    if stored is not None:
        # Parameters that build the same learner as the kept ones are the kept ones: stating
        # a default (feedback = "apple") is no change, and the database's record stays as made.
        for key, make in (("params", "make_learner"), ("shadow_params", "make_shadow")):
            before = doc_of(stored, key)
            if before is not None and _same(config, key, before, make):
                setattr(config, key, before)
    return config


def doc_of(stored: dict[str, Any], key: str) -> dict[str, Any] | None:
    """A kept table of parameters as Python values (None if not kept)."""
    from ..learners.encoding import from_jsonable

    value = stored.get(key)
    return from_jsonable(value) if isinstance(value, dict) else None


def _same(config: ServiceConfig, key: str, before: dict[str, Any], make: str) -> bool:
    """Whether ``before`` in place of ``config``'s ``key`` builds the same learner."""
    from dataclasses import replace

    from ..learners.encoding import jsonable

    try:
        built = getattr(config, make)()
        other = getattr(replace(config, **{key: before}), make)()
    except (TypeError, ValueError):
        return False
    if built is None or other is None:
        return built is other
    return jsonable(built.get_params()) == jsonable(other.get_params())


def _features(stored: Any, given: Any) -> Any:
    """The declared features of a start: each given one's keys over the kept one's."""
    if not isinstance(stored, list) or not isinstance(given, list) \
            or len(stored) != len(given):
        return given
    out = []
    for before, now in zip(stored, given, strict=True):
        now = {"name": now} if isinstance(now, str) else now
        out.append({**before, **now} if isinstance(before, dict) and isinstance(now, dict)
                   else now)
    return out


def compare(stored: dict[str, Any], config: ServiceConfig, where: str) -> list[str]:
    """What ``config`` changes of the kept settings, one line each (``publish changed from
    'manual' to 'outcomes:10'``); a ``ValueError`` in one line if it changes one that is
    fixed by the log."""
    try:
        now = kept(config)
    except TypeError:  # a feature's table names an unknown key: the check says so, one line
        config.check()
        raise ValueError("the features cannot be read (see `sat serve settings`)") from None

    def refuse(name: str, before: Any, after: Any) -> None:
        raise ValueError(f"{where} was created with {name} = {_shown(before)}, this start "
                         f"gives {_shown(after)}: it is fixed by the database's log (leave it "
                         "out to keep it, or use another database)")

    before = merge(stored, {})
    for key in FIXED:
        if key not in stored:
            continue
        if key == "features":
            try:
                old = before.feature_list()
            except TypeError as exc:
                raise ValueError(f"{where} keeps features it cannot read: {exc}") from None
            new = config.feature_list()
            if len(old) != len(new):
                refuse("features", [f.name for f in old], [f.name for f in new])
            for i, (o, n) in enumerate(zip(old, new, strict=True)):
                for part in ("mean", "scale"):
                    if getattr(o, part) != getattr(n, part):
                        refuse(f"features[{i}].{part} ({n.name!r})", getattr(o, part),
                               getattr(n, part))
        elif key in TABLES:
            make = "make_learner" if key == "params" else "make_shadow"
            getattr(config, make)()  # parameters that build no learner: one line, saying why
            if not _same(config, key, before.params if key == "params"
                         else before.shadow_params, make):
                old, new = _params(before, make), _params(config, make)
                name = next((k for k in sorted(set(old) | set(new))
                             if old.get(k) != new.get(k)), None)
                if name is None:
                    refuse(key, stored[key], now[key])
                refuse(f"{key}.{name}", old.get(name), new.get(name))
        elif stored[key] != now[key]:
            refuse(key, stored[key], now[key])
    changes = [f"{key} changed from {_shown(stored[key])} to {_shown(now[key])}"
               for key in CHANGEABLE if key in stored and stored[key] != now[key]]
    if "features" in stored:
        for i, (o, n) in enumerate(zip(before.feature_list(), config.feature_list(),
                                       strict=False)):
            changes += [f"features[{i}].{part} changed from {getattr(o, part)!r} to "
                        f"{getattr(n, part)!r}" for part in FEATURE_WORDS
                        if getattr(o, part) != getattr(n, part)]
    return changes


def _params(config: ServiceConfig, make: str) -> dict[str, Any]:
    """The learner's (or shadow's) parameters as built, plain JSON ({} if it cannot be)."""
    from ..learners.encoding import jsonable

    try:
        built = getattr(config, make)()
    except (TypeError, ValueError):
        built = None
    return {} if built is None else jsonable(built.get_params())


def _shown(value: Any) -> str:
    return "unset" if value is None else repr(value)


def resolve(given: dict[str, Any]) -> ServiceConfig:
    """The settings a start runs with: what it states over what its database keeps, a
    change of a fixed setting refused in one line before anything is made."""
    from .redact import shown

    url = given.get("database") or ServiceConfig.database
    stored = read_at(url)
    config = merge(stored, given)
    if stored is not None:
        compare(stored, config, f"database {shown(url)!r}")
    return config


# -- shown as TOML (what --config reads) ------------------------------------------------------

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_lines(doc: dict[str, Any]) -> list[str]:
    """The kept settings as TOML (a ``--config`` file that states them all): each setting a
    line, unset ones as comments, the parameters as tables and each feature a
    ``[[features]]`` table."""
    lines, tables = [], []
    for key in KEPT:
        if key not in doc:
            continue
        value = doc[key]
        if key in TABLES:
            if value:
                tables += ["", f"[{key}]", *_entries(value)]
        elif key == "features":
            for feature in value or []:
                tables += ["", "[[features]]", *_entries(
                    {k: feature[k] for k in FEATURE_KEYS if k in feature})]
        elif value is None:
            lines.append(f"# {key}: unset")
        else:
            lines.append(f"{key} = {_value(value)}")
    return lines + tables


def _entries(table: dict[str, Any]) -> list[str]:
    return [f"# {_key(k)}: null (TOML has none)" if v is None else f"{_key(k)} = {_value(v)}"
            for k, v in table.items()]


def _key(key: str) -> str:
    return key if _BARE.match(key) else _string(key)


def _string(text: str) -> str:
    # JSON's escapes are TOML's, but for DEL, which TOML wants escaped too
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)  # float repr is TOML: 0.3, 1e-05, inf, nan
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()
                               if v is not None) + "}"
    return _string(str(value))
