"""UCI's default of credit card clients as a data set: the vendored file as ``westat`` ships
it, the rows, outcomes, features and defaults as its README and loader state them, and the
game played on the engine."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest

from strategic_apple_tasting.engine import simulate
from strategic_apple_tasting.scenarios import DATASETS, data_game, load_dataset
from strategic_apple_tasting.scenarios.dataset import DataSet
from strategic_apple_tasting.scenarios.taiwan import (
    TAIWAN_GAMEABLE,
    TAIWAN_GROUPS,
    load_taiwan_credit,
    taiwan_frame,
)

TAIWAN = (Path(__file__).resolve().parents[2]
          / "src/strategic_apple_tasting/scenarios/data/taiwan-credit")
NAME = "taiwan-credit"
#: The features after encoding, as the README states them (d = 29).
FEATURES = ("intercept", "LIMIT_BAL", "SEX=male", "EDUCATION=graduate", "EDUCATION=high-school",
            "EDUCATION=unknown", "EDUCATION=other", "MARRIAGE=married", "MARRIAGE=other",
            "MARRIAGE=unknown", "AGE", "PAY_0", "PAY_2", "PAY_3", "PAY_4", "PAY_5", "PAY_6",
            *(f"BILL_AMT{i}" for i in range(1, 7)), *(f"PAY_AMT{i}" for i in range(1, 7)))


def test_the_vendored_file_is_the_one_the_readme_names():
    readme = (TAIWAN / "README.md").read_text()
    packed = (TAIWAN / "UCI_Credit_Card.csv.gz").read_bytes()
    assert f"{hashlib.sha256(packed).hexdigest()}  UCI_Credit_Card.csv.gz" in readme
    # Decompressed, it is the wheel's file byte for byte, whose digest the README gives too.
    original = hashlib.sha256(gzip.decompress(packed)).hexdigest()
    assert f"{original}  UCI_Credit_Card.csv (the original" in readme
    assert "westat` 0.3.3" in readme and "CC BY 4.0" in readme and "Yeh" in readme
    assert "GNU GENERAL PUBLIC LICENSE" in (TAIWAN / "LICENSE-westat").read_text()


def test_rows_defaults_and_features_are_as_documented():
    frame = taiwan_frame()
    assert frame.shape == (30_000, 25) and int(frame["target"].sum()) == 6_636
    data = load_dataset(NAME)
    c = data.contexts
    assert (data.n, data.d, data.title) == (30_000, 29, NAME)
    assert c.feature_names == FEATURES
    assert float(np.mean(c.repaid == 0)) == pytest.approx(0.2212, abs=1e-12)
    # Every feature but the intercept is standardized over the rows.
    np.testing.assert_allclose(c.rows[:, 1:].mean(axis=0), 0.0, atol=1e-9)
    np.testing.assert_allclose(c.rows[:, 1:].std(axis=0), 1.0, rtol=1e-9)
    # +1 repaid and −5 defaulted, scaled by 5 into [−1, 1].
    assert c.reward_scale == 5.0
    assert sorted(set(c.recorded().mean.tolist())) == [-1.0, 0.2]
    # The repayment statuses stay one ordered number each: their distinct values as recorded.
    pay0 = c.rows[:, FEATURES.index("PAY_0")]
    assert len(np.unique(pay0)) == frame["PAY_0"].nunique() == 11
    # Unknown and undocumented codes are one level: EDUCATION 0, 5, 6; MARRIAGE 0.
    for column, rows in (("EDUCATION=unknown", 14 + 280 + 51), ("MARRIAGE=unknown", 54)):
        values = c.rows[:, FEATURES.index(column)]
        assert int((values == values.max()).sum()) == rows, column


def test_the_defaults_game_the_latest_bill_and_payment_and_group_by_sex():
    data = load_dataset(NAME)
    assert data.gameable_names() == TAIWAN_GAMEABLE == ("BILL_AMT1", "PAY_AMT1")
    assert data.notes["gameable_attributes"] == TAIWAN_GAMEABLE
    assert data.contexts.group_names == TAIWAN_GROUPS == ("male", "female")
    sex = taiwan_frame()["SEX"].to_numpy()
    assert (data.contexts.groups == sex - 1).all()
    assert np.bincount(data.contexts.groups).tolist() == [11_888, 18_112]
    # A categorical attribute makes every level column gameable; none is allowed.
    levels = load_dataset(NAME, ("EDUCATION",)).gameable_names()
    assert levels == tuple(n for n in FEATURES if n.startswith("EDUCATION="))
    assert load_dataset(NAME, ()).gameable_names() == ()


def test_the_named_data_set_is_registered_and_refuses_an_unknown_attribute():
    assert NAME in DATASETS
    with pytest.raises(ValueError, match="gameable: no column 'ID'; columns: LIMIT_BAL"):
        load_taiwan_credit(gameable=["ID"])


def test_the_game_runs_on_the_engine():
    game = data_game(load_dataset(NAME), delta=0.5)
    settings = game.settings()
    assert game.dimension == 29 and settings["data"] == NAME and settings["rows"] == 30_000
    assert settings["gameable"] == "BILL_AMT1, PAY_AMT1"
    # The engine's benchmark searches the best linear rule over every row once per process
    # (about 40 s on 30,000 rows), so the run plays the first 1,000 rows: the same features,
    # gaming and groups.
    small = _first(load_dataset(NAME), 1_000)
    table = simulate(data_game(small, delta=0.5), ["sa-ols", "accept-all"], horizon=300,
                     seeds=[0]).to_pandas()
    last = table[table["t"] == 300].set_index("learner")
    assert last.loc["accept-all", "accepted"] == 300
    assert last.loc["sa-ols", "gamed_as_clean"] == 0
    assert set(table["data"]) == {NAME} and set(table["gameable"]) == {"BILL_AMT1, PAY_AMT1"}
    applicants = np.asarray(last.loc["accept-all", "group_applicants"])
    assert applicants.shape == (2,) and applicants.sum() == 300


def _first(data: DataSet, n: int) -> DataSet:
    return data.take(np.arange(n))
