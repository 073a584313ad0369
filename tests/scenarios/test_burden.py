"""The FICO finding: a strategy-robust threshold burdens the lower-scoring groups."""

from __future__ import annotations

import numpy as np
import pytest

from strategic_apple_tasting.reports.lending import write_lending_report
from strategic_apple_tasting.scenarios import load_fico, run_lending
from strategic_apple_tasting.scenarios.burden import burden_curves, robust_threshold

FICO = load_fico()
GRID = np.linspace(-1.5, 1.5, 61)


@pytest.mark.parametrize("delta", [0.25, 0.5])
def test_the_robust_threshold_burdens_the_lower_scoring_group_more(delta):
    tau = robust_threshold(FICO, delta, GRID)
    at = burden_curves(FICO, delta, np.array([tau])).set_index("group")
    # Black applicants' scores are the lowest of the four groups in the tables.
    assert at.loc["black", "burden"] > 1.2 * at.loc["white", "burden"] > 0


def test_without_gaming_nobody_is_burdened():
    """The control: with δ = 0 no threshold makes anyone move (no burden gap from a shift)."""
    curves = burden_curves(FICO, 0.0, GRID[::6])
    assert (curves["burden"] == 0).all()


def test_groups_may_have_their_own_budgets():
    budgets = {"white": 0.5, "black": 0.0, "hispanic": 0.5, "asian": 0.5}
    at = burden_curves(FICO, budgets, np.array([0.25])).set_index("group")
    assert at.loc["black", "burden"] == 0 and at.loc["white", "burden"] > 0


def test_the_fico_report_has_the_burden_figure_and_renders(browser, tmp_path):
    runs = run_lending(FICO, ["sa-ols", "accept-all"], horizon=300, seeds=2, delta=0.5)
    page = write_lending_report(runs, FICO, tmp_path / "report")
    html = page.read_text()
    assert "Who pays for strategy-robustness" in html and "By group" in html
    assert (tmp_path / "report" / "burden-delta-0_5.png").exists()

    def inspect(p):
        return p.eval_on_selector_all(
            "img", "imgs => imgs.map(i => [i.complete, i.naturalWidth, i.alt])")

    images, errors, _ = browser(page.as_uri(), inspect, tmp_path / "fico.png")
    assert errors == []
    assert any(alt.startswith("burden against profit") and done and width > 0
               for done, width, alt in images)
