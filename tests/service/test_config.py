"""A service's settings from a TOML file and flags, checked before anything starts."""

from __future__ import annotations

import pytest

from strategic_apple_tasting.service.config import ServiceConfig, parse_cadence


def test_a_settings_file_with_flags_over_it(tmp_path):
    path = tmp_path / "service.toml"
    path.write_text('learner = "sa-ols"\ndimension = 3\nfeatures = ["a", "b", "c"]\n'
                    f'publish = "period:3600"\ndatabase = "sqlite:///{tmp_path}/x.db"\n'
                    "[params]\ndelta = 0.3\nr0 = 0.0\n")
    config = ServiceConfig.from_file(path, seed=4, publish=None).check()
    assert (config.dimension, config.features, config.seed) == (3, ["a", "b", "c"], 4)
    assert config.cadence() == ("period", 3600.0)  # a flag left unset does not override
    learner = config.make_learner()
    assert learner.get_params()["feedback"] == "apple"  # filled, as a game would
    assert config.fixed() == {"learner": "sa-ols", "params": {"delta": 0.3, "r0": 0.0},
                              "dimension": 3, "seed": 4}


@pytest.mark.parametrize(("settings", "message"), [
    ({"dimension": 0}, "dimension must be an integer from 1"),
    ({"features": ["a"]}, "features names 1 features, but dimension is 2"),
    ({"features": ["a", "outcome"]}, "features names 'outcome', a column of the service's own"),
    ({"seed": -1}, "seed must be an integer >= 0"),
    ({"params": {"delta": 0.3}}, "params.r0 of learner 'sa-ols' must be given"),
    ({"params": {"delta": 0.3, "r0": 0, "colour": 1}}, "params of learner 'sa-ols'"),
    ({"learner": "linucb", "params": {"r0": 0.0}}, "publishes a general"),
    ({"publish": "outcomes:0"}, "publish must be one of"),
    ({"max_batch": 0}, "max_batch must be an integer >= 1"),
    ({"database": "sqlite://"}, "give a SQLite file"),
])
def test_bad_settings_are_one_line_naming_the_setting(settings, message):
    doc = {"params": {"delta": 0.3, "r0": 0.0}, **settings}
    with pytest.raises(ValueError, match=message) as info:
        ServiceConfig(**doc).check()
    assert "\n" not in str(info.value)


def test_cadences():
    assert parse_cadence("manual") == ("manual", 0.0)
    assert parse_cadence("outcomes:25") == ("outcomes", 25.0)
    assert parse_cadence("period:1.5") == ("period", 1.5)
    for bad in ("outcomes:2.5", "period:0", "period:0.5", "period:inf", "daily", "outcomes:"):
        with pytest.raises(ValueError, match="publish must be one of"):
            parse_cadence(bad)
