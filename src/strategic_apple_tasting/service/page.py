"""The service's two pages.

* **The applicant page** (``GET /``, public): the rule in words and plain numbers (points per
  unit of each feature, the points needed), each feature's meaning, what to do when rejected,
  the lender's contact from the settings. No β, no δ, no scientific notation, nothing an
  applicant does not need (the principal commits to its rule publicly; ``/policy`` has it
  exactly).
* **The operator page** (``GET /operator``, an API key): the rule as the learner keeps it,
  when it changed, acceptance over time, figures by group, the shadow learner's comparison,
  exploration and what the shadow's or the previous rule would have earned on the log
  (:mod:`.evaluation`).

Both are aggregate: rules and counts, never an applicant's features or outcome. The plot is an
inline SVG drawn by matplotlib; neither page loads anything from elsewhere.
"""

from __future__ import annotations

import io
import json
import math
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from ..reports.pages import escape, html_page, html_table
from . import counts, store
from .budget_view import budget_html
from .groups import group_html, group_metrics

#: Time buckets of the acceptance plot.
BUCKETS = 60
#: The newest logged decisions the operator page's estimates read (a page is not a report).
EVALUATED = 50_000


def plain(x: float, digits: int = 3) -> str:
    """``x`` in plain decimals for a reader (no scientific notation): ``digits`` significant
    digits, thousands separated; a value too small to show says so.

    Examples
    --------
    >>> plain(0.000123456), plain(-1234567.8), plain(0.0), plain(2e-9), plain(0.05)
    ('0.000123', '-1,234,568', '0', 'less than 0.000001', '0.05')
    """
    if x == 0:
        return "0"
    if abs(x) < 1e-6:
        return "less than 0.000001"
    decimals = max(0, min(6, digits - 1 - math.floor(math.log10(abs(x)))))
    text = f"{x:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


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


def operator_page(service: Any) -> str:
    """The operator page's HTML (see the module's description)."""
    config = service.config
    r = store.rules
    with service.engine.connect() as conn:
        rules = conn.execute(sa.select(r).order_by(r.c.version)).all()
        series = acceptance(conn)
        shadow = shadow_figures(conn) if config.shadow is not None else None
        groups = group_metrics(conn)
        explored = exploration_figures(conn)
    names = config.names()
    body = [f"<h1>Lending rule: operator</h1><p class=meta>{escape(config.learner)} · "
            f"{len(rules)} rules published · page made {_when(store.now())} · "
            "<a href=./>the applicants' page</a></p>"]
    if not config.contact:
        body.append("<p class=note>No lender contact is set (<code>contact</code> in the "
                    "settings): the applicants' page cannot tell a rejected applicant whom "
                    "to ask.</p>")
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
             html_table(["version", "effective", "threshold", "β", "note"],
                        [[str(x.version), escape(_when(x.published_at)), f"{x.threshold:.6g}",
                          escape(", ".join(f"{b:.4g}" for b in json.loads(x.beta))),
                          "same rule as before" if k and (x.beta, x.threshold) == (
                              rules[k - 1].beta, rules[k - 1].threshold) else ""]
                         for k, x in reversed(list(enumerate(rules)))], text_columns=(1, 3, 4)),
             shadow_section(config, shadow),
             evaluation_section(service, rules, explored),
             "<p class=note>Machine-readable: <a href=policy>/policy</a>, "
             "<a href=policy/history>/policy/history</a>, <a href=metrics>/metrics</a>, "
             "<a href=docs>API</a>.</p>"]
    return html_page("Lending rule: operator", "\n".join(body))


def applicant_page(service: Any) -> str:
    """The applicants' page's HTML (see the module's description)."""
    config = service.config
    r = store.rules
    with service.engine.connect() as conn:
        rules = conn.execute(sa.select(r).order_by(r.c.version)).all()
    who = "We"
    contact = (f"<p id=contact>Questions, or the reasons for a decision: "
               f"<b>{escape(config.contact)}</b>. Give your application's id.</p>"
               if config.contact else
               "<p id=contact>Questions, or the reasons for a decision: ask the lender that "
               "sent you here, giving your application's id.</p>")
    body = ["<h1>How your application is decided</h1>"]
    if not rules:
        body.append("<p>No rule is published yet.</p>")
        return html_page("How your application is decided", "\n".join([*body, contact]))
    now = rules[-1]
    features = config.feature_list()
    beta = json.loads(now.beta)
    per = [b / f.scale for b, f in zip(beta, features, strict=True)]
    # Points = Σ per_i · value_i; the rule Σ β_i (x_i − m_i)/s_i ≥ t is points ≥ t + Σ per_i m_i.
    needed = float(now.threshold) + sum(p * f.mean for p, f in zip(per, features, strict=True))
    rows = []
    for f, p in zip(features, per, strict=True):
        unit = f.unit or "unit"
        effect = ("no effect" if p == 0 else
                  f"almost no effect (under 0.000001 points per {escape(unit)})"
                  if abs(p) < 1e-6 else
                  f"adds {plain(p)} points per {escape(unit)}" if p > 0 else
                  f"takes away {plain(-p)} points per {escape(unit)}")
        rows.append([escape(f.name), escape(f.definition or f.name), effect])
    body += [
        f"<p id=rule>{who} give every application points: for each feature below, its value "
        "times the points per unit shown. An application is <b>accepted when its points reach "
        f"{plain(needed)}</b>, and rejected otherwise. Every application is judged by the same "
        "rule, and the rule is public.</p>",
        html_table(["feature", "what it is", "effect on your points"], rows,
                   text_columns=(0, 1, 2)),
        "<h2>If your application is rejected</h2>",
        "<p>Ask for the reasons, giving your application's id: you will be told your points, "
        "the points needed and the features that lowered your points most. Applicants can "
        "present themselves at their best, so the points needed are set a little higher than "
        "they would be if everyone reported exactly; if your points fell just short, the "
        "explanation says so. Reporting your situation accurately is what this rule expects: "
        "it has already allowed for applicants who stretch the truth.</p>",
        contact,
        f"<p class=meta>This rule has been in force since {_when(now.published_at)}; the rule "
        f"is reviewed as repaid and unpaid loans are learned from ({len(rules)} versions so "
        "far). Machine-readable: <a href=policy>/policy</a>.</p>"]
    return html_page("How your application is decided", "\n".join(body))


def shadow_figures(conn: Any) -> dict[str, Any]:
    """The settings' shadow learner (named "shadow") against the live rule, on the decisions
    it saw (running counts, :mod:`.counts`): how many, how many each accepted, how many they
    agreed on; its newest rule."""
    sr = store.shadow_rules
    counted = counts.read(conn)
    newest = conn.execute(sa.select(sr).where(sr.c.name == "shadow")
                          .order_by(sr.c.version.desc()).limit(1)).first()
    return {"decisions": counted["shadow_decisions"],
            "shadow_accepted": counted["shadow_accepted"],
            "live_accepted": counted["shadow_live_accepted"],
            "agreed": counted["shadow_agreed"], "rule": newest}


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


def exploration_figures(conn: Any) -> dict[str, int]:
    """Decisions logged with a propensity below 1 (exploration possible) and those accepted
    at random."""
    d = store.decisions
    row = conn.execute(sa.select(
        sa.func.count(), sa.func.coalesce(sa.func.sum(sa.cast(d.c.explored, sa.Integer)), 0))
        .where(d.c.propensity < 1.0)).one()
    return {"exposed": int(row[0]), "explored": int(row[1])}


def evaluation_section(service: Any, rules: list[Any], explored: dict[str, int]) -> str:
    """Exploration, and what the shadow's newest rule and the rule before the one in force
    would have earned on the newest :data:`EVALUATED` logged decisions (or why not)."""
    from .candidates import CONFIGURED, newest_rule
    from .evaluation import Unsupported, evaluate, read_logged

    config = service.config
    if config.bandit():
        return ""
    candidates = []
    if len(rules) >= 2:
        candidates.append((f"rule version {rules[-2].version} (the one before)", rules[-2]))
    if config.shadow is not None:
        with service.engine.connect() as conn:
            newest = newest_rule(conn, CONFIGURED)
        if newest is not None:
            candidates.append((f"the shadow's rule version {newest.version}", newest))
    try:
        logged = read_logged(service.engine, config, limit=EVALUATED) if candidates else None
    except ValueError as exc:  # no outcome known yet
        logged, empty = None, str(exc)
    rows = []
    for label, row in candidates:
        if logged is None:
            rows.append([escape(label), "—", "—", escape(empty)])
            continue
        try:
            est = evaluate(logged, store.rule_of(row))
        except Unsupported as exc:
            rows.append([escape(label), "—", "—", escape(str(exc).split(":")[0])])
            continue
        rows.append([escape(label), f"{plain(est.ips)} ± {plain(est.ips_half, 2)}",
                     f"{plain(est.dr)} ± {plain(est.dr_half, 2)}",
                     f"accepts {est.acceptance:.1%}; rules in force earned "
                     f"{plain(est.live)}; {est.carried:,} outcomes carry it "
                     f"({est.explored:,} explored)"])
    share = config.explore
    head = (f"<p>Exploration: {share:.1%} of the applicants a learned rule rejects are "
            f"accepted at random; {explored['explored']:,} of {explored['exposed']:,} such "
            "applicants so far.</p>" if share else
            "<p>Exploration is off (<code>--explore</code>): a candidate can be estimated only "
            "where it accepts applicants the rules in force accepted.</p>")
    table = (html_table(["candidate", "profit per 1,000 (inverse propensity)",
                         "(doubly robust)", ""], rows, text_columns=(0, 3)) if rows else
             "<p>No candidate to estimate yet (a previous rule or a shadow).</p>")
    return "\n".join(["<section id=evaluation>",
                      "<h2>What other rules would have earned</h2>", head, table,
                      "<p class=note>Estimated from the log (<code>sat serve evaluate</code>), "
                      "assuming applicants would show another rule the features they showed "
                      "this one.</p></section>"])
