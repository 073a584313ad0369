"""Test-wide settings: property tests are derandomized so every run checks the same cases; a
headless browser for the pages' tests."""

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, deadline=None)
settings.load_profile("deterministic")


class Visit(NamedTuple):
    """What a page visit saw: ``inspect(page)``'s result, the page's errors (console errors,
    uncaught exceptions, failed requests) and every URL it requested."""

    seen: Any
    errors: list[str]
    requested: list[str]


@pytest.fixture
def browser():
    """``browser(url, inspect, screenshot)``: load ``url`` in Debian's headless Chromium
    (driven by playwright), run ``inspect(page)``, save a full-page screenshot; or a skip
    saying what is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not found: apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright not installed: pip install playwright")

    def visit(url: str, inspect: Callable[[Any], Any], screenshot: Path) -> Visit:
        errors: list[str] = []
        requested: list[str] = []
        with sync_playwright() as p:
            chrome = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            try:
                page = chrome.new_page(viewport={"width": 1280, "height": 900})
                page.on("console",
                        lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("requestfailed", lambda r: errors.append(f"failed: {r.url}"))
                page.on("request", lambda r: requested.append(r.url))
                response = page.goto(url, wait_until="load")
                assert response is not None and response.ok
                seen = inspect(page)
                page.screenshot(path=str(screenshot), full_page=True)
            finally:
                chrome.close()
        return Visit(seen, errors, requested)

    return visit

