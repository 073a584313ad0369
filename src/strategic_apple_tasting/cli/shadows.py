"""``sat serve shadows attach|detach|list`` and ``sat serve promote``: candidates on a
running service, over its API (as ``sat serve rollback``). The API key comes from
``--key-file`` or the environment, never from the command line."""

from __future__ import annotations

import argparse
import base64
from pathlib import Path
from typing import Any

from .remote import answered, api_key, post

#: The largest saved learner sent as a base (bytes): the service's own limit.
MAX_BASE = 64 << 20


def cmd_shadows(args: argparse.Namespace) -> int:
    """Run the command; 0 on success, 1 with the service's one line when it refuses."""
    command = ("sat serve promote" if args.action == "promote"
               else f"sat serve shadows {args.shadows_action}")
    if args.action == "shadows" and args.shadows_action == "list":
        return _list(args, command)
    key = api_key(args, command)
    if args.action == "promote":
        doc = post(args.url, "/promote", {"name": args.name}, key, command)
        if doc is None:
            return 1
        print(f"rule version {doc['version']} is in force: shadow {doc['promotes']!r}'s rule "
              f"(beta {doc['beta']}, threshold {doc['threshold']})")
        return 0
    if args.shadows_action == "detach":
        doc = post(args.url, "/shadows/detach", {"name": args.name}, key, command)
        if doc is None:
            return 1
        print(f"shadow {doc['name']!r} detached at log position {doc['detached_at']}")
        return 0
    body: dict[str, Any] = {"name": args.name, "learner": args.learner,
                            "params": dict(args.param or [])}
    if args.canary is not None:
        body["canary"] = args.canary
    if args.base is not None:
        body["base"] = base64.b64encode(_read_base(args.base)).decode("ascii")
    doc = post(args.url, "/shadows", body, key, command)
    if doc is None:
        return 1
    print(f"shadow {doc['name']!r} attached at log position {doc['attached_at']} (its rule "
          f"version {doc['rule_version']})")
    return 0


def _read_base(path: str) -> bytes:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"--base {path!r} is not a file")
    if p.stat().st_size > MAX_BASE:
        raise ValueError(f"--base {path!r} is over {MAX_BASE:,} bytes")
    return p.read_bytes()


def _list(args: argparse.Namespace, command: str) -> int:
    import httpx

    base = args.url.rstrip("/")
    try:
        listed = answered(httpx.get(base + "/shadows", timeout=30), command)
        metrics = answered(httpx.get(base + "/metrics", timeout=60), command)
    except httpx.HTTPError as exc:
        raise ValueError(f"--url {args.url!r}: GET /shadows failed ({exc})") from None
    if listed is None or metrics is None:
        return 1
    figures = metrics.get("shadows", {})
    for shadow in listed["shadows"]:
        seen = figures.get(shadow["name"], {})
        agreement = seen.get("agreement")
        print("\t".join([
            shadow["name"], shadow["learner"], f"attached at {shadow['attached_at']}",
            f"canary {shadow['canary']:g}" if shadow["canary"] else "never answers",
            f"{seen.get('decisions', 0):,} decisions",
            "agreement —" if agreement is None else f"agreement {agreement:.1%}"]))
    return 0
