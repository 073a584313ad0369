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
