"""What a request may say, without a server: the body models' refusals of a body as a whole
(their message is the answer as it stands), after any field's own, and the checks the
settings bound (the dimension, the learner's input bound, as given or standardized)."""

from __future__ import annotations

import base64

import pytest
from pydantic import ValidationError

from strategic_apple_tasting.service.bodies import (
    WHOLE,
    AttachIn,
    DecisionsIn,
    InputCheck,
    OutcomesIn,
)
from strategic_apple_tasting.service.config import ServiceConfig
from strategic_apple_tasting.service.deciding import ServiceError

X = [0.1, 0.2, 0.3]


def _refusal(model: type, body: dict) -> dict:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(body)
    errors = caught.value.errors()
    assert len(errors) == 1, errors
    return errors[0]


@pytest.mark.parametrize(("model", "body", "message"), [
    (DecisionsIn, {}, "give one applicant (x, and optionally id) or a batch (applicants), "
     "not both or neither"),
    (DecisionsIn, {"x": X, "applicants": [{"x": X}]}, "give one applicant (x, and optionally "
     "id) or a batch (applicants), not both or neither"),
    (DecisionsIn, {"applicants": [{"x": X}], "id": "a"},
     "id belongs in each of applicants, not beside them"),
    (DecisionsIn, {"applicants": [{"x": X}], "group": "g"},
     "group belongs in each of applicants, not beside them"),
    (OutcomesIn, {}, "give one outcome (id and outcome) or a batch (outcomes), not both or "
     "neither"),
    (OutcomesIn, {"id": "a", "outcomes": [{"id": "b", "outcome": 1.0}]}, "give one outcome "
     "(id and outcome) or a batch (outcomes), not both or neither"),
    (OutcomesIn, {"id": "a"}, "a single outcome needs both id and outcome"),
    (OutcomesIn, {"outcome": 1.0}, "a single outcome needs both id and outcome"),
    (AttachIn, {"name": "s", "learner": "sa-ols", "base": "@@@"},
     "base must be a saved learner's bytes in base64"),
])
def test_a_body_refused_whole_says_why_as_it_stands(model, body, message):
    error = _refusal(model, body)
    assert (error["type"], error["loc"], error["msg"]) == (WHOLE, (), message)


@pytest.mark.parametrize(("model", "body", "loc"), [
    (DecisionsIn, {"applicants": [{"x": [0.1, "a"]}], "id": "a"}, ("applicants", 0, "x", 1)),
    (OutcomesIn, {"id": "a\x00b"}, ("id",)),
    (AttachIn, {"name": "s", "learner": "sa-ols", "base": "@@@", "canary": 5},
     ("canary",)),
])
def test_a_fields_own_refusal_comes_first(model, body, loc):
    # (the whole body is judged only once every field is valid)
    error = _refusal(model, body)
    assert error["type"] != WHOLE and error["loc"] == loc


def test_a_shadows_base_is_decoded_once_checked():
    saved = b"\x00saved learner\xff"
    body = AttachIn(name="s", learner="sa-ols", base=base64.b64encode(saved).decode())
    assert body.saved == saved
    assert AttachIn(name="s", learner="sa-ols").saved is None
    assert OutcomesIn(id="a", outcome=1.0).single and not OutcomesIn(outcomes=[]).single


def _check(**config) -> InputCheck:
    return InputCheck(ServiceConfig(dimension=3, params={"delta": 0.3, "r0": 0.0}, **config))


@pytest.mark.parametrize(("config", "x", "message"), [
    ({}, [0.1, 0.2], "applicants.1.x has 2 features; the service decides on 3"),
    ({"features": ["a", "b", "c"]}, [0.1], "applicants.1.x has 1 features; the service "
     "decides on 3 (a, b, c)"),
    ({}, [0.1, -2e9, 0.3], "applicants.1.x.1: must be at most 1e+09 in magnitude, the "
     "learner's input bound (got -2000000000.0)"),
    ({"features": [{"name": "a", "mean": 0.0, "scale": 0.5}, "b", "c"]}, [6e8, 0.2, 0.3],
     "applicants.1.x.0: 600000000.0 is 1.2e+09 standardized (declared mean 0, scale 0.5), "
     "beyond the learner's input bound 1e+09: give a value from -5e+08 to 5e+08"),
])
def test_what_the_settings_bound_is_refused_with_its_place(config, x, message):
    with pytest.raises(ServiceError) as caught:
        _check(**config).features(x, "applicants.1.x")
    assert (caught.value.status, caught.value.message) == (422, message)
    assert _check(**config).features(X, "x") == X
    _check(**config).bounded(1e9, "outcome")  # the bound itself is taken
    with pytest.raises(ServiceError, match=r"^outcome: must be at most 1e\+09 in magnitude"):
        _check(**config).bounded(-1.5e9, "outcome")


@pytest.mark.parametrize(("size", "name"), [(0, "applicants"), (10_001, "outcomes")])
def test_a_batch_empty_or_over_max_batch_is_refused(size, name):
    with pytest.raises(ServiceError) as caught:
        _check().batch(size, name)
    assert (caught.value.status, caught.value.message) == (
        422, f"{name} has {size} entries; from 1 to 10,000 allowed (max_batch)")
    _check().batch(10_000, name)
