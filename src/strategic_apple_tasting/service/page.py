"""The public policy page (``GET /``): the rule in force, when it changed, acceptance over time,
a plain-language section for applicants (each feature's definition and unit, how the score is
made, what a rejection's reasons are), and, with a shadow learner, its would-be rule and
decisions beside the live ones (aggregates only).

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

from ..reports.pages import escape, html_page, html_table
from . import store
from .budget_view import budget_html
from .groups import group_html, group_metrics

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
        shadow = shadow_figures(conn) if config.shadow is not None else None
        groups = group_metrics(conn)
    names = config.names()
    body = [f"<h1>Published lending rule</h1><p class=meta>{escape(config.learner)} · "
            f"{len(rules)} rules published · page made {_when(store.now())}</p>"]
    if rules:
        now = rules[-1]
        beta = json.loads(now.beta)
        scaled = not config.scaling().identity
        shown = [f"z({n})" if scaled else n for n in names]  # z: standardized (see below)
        terms = " ".join(f"{'−' if b < 0 else '+'} {abs(b):.4g}·{escape(n)}"
                         for b, n in zip(beta, shown, strict=True)).removeprefix("+ ")
        body += [
            f"<h2>The rule in force (version {now.version}, since {_when(now.published_at)})"
            "</h2>",
            f"<p id=rule>An applicant is accepted when <code>{terms} ≥ "
            f"{now.threshold:.4g}</code>"
            + (", where z(feature) = (value − average) ÷ spread, as listed for applicants "
               "below" if scaled else "") + ".</p>",
            html_table(["feature", "weight β"], [[escape(n), f"{b:.6g}"]
                                                 for n, b in zip(names, beta, strict=True)]),
        ]
    body.append(budget_html(service))  # only when the learner estimates δ
    body.append(group_html(groups))  # only when decisions carry a group
    body += ["<h2>Acceptance over time</h2>",
             f"<figure id=acceptance>{acceptance_svg(series, [x.published_at for x in rules])}"
             "<figcaption>Share of applicants accepted per time bucket; red lines mark "
             "publications of a new rule.</figcaption></figure>",
             "<h2>When the rule changed</h2>",
             html_table(["version", "effective", "threshold", "β", ""],
                        [[str(x.version), escape(_when(x.published_at)), f"{x.threshold:.6g}",
                          escape(", ".join(f"{b:.4g}" for b in json.loads(x.beta))),
                          "same rule as before" if k and (x.beta, x.threshold) == (
                              rules[k - 1].beta, rules[k - 1].threshold) else ""]
                         for k, x in reversed(list(enumerate(rules)))], text_columns=(1, 3, 4)),
             applicant_section(config, rules),
             shadow_section(config, shadow),
             "<p class=note>Machine-readable: <a href=policy>/policy</a>, "
             "<a href=policy/history>/policy/history</a>, <a href=docs>API</a>.</p>"]
    return html_page("Published lending rule", "\n".join(body))


def applicant_section(config: Any, rules: list[Any]) -> str:
    """What an applicant needs to read the rule: each feature's definition and unit, the
    average and spread the service measures it against, how much one unit of it moves the
    score, what the threshold's movement means, and what to do when rejected."""
    features = config.feature_list()
    beta = json.loads(rules[-1].beta) if rules else [0.0] * len(features)
    scaled = not config.scaling().identity
    rows = []
    for f, b in zip(features, beta, strict=True):
        unit = f.unit or "as given"
        per = b / f.scale
        rows.append([escape(f.name), escape(f.definition or "—"), escape(unit),
                     f"{f.mean:.6g}" if scaled else "—", f"{f.scale:.6g}" if scaled else "—",
                     f"{per:+.4g} per {escape(f.unit or 'unit')}"])
    how = ("Each value is first compared with the average applicant: (value − average) ÷ "
           "spread. The rule multiplies each of these by its weight and adds them up; the "
           "application is accepted when the sum reaches the threshold." if scaled else
           "The rule multiplies each value, in the unit shown, by its weight and adds them up; "
           "the application is accepted when the sum reaches the threshold.")
    moved = ""
    if len(rules) >= 2:
        before, now = rules[-2].threshold, rules[-1].threshold
        same = f"{now:.4g}" == f"{before:.4g}"
        word = ("unchanged" if same else "higher: the rule asks more than before"
                if now > before else "lower: the rule asks less than before")
        moved = (f"<p>The threshold moved from {before:.4g} to {now:.4g} at the last change "
                 f"({word}, for the same weights). Rules change as the lender learns from "
                 "repaid and unpaid loans; every version stays listed above.</p>")
    return "\n".join([
        "<h2 id=applicants>For applicants: what the rule looks at</h2>",
        f"<p>{how} The last column says how much one unit more of a feature changes the "
        "score.</p>",
        html_table(["feature", "definition", "unit", "average", "spread", "effect on the score"],
                   rows, text_columns=(0, 1, 2, 5)),
        moved,
        "<p><b>If you are rejected</b>, ask the lender for the reasons, giving your "
        "application's id: it can look up the decision and tell you the rule version, your "
        "score, the threshold, and the features that lowered your score most. The rule is "
        "public, so you can also check your own numbers against the table above. Features "
        "are taken as you report them; the published rule already expects applicants to "
        f"present themselves at their best (within δ = {_delta(config)}, measured in the "
        "standardized units above).</p>"])


def _delta(config: Any) -> str:
    delta = config.params.get("delta")
    return "—" if delta is None else f"{delta:g}"


def shadow_figures(conn: Any) -> dict[str, Any]:
    """The settings' shadow learner (named "shadow") against the live rule, on the decisions
    it saw: how many, how many each accepted, how many they agreed on; its newest rule."""
    sd, d, sr = store.shadow_decisions, store.decisions, store.shadow_rules
    row = conn.execute(sa.select(
        sa.func.count(), sa.func.coalesce(sa.func.sum(sa.cast(sd.c.accepted, sa.Integer)), 0),
        sa.func.coalesce(sa.func.sum(sa.cast(d.c.accepted, sa.Integer)), 0),
        sa.func.coalesce(sa.func.sum(sa.case((sd.c.accepted == d.c.accepted, 1), else_=0)), 0)
    ).select_from(sd.join(d, d.c.id == sd.c.decision_id)).where(sd.c.name == "shadow")).one()
    newest = conn.execute(sa.select(sr).where(sr.c.name == "shadow")
                          .order_by(sr.c.version.desc()).limit(1)).first()
    return {"decisions": int(row[0]), "shadow_accepted": int(row[1]),
            "live_accepted": int(row[2]), "agreed": int(row[3]), "rule": newest}


def shadow_section(config: Any, figures: dict[str, Any] | None) -> str:
    """The shadow learner's comparison (empty without one)."""
    if figures is None:
        return ""
    n = figures["decisions"]
    share = (lambda k: f"{figures[k] / n:.1%}") if n else (lambda k: "—")
    rule = figures["rule"]
    text = ("no rule yet" if rule is None else
            f"version {rule.version}: β = " + ", ".join(f"{b:.4g}" for b in json.loads(
                rule.beta)) + f"; threshold {rule.threshold:.4g}")
    return "\n".join([
        f"<h2 id=shadow>Shadow learner: {escape(config.shadow)} (never answers)</h2>",
        "<p>A candidate learner fed the same applicants and outcomes; its decisions are "
        "recorded and compared here, never sent. Its newest rule: "
        f"<code>{escape(text)}</code>.</p>",
        html_table(["", "decisions", "accepted", "share accepted"],
                   [["live rule", f"{n:,}", f"{figures['live_accepted']:,}",
                     share("live_accepted")],
                    ["shadow rule", f"{n:,}", f"{figures['shadow_accepted']:,}",
                     share("shadow_accepted")],
                    ["agreed", f"{n:,}", f"{figures['agreed']:,}", share("agreed")]],
                   text_columns=(0,))])
