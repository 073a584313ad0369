"""What one ``GET /metrics`` costs as the log grows: running counts against counting rows.

For each log length (``--lengths``), a fresh SQLite database is made by the service's own
migrations and filled directly (one rule; that many decisions, each with one of ``--groups``
group labels, half of them accepted, each accepted one with an outcome; the running counts
set to match), then a service process of role ``decide`` (no learner: nothing else runs) is
opened on it and ``GET /metrics?format=prometheus`` is timed in process (Starlette's test
client: no network), ``--repeat`` times after one untimed call; the median and the fastest are
reported. Beside it, the queries ``/metrics`` ran before its counts were running counts (a
count and a sum over every decision, a count of every outcome, the figures by group joined
over the log) are timed the same way on the same database.

Usage: ``python benchmarks/metrics_cost.py [--lengths 20000,400000] [--groups 50]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from strategic_apple_tasting.service import counts, store
from strategic_apple_tasting.service.app import Service, create_app
from strategic_apple_tasting.service.config import ServiceConfig


def fill(database: str, n: int, groups: int) -> None:
    """A migrated database with one rule, ``n`` decisions and an outcome for each accepted."""
    engine = store.connect(database)
    store.migrate(engine)
    now = store.now()
    with store.transaction(engine) as conn:
        conn.execute(sa.insert(store.rules).values(
            version=1, kind="linear", beta="[0.0, 0.0, 0.0]", threshold=0.0, probability=1.0,
            after_seq=0, log_at=0, published_at=now))
        decided, answered = [], []
        for k in range(n):
            accepted = k % 2 == 0
            decided.append({"id": f"d{k}", "seq": 2 * k + 1, "features": "[0.1, 0.2, 0.3]",
                            "accepted": accepted, "version": 1, "created_at": now,
                            "group": f"g{k % groups}", "band": False})
            if accepted:
                answered.append({"decision_id": f"d{k}", "seq": 2 * k + 2,
                                 "outcome": 1.0 if k % 4 else -1.0, "created_at": now})
        conn.execute(sa.insert(store.decisions), decided)
        conn.execute(sa.insert(store.outcomes), answered)
        conn.execute(sa.update(store.log_counter).values(seq=2 * n))
        totals, per = counts.tally(decided, answered, {d["id"]: d for d in decided})
        counts.add(conn, totals)
        counts.add_groups(conn, per, set(per))
    engine.dispose()


def row_counting(conn: Any) -> None:
    """The queries ``/metrics`` ran before running counts: over every row of the log."""
    d, o = store.decisions, store.outcomes
    conn.execute(sa.select(sa.func.count(), sa.func.sum(sa.cast(d.c.accepted, sa.Integer)))
                 ).one()
    conn.execute(sa.select(sa.func.count()).select_from(o)).scalar_one()
    accepted = sa.cast(d.c.accepted, sa.Integer)
    conn.execute(
        sa.select(d.c.group, sa.func.count(), sa.func.coalesce(sa.func.sum(accepted), 0),
                  sa.func.count(o.c.decision_id),
                  sa.func.coalesce(sa.func.sum(sa.case((o.c.outcome > 0, 1), else_=0)), 0),
                  sa.func.coalesce(sa.func.sum(sa.case((d.c.band, 1), else_=0)), 0))
        .select_from(d.outerjoin(o, sa.and_(o.c.decision_id == d.c.id, d.c.accepted)))
        .where(d.c.group.is_not(None)).group_by(d.c.group)).all()


def timed(call: Any, repeat: int) -> tuple[float, float]:
    """(median, fastest) milliseconds of ``call`` over ``repeat`` runs after one untimed."""
    call()
    took = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        took.append(1000 * (time.perf_counter() - start))
    return statistics.median(took), min(took)


def measure(n: int, groups: int, repeat: int) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    with tempfile.TemporaryDirectory() as folder:
        database = f"sqlite:///{Path(folder) / 'metrics.db'}"
        fill(database, n, groups)
        service = Service(ServiceConfig(dimension=3, params={"delta": 0.3, "r0": 0.0},
                                        publish="manual", database=database),
                          role="decide").open()
        try:
            # One event loop for every call (the app's shutdown closes the service).
            with TestClient(create_app(service)) as client:
                response = client.get("/metrics?format=prometheus")
                assert response.status_code == 200, response.text
                assert f"sat_decisions_total {float(n)}" in response.text
                now = timed(lambda: client.get("/metrics?format=prometheus"), repeat)
                with service.engine.connect() as conn:
                    before = timed(lambda: row_counting(conn), repeat)
                size = len(response.content)
        finally:
            service.close()
    return {"decisions": n, "outcomes": n // 2 + n % 2, "groups": groups,
            "metrics_ms": now, "row_counting_ms": before, "bytes": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="20000,400000",
                        help="decisions in the log, comma-separated (default 20000,400000)")
    parser.add_argument("--groups", type=int, default=50, help="group labels (default 50)")
    parser.add_argument("--repeat", type=int, default=30, help="timed calls (default 30)")
    args = parser.parse_args()
    print("| decisions | outcomes | groups | GET /metrics (text) median / fastest, ms | "
          "the row-counting queries before, median / fastest, ms | body, bytes |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in (int(v) for v in args.lengths.split(",")):
        r = measure(n, args.groups, args.repeat)
        print(f"| {r['decisions']:,} | {r['outcomes']:,} | {r['groups']} | "
              f"{r['metrics_ms'][0]:.2f} / {r['metrics_ms'][1]:.2f} | "
              f"{r['row_counting_ms'][0]:.1f} / {r['row_counting_ms'][1]:.1f} | "
              f"{r['bytes']:,} |", flush=True)
    print(json.dumps({"lengths": args.lengths, "groups": args.groups,
                      "repeat": args.repeat}))


if __name__ == "__main__":
    main()
