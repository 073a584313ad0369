"""The decision service's configurations measured against each other, interleaved.

Every configuration runs as its own ``sat serve`` process on a fresh SQLite file, all started
before anything is timed. Each first learns a rule that rejects about half the applicants (40
decisions with outcomes rising in the first feature, then a publication), so exploration has
rejections to explore. Then, in each of ``--rounds`` rounds, in a fresh random order, every
server gets the same bounded loop: ``--clients`` threads sending ``--requests`` single decisions
each (``benchmarks/serve.py``'s client), and the same loop of ``GET /health`` (one
``SELECT 1``: the stack's floor on this machine). A configuration's figure is its median over
rounds, and its ratio to the plain service is the median of the per-round ratios: the rounds
alternate, so load from elsewhere on the machine falls on every configuration alike.

Configurations: ``plain``; ``explore`` (``--explore 0.05``); ``shadow`` (a shifted-OLS shadow
learner); ``explore+shadow+canary`` (that shadow, and a second shadow attached live, after the
first rule, deciding a tenth of the applicants as a canary). The criterion printed: each within
30% of plain (ratio ≥ 0.7).

Usage::

    .venv/bin/python benchmarks/serve_interleaved.py                  # ~2 minutes
    .venv/bin/python benchmarks/serve_interleaved.py --rounds 7 --clients 32 --requests 150
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

import httpx
import numpy as np
from serve import Server, make_body, run_threads, timed

SHADOW = ["--shadow", "shifted-ols", "--shadow-param", "delta=0.3", "--shadow-param", "r0=0"]
CONFIGS = {"plain": [], "explore": ["--explore", "0.05"], "shadow": SHADOW,
           "explore+shadow+canary": ["--explore", "0.05", *SHADOW]}
#: Configurations that attach a canary once their first rule is learned.
CANARY = {"explore+shadow+canary": {"name": "canary", "learner": "sa-ols", "canary": 0.1,
                                    "params": {"delta": 0.3, "r0": 0.0}}}


def teach(server: Server, dimension: int) -> dict:
    """40 decisions whose outcomes rise with the first feature, then a publication: a learned
    rule that rejects about half the applicants."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((40, dimension))
    with httpx.Client(base_url=server.url, timeout=60.0,
                      headers={"Authorization": f"Bearer {server.key}"}) as c:
        done = c.post("/decisions", json={"applicants": [
            {"id": f"teach-{k}", "x": x.tolist()} for k, x in enumerate(xs)]}).json()
        c.post("/outcomes", json={"outcomes": [
            {"id": d["id"], "outcome": float(xs[k, 0])}
            for k, d in enumerate(done["decisions"]) if d["accepted"]]}).raise_for_status()
        for _ in range(600):
            if c.get("/metrics").json()["outcomes_learned"] >= 40:
                break
        rule = c.post("/publish").json()
    return rule


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=60, help="per client and round")
    parser.add_argument("--dimension", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sat-serve-interleaved-"))
    servers: dict[str, Server] = {}
    try:
        for name, extra in CONFIGS.items():
            servers[name] = Server(f"sqlite:///{work / name}.db", args.dimension,
                                   work / f"{name}.log",
                                   ["--publish", "manual", *extra]).start()
            rule = teach(servers[name], args.dimension)
            if name in CANARY:
                httpx.post(f"{servers[name].url}/shadows", json=CANARY[name], timeout=60.0,
                           headers={"Authorization": f"Bearer {servers[name].key}"}
                           ).raise_for_status()
            print(f"{name}: started, rule version {rule['version']}", flush=True)
        rates: dict[str, list[float]] = {n: [] for n in CONFIGS}
        floors: dict[str, list[float]] = {n: [] for n in CONFIGS}
        latencies: dict[str, list[np.ndarray]] = {n: [] for n in CONFIGS}
        errors = dict.fromkeys(CONFIGS, 0)
        order = list(CONFIGS)
        shuffle = random.Random(0)
        for k in range(args.rounds):
            shuffle.shuffle(order)
            for name in order:
                s = servers[name]
                health = timed(run_threads, s.url, s.key, "/health", lambda c, i: None,
                               args.clients, args.requests, 0, s)
                body = make_body("single", 1, args.dimension, True, f"r{k}", seed=k)
                decide = timed(run_threads, s.url, s.key, "/decisions", body, args.clients,
                               args.requests, 1, s)
                rates[name].append(decide.decisions / decide.seconds)
                floors[name].append(health.rate)
                latencies[name].append(decide.latencies_ms)
                errors[name] += decide.errors + health.errors
            print(f"round {k + 1}/{args.rounds}: " + ", ".join(
                f"{n} {rates[n][-1]:,.0f}/s" for n in CONFIGS), flush=True)
        print(f"\n{args.clients} clients, {args.requests} single decisions each per round, "
              f"{args.rounds} rounds, SQLite, d = {args.dimension}\n")
        print("| configuration | decisions/s (median) | ÷ plain (median of rounds) | "
              "÷ /health floor | p50 ms | p99 ms | errors | within 30% |")
        print("|---|---|---|---|---|---|---|---|")
        for name in CONFIGS:
            ratio = statistics.median(r / p for r, p in zip(rates[name], rates["plain"],
                                                            strict=True))
            floor = statistics.median(r / f for r, f in zip(rates[name], floors[name],
                                                            strict=True))
            pooled = np.concatenate(latencies[name])
            print(f"| {name} | {statistics.median(rates[name]):,.0f} | {ratio:.2f} | "
                  f"{floor:.2f} | {np.percentile(pooled, 50):.1f} | "
                  f"{np.percentile(pooled, 99):.1f} | {errors[name]} | "
                  f"{'yes' if ratio >= 0.7 else 'no'} |")
    finally:
        for s in servers.values():
            s.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
