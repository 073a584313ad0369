"""Test-wide settings: property tests are derandomized so every run checks the same cases; a
headless browser for the pages' tests."""

import shutil

import pytest
from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, deadline=None)
settings.load_profile("deterministic")


@pytest.fixture
def browser():
    """Debian's Chromium and playwright to drive it, or a skip saying what is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium not found: apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright not installed: pip install playwright")
    return chromium, sync_playwright
