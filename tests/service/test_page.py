"""The public policy page (``GET /``) of a running service, in headless Chromium."""

from __future__ import annotations

import random
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


def test_page_renders_in_headless_chromium(browser, serve, tmp_path):
    server = serve("--publish", "manual")
    version = _traffic(server)
    assert version == 3

    def inspect(page):
        plot = page.locator("#acceptance svg")
        return (page.title(), page.inner_text("#rule"), plot.is_visible(), plot.bounding_box(),
                page.locator("table").nth(1).locator("tbody tr").count(),
                page.evaluate("document.documentElement.scrollWidth"
                              " - document.documentElement.clientWidth"))

    seen, errors, requested = browser(f"{server.url}/", inspect, tmp_path / "page.png")
    title, rule, visible, box, changes, overflow = seen
    assert errors == []
    assert all(url.startswith(server.url) for url in requested), requested
    assert title == "Published lending rule"
    assert rule.startswith("An applicant is accepted when") and "≥" in rule
    assert "x1" in rule and "x3" in rule
    assert visible and box is not None and box["width"] > 300 and box["height"] > 100, box
    assert changes == version  # one row per published rule
    assert overflow <= 0
    assert (tmp_path / "page.png").stat().st_size > 10_000


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
        return (page.inner_text("#applicants"), page.locator("#applicants + p").inner_text(),
                page.locator("table").nth(2).inner_text(), page.inner_text("#shadow"),
                page.locator("table").nth(3).inner_text(),
                page.evaluate("document.documentElement.scrollWidth"
                              " - document.documentElement.clientWidth"))

    seen, errors, _ = browser(f"{server.url}/", inspect, tmp_path / "page.png")
    heading, how, features, shadow, compared, overflow = seen
    assert errors == [] and overflow <= 0
    assert "For applicants" in heading and "average applicant" in how
    for word in ("yearly income before tax", "kUSD/year", "years at the current job", "50",
                 "per kUSD"):
        assert word in features, features
    # One unit more of income moves the score by its weight over its spread.
    assert f"{policy['beta'][0] / 20:+.4g} per kUSD/year" in features
    assert "shifted-ols" in shadow and "never answers" in shadow
    rows = [r.split("\t") for r in compared.splitlines()[1:]]
    assert [r[0] for r in rows] == ["live rule", "shadow rule", "agreed"]
    assert int(rows[0][1].replace(",", "")) > 0  # the shadow saw decisions after its first rule
    # The shadow never answered: every decision the clients got is the live rule's.
    engine = __import__("strategic_apple_tasting.service.store", fromlist=["store"])
    db = engine.connect(server.database)
    import sqlalchemy as sa
    with db.connect() as conn:
        shadow_rules = conn.execute(sa.select(sa.func.count()).select_from(
            engine.shadow_rules)).scalar_one()
    db.dispose()
    assert shadow_rules == 4  # one beside each live publication (the start's and three)
