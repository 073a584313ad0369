"""Two checkouts' decision services side by side: single decisions against the HTTP floor.

For a before/after of a change to the service on a machine too busy for two runs of
``benchmarks/serve.py`` to be compared: one ``sat serve`` of each checkout (SQLite, SA-OLS,
d = 5, as ``benchmarks/serve.py`` starts them; each with ``PYTHONPATH`` at its ``src``), both
started and warmed up before anything is timed, then ``--rounds`` rounds, each running both
servers in a fresh random order: ``GET /whoami`` (the floor: the same stack and key check,
no database) and right after it single decisions, ``--requests`` a client from ``--clients``
aiohttp clients. Per checkout: the medians over rounds of decisions/s, the floor's requests/s,
the per-round ratio (with its smallest and largest) and the server's CPU a decision.

Usage::

    git worktree add /tmp/before <commit>
    PYTHONPATH=<aiohttp> .venv/bin/python benchmarks/serve_ab.py /tmp/before/src src \\
        [--rounds 20] [--clients 32] [--requests 40]

(aiohttp from the ``bench`` extra, or ``pip install --target <dir> aiohttp``.)
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
from pathlib import Path

import serve


def _median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="the first checkout's src directory")
    parser.add_argument("after", help="the second checkout's src directory")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=40, help="requests a client a loop")
    args = parser.parse_args()
    for where in (args.before, args.after):
        if not (Path(where) / "strategic_apple_tasting").is_dir():
            parser.error(f"{where!r} holds no strategic_apple_tasting package: give a "
                         "checkout's src directory")
    body = serve.make_body("single", 1, 5, False, "ab")
    work = Path(tempfile.mkdtemp(prefix="serve-ab-"))
    servers: dict[str, serve.Server] = {}
    given = os.environ.get("PYTHONPATH", "")
    try:
        for name, src in (("before", args.before), ("after", args.after)):
            # The server imports the checkout's package; the clients' aiohttp stays found.
            os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.abspath(src),
                                                                     given]))
            (work / name).mkdir()
            servers[name] = serve.Server(f"sqlite:///{work / name / 'db.sqlite'}", 5,
                                         work / name / "log").start()
        os.environ["PYTHONPATH"] = given
        for s in servers.values():  # warm-up, untimed
            serve.run_aiohttp(s.url, s.key, "/decisions", body, args.clients, 5, 1, s)
        rows: dict[str, list[tuple[float, float, float]]] = {n: [] for n in servers}
        rng = random.Random(0)
        for k in range(args.rounds):
            order = list(servers)
            rng.shuffle(order)
            for name in order:
                s = servers[name]
                floor = serve.run_aiohttp(s.url, s.key, "/whoami", lambda c, i: None,
                                          args.clients, args.requests, 1, s)
                decided = serve.run_aiohttp(s.url, s.key, "/decisions", body, args.clients,
                                            args.requests, 1, s)
                if floor.errors or decided.errors:
                    raise SystemExit(f"{name}: errors in round {k + 1}: "
                                     f"{floor.shown + decided.shown}")
                rows[name].append((decided.rate, floor.rate,
                                   decided.server_cpu / decided.requests * 1e3))
            print(f"round {k + 1}/{args.rounds}", flush=True)
        print(f"\n{args.clients} clients, {args.requests} requests a client a loop, "
              f"{args.rounds} rounds; load average {serve.load_average()}\n")
        print("| checkout | decisions/s | floor req/s | ratio (min–max) | server CPU ms a "
              "decision |")
        print("|---|---:|---:|---:|---:|")
        for name, values in rows.items():
            ratios = [d / f for d, f, _ in values]
            print(f"| {name} | {_median([v[0] for v in values]):,.0f} | "
                  f"{_median([v[1] for v in values]):,.0f} | {_median(ratios):.3f} "
                  f"({min(ratios):.2f}–{max(ratios):.2f}) | "
                  f"{_median([v[2] for v in values]):.3f} |")
    finally:
        for s in servers.values():
            s.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
