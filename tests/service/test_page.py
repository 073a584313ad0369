"""The service's two pages in headless Chromium: the applicants' page (``GET /``, public, in
plain words and numbers) and the operator's page (``GET /operator``, with a key)."""

from __future__ import annotations

import random
import re
import time

from .conftest import httpx  # noqa: F401  (skips the module without the 'serve' extra)


def _traffic(server) -> int:
    """Decisions and outcomes over a second, with two publications; the rule in force."""
    rng = random.Random(3)
    theta = [1.0, -0.5, 0.25]
    with server.client() as c:
        version = 0
        for round_ in range(4):
            xs = [[round(rng.uniform(-1, 1), 3) for _ in theta] for _ in range(8)]
            r = c.post("/decisions", json={"applicants": [
                {"id": f"page-{round_}-{k}", "x": x} for k, x in enumerate(xs)]})
            assert r.status_code == 200, r.text
            done = [(d["id"], x) for d, x in zip(r.json()["decisions"], xs, strict=True)
                    if d["accepted"]]
            if done:
                r = c.post("/outcomes", json={"outcomes": [
                    {"id": i, "outcome": sum(t * v for t, v in zip(theta, x, strict=True))}
                    for i, x in done]})
                assert r.status_code == 200, r.text
            if round_ in (0, 2):
                r = c.post("/publish")
                assert r.status_code == 200, r.text
                version = r.json()["version"]
            time.sleep(0.15)
    return version


def _overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth"
                         " - document.documentElement.clientWidth")


#: What an applicant's page never shows: the paper's symbols, scientific notation (in its
#: text), an empty table cell (in its HTML).
JARGON = re.compile(r"β|δ|\d[eE][-+]?\d")
EMPTY_CELL = re.compile(r"<td>\s*</td>|<td>—</td>")


def _plain(text: str, html: str) -> bool:
    return not JARGON.search(text) and not EMPTY_CELL.search(html)


def test_the_operator_page_and_the_applicant_page_in_headless_chromium(browser, serve,
                                                                         tmp_path):
    server = serve("--publish", "manual", "--contact", "loans@lender.example, +1 555 0100")
    version = _traffic(server)
    assert version == 3

    def inspect(page):
        plot = page.locator("#acceptance svg")
        return (page.title(), page.inner_text("#rule"), plot.is_visible(), plot.bounding_box(),
                page.locator("table").nth(1).locator("tbody tr").count(), _overflow(page),
                page.inner_text("#evaluation"))

    headers = {"Authorization": f"Bearer {server.key}"}
    seen, errors, requested = browser(f"{server.url}/operator", inspect,
                                      tmp_path / "operator.png", headers)
    title, rule, visible, box, changes, overflow, evaluation = seen
    assert errors == []
    assert all(url.startswith(server.url) for url in requested), requested
    assert title == "Lending rule: operator"
    assert rule.startswith("An applicant is accepted when") and "≥" in rule
    assert "x1" in rule and "x3" in rule
    assert visible and box is not None and box["width"] > 300 and box["height"] > 100, box
    assert changes == version  # one row per published rule
    assert overflow <= 0
    assert "rule version 2 (the one before)" in evaluation and "Exploration is off" in evaluation
    assert (tmp_path / "operator.png").stat().st_size > 10_000

    def applicant(page):
        return (page.title(), page.inner_text("#rule"), page.inner_text("#contact"),
                page.content(), _overflow(page), page.inner_text("body"))

    seen, errors, _ = browser(f"{server.url}/", applicant, tmp_path / "applicant.png")
    title, rule, contact, html, overflow, text = seen
    assert errors == [] and overflow <= 0
    assert title == "How your application is decided"
    assert "accepted when its points reach" in rule
    assert "loans@lender.example, +1 555 0100" in contact
    assert _plain(text, html), (JARGON.search(text), EMPTY_CELL.search(html))
    # The operator's figures are not on the applicants' page (the control: they are on the
    # operator's, above).
    assert "acceptance" not in text.lower() and "shadow" not in text.lower()


def test_the_applicant_section_and_the_shadow_learner_in_headless_chromium(browser, serve,
                                                                           tmp_path):
    """Declared features (definition, unit, average, spread) in plain words for
    applicants, and a shadow learner's decisions compared with the live rule's."""
    settings = tmp_path / "service.toml"
    settings.write_text("\n".join(
        f'[[features]]\nname = "{n}"\nunit = "{u}"\ndefinition = "{d}"\nmean = {m}\n'
        f"scale = {s}\n" for n, u, d, m, s in (
            ("income", "kUSD/year", "yearly income before tax", 50, 20),
            ("debt", "kUSD", "outstanding debt", 10, 5),
            ("tenure", "years", "years at the current job", 4, 3))))
    server = serve("--config", str(settings), "--publish", "manual", "--learner", "sa-ols",
                   "--param", "delta=0.3", "--param", "r0=0", "--param", 'feedback="apple"',
                   "--shadow", "shifted-ols", "--shadow-param", "delta=0.3",
                   "--shadow-param", "r0=0")
    rng = random.Random(5)
    with server.client() as c:
        for round_ in range(3):
            xs = [[rng.uniform(10, 90), rng.uniform(0, 20), rng.uniform(0, 10)]
                  for _ in range(20)]
            done = c.post("/decisions", json={"applicants": [
                {"id": f"s-{round_}-{k}", "x": x} for k, x in enumerate(xs)]}).json()
            answered = [{"id": d["id"], "outcome": (x[0] - 50) / 20 - (x[1] - 10) / 5}
                        for d, x in zip(done["decisions"], xs, strict=True) if d["accepted"]]
            if answered:
                c.post("/outcomes", json={"outcomes": answered}).raise_for_status()
            c.post("/publish").raise_for_status()
        time.sleep(0.5)
        policy = c.get("/policy").json()

    def inspect(page):
        return (page.inner_text("#rule"), page.locator("table").first.inner_text(),
                page.content(), _overflow(page), page.inner_text("body"))

    seen, errors, _ = browser(f"{server.url}/", inspect, tmp_path / "page.png")
    rule, features, html, overflow, text = seen
    assert errors == [] and overflow <= 0
    assert "points reach" in rule and _plain(text, html)
    for word in ("yearly income before tax", "years at the current job", "per kUSD/year"):
        assert word in features, features
    # One kUSD/year more of income moves the points by its weight over its spread, in plain
    # numbers; the points needed are the threshold moved to the features' own units.
    from strategic_apple_tasting.service.page import plain

    per = [b / s for b, s in zip(policy["beta"], (20, 5, 3), strict=True)]
    word = "adds" if per[0] > 0 else "takes away"
    assert f"{word} {plain(abs(per[0]))} points per kUSD/year" in features, features
    needed = policy["threshold"] + sum(p * m for p, m in zip(per, (50, 10, 4), strict=True))
    assert f"points reach {plain(needed)}" in rule, rule
    assert "ask the lender that sent you here" in html  # no contact set

    def operator(page):
        return (page.inner_text("#shadow"),
                page.locator("table", has_text="shadow rule").first.inner_text())

    seen, errors, _ = browser(f"{server.url}/operator", operator, tmp_path / "operator.png",
                              {"Authorization": f"Bearer {server.key}"})
    shadow, compared = seen
    assert errors == []
    assert "shifted-ols" in shadow and "never answers" in shadow
    rows = [r.split("\t") for r in compared.splitlines()[1:]]
    assert [r[0] for r in rows] == ["live rule", "shadow rule", "agreed"]
