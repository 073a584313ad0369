"""The public policy page (``GET /``): the rule in force, when it changed, acceptance over time.

Everything on it is public by design (the principal commits to its rule publicly) and
aggregate: rules and counts per time bucket, never an applicant's features or outcome. The
plot is an inline SVG drawn by matplotlib; the page loads nothing from elsewhere.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from ..reports.html import _e, _table, html_page
from . import store

#: Time buckets of the acceptance plot.
BUCKETS = 60


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def acceptance(conn: Any, buckets: int = BUCKETS) -> list[tuple[float, int, int]]:
    """(bucket start, decisions, acceptances) over the decisions' times, oldest first."""
    d = store.decisions
    first, last = conn.execute(sa.select(sa.func.min(d.c.created_at),
                                         sa.func.max(d.c.created_at))).one()
    if first is None:
        return []
    width = max((last - first) / buckets, 1e-3)
    bucket = sa.cast(sa.func.floor((d.c.created_at - first) / width), sa.Integer)
    rows = conn.execute(sa.select(bucket.label("b"), sa.func.count(),
                                  sa.func.sum(sa.cast(d.c.accepted, sa.Integer)))
                        .group_by(bucket).order_by(bucket)).all()
    return [(first + b * width, int(n), int(a)) for b, n, a in rows]


def acceptance_svg(series: list[tuple[float, int, int]], changes: list[float]) -> str:
    """The acceptance-rate plot, with the rule changes marked, as an SVG element."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.2))
    ax = fig.subplots()
    if series:
        t0 = series[0][0]
        span = max(series[-1][0] - t0, 1e-9)
        unit, size = next((u, z) for u, z in (("days", 86400.0), ("hours", 3600.0),
                                               ("minutes", 60.0), ("seconds", 1.0))
                          if span >= 3 * z or z == 1.0)
        times = [(t - t0) / size for t, _, _ in series]
        ax.plot(times, [a / n for _, n, a in series], marker="o", ms=3, lw=1.5,
                color="#1f77b4", label="accepted share")
        for k, c in enumerate(changes):
            if c >= t0:
                ax.axvline((c - t0) / size, color="#d62728", lw=0.8, alpha=0.6,
                           label="new rule" if k == 0 or changes[k - 1] < t0 else None)
        ax.set_xlabel(f"{unit} since {_when(t0)}")
        ax.legend(loc="upper right", fontsize=8)
    else:
        ax.text(0.5, 0.5, "no decisions yet", ha="center", va="center",
                transform=ax.transAxes)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("accepted share")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = io.StringIO()
    fig.savefig(out, format="svg")
    svg = out.getvalue()
    return svg[svg.index("<svg"):]


def policy_page(service: Any) -> str:
    """The page's HTML (see the module's description)."""
    config = service.config
    r = store.rules
    with service.engine.connect() as conn:
        rules = conn.execute(sa.select(r).order_by(r.c.version)).all()
        series = acceptance(conn)
    names = config.names()
    body = [f"<h1>Published lending rule</h1><p class=meta>{_e(config.learner)} · "
            f"{len(rules)} rules published · page made {_when(store.now())}</p>"]
    if rules:
        now = rules[-1]
        beta = json.loads(now.beta)
        terms = " ".join(f"{'−' if b < 0 else '+'} {abs(b):.4g}·{_e(n)}"
                         for b, n in zip(beta, names, strict=True)).removeprefix("+ ")
        body += [
            f"<h2>The rule in force (version {now.version}, since {_when(now.published_at)})"
            "</h2>",
            f"<p id=rule>An applicant is accepted when <code>{terms} ≥ "
            f"{now.threshold:.4g}</code>.</p>",
            _table(["feature", "weight β"], [[_e(n), f"{b:.6g}"]
                                            for n, b in zip(names, beta, strict=True)]),
        ]
    body += ["<h2>Acceptance over time</h2>",
             f"<figure id=acceptance>{acceptance_svg(series, [x.published_at for x in rules])}"
             "<figcaption>Share of applicants accepted per time bucket; red lines mark "
             "publications of a new rule.</figcaption></figure>",
             "<h2>When the rule changed</h2>",
             _table(["version", "effective", "threshold", "β", ""],
                    [[str(x.version), _e(_when(x.published_at)), f"{x.threshold:.6g}",
                      _e(", ".join(f"{b:.4g}" for b in json.loads(x.beta))),
                      "same rule as before" if k and (x.beta, x.threshold) == (
                          rules[k - 1].beta, rules[k - 1].threshold) else ""]
                     for k, x in reversed(list(enumerate(rules)))], text_columns=(1, 3, 4)),
             "<p class=note>Machine-readable: <a href=policy>/policy</a>, "
             "<a href=policy/history>/policy/history</a>, <a href=docs>API</a>.</p>"]
    return html_page("Published lending rule", "\n".join(body))
