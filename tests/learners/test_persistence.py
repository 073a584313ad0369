"""Saving and loading learners: a versioned file of JSON and arrays, no pickle.

Every learner's round trip (saved mid-run, loaded, continuing bit-identically) is a public
check run by the conformance suite (``check_saves_and_loads``); these tests cover the file
itself and every way a load can be refused."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from strategic_apple_tasting import Game
from strategic_apple_tasting.learners import (
    LEARNERS,
    SAOLS,
    Exp3SAE,
    LinUCB,
    load_learner,
    persistence,
)


def _run(learner, n=30, seed=0):
    xs = np.random.default_rng(seed).uniform(-1, 1, size=(n, learner._d))
    for i, x in enumerate(xs):
        d = learner.decide(x)
        if d.accepted and i % 2:
            learner.report(d.id, float(x[0]))
    return learner


def test_every_package_learner_saves(tmp_path):
    """The control for the public check, which also accepts a clean refusal: no learner of
    the package refuses."""
    inst = Game(dimension=3, delta=0.1).instance(0)
    for name, cls in sorted(LEARNERS.items()):
        learner = cls.check_configurations()[0].clone().bind(inst, 500)
        lr = _run(learner.reset(3, rng=1))
        back = load_learner(lr.save(tmp_path / f"{name}.sat"))
        assert repr(back) == repr(lr) and back.pending() == lr.pending(), name


def test_the_file_is_json_and_arrays(tmp_path):
    lr = _run(SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0))
    path = lr.save(tmp_path / "saols.sat")
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        meta = json.loads(zf.read("meta.json"))
    assert names[0] == "meta.json" and all(n.endswith(".npy") for n in names[1:])
    assert meta["format"] == persistence.FORMAT
    assert meta["format_version"] == persistence.FORMAT_VERSION
    assert meta["learner"] == "sa-ols" and meta["d"] == 2
    assert meta["params"] == {"delta": 0.1, "r0": 0.0, "feedback": "apple", "agents": None,
                              "accept_when_locked": False, "warmup": None}
    assert meta["desk"]["pending"]["ids"] == lr.pending()
    assert "pending.npy" in names and not any(n.startswith("pending0") for n in names)
    assert not any(t.endswith(".tmp") for t in (p.name for p in tmp_path.iterdir()))


def test_a_loaded_learner_keeps_its_pending_decisions_rules_and_cadence(tmp_path):
    """An outcome reported after loading is learned under the rule of its decision, with the
    draw of the expert it was decided under (EXP3-SAE), as without the save."""
    def fresh():
        lr = Exp3SAE(horizon=2000, sigma=0.1, delta=0.1, r0=0.0,
                     feedback="apple").reset(2, rng=3)
        return lr.publish_every(outcomes=4)

    xs = np.random.default_rng(2).uniform(-1, 1, size=(40, 2))
    kept, saved = fresh(), fresh()
    for lr in (kept, saved):
        for x in xs[:20]:
            lr.decide(x)
        lr.publish()
    back = load_learner(saved.save(tmp_path / "exp3.sat"))
    for lr in (kept, back):
        for i in lr.pending():
            lr.report(i, 0.5)
        for x in xs[20:]:
            lr.decide(x)
    assert back.rule_in_force().version == kept.rule_in_force().version > 2
    assert np.array_equal(back.state.experts.log_weights, kept.state.experts.log_weights)


def test_a_general_rule_in_force_is_saved_with_its_state(tmp_path):
    lr = _run(LinUCB(alpha=1.0, r0=0.0, feedback="apple").reset(2, rng=0))
    lr.publish()
    back = load_learner(lr.save(tmp_path / "linucb.sat"))
    probes = np.random.default_rng(4).uniform(-1, 1, size=(20, 2))
    assert [back.rule_in_force().rule.value(p) for p in probes] == \
        [lr.rule_in_force().rule.value(p) for p in probes]


def _rewrite(path, edit):
    with zipfile.ZipFile(path) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(files["meta.json"])
    edit(meta, files)
    files["meta.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in files.items():
            zf.writestr(n, data)


def test_loading_refuses_what_it_cannot_read_in_one_line(tmp_path):
    good = _run(SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0))
    path = good.save(tmp_path / "good.sat")
    (tmp_path / "text.sat").write_text("not a zip")
    with zipfile.ZipFile(tmp_path / "empty.sat", "w") as zf:
        zf.writestr("other.txt", "x")
    newer = tmp_path / "newer.sat"
    newer.write_bytes(path.read_bytes())
    _rewrite(newer, lambda m, f: m.update(format_version=persistence.FORMAT_VERSION + 1))
    foreign = tmp_path / "foreign.sat"
    foreign.write_bytes(path.read_bytes())
    _rewrite(foreign, lambda m, f: m.update(format="something else"))
    other = tmp_path / "other.sat"  # SA-OLS's file claiming to be LinUCB's
    other.write_bytes(path.read_bytes())
    _rewrite(other, lambda m, f: m.update(learner="linucb",
                                          params={"alpha": 1.0, "ridge": 1.0, "r0": 0.0,
                                                  "feedback": "apple"}))
    cases = [
        (tmp_path / "missing.sat", "is not a file"),
        (tmp_path / "text.sat", "is not a saved learner"),
        (tmp_path / "empty.sat", "is not a saved learner"),
        (foreign, "is not a saved learner"),
        (newer, f"format {persistence.FORMAT_VERSION + 1}.*this release reads formats 1, 2: "
                "upgrade to read it"),
        (other, "the file does not describe this learner: state field state"),
    ]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message) as info:
            load_learner(bad)
        assert "\n" not in str(info.value)


def test_saving_refuses_a_path_it_cannot_write_before_writing_anything(tmp_path):
    lr = SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0)
    with pytest.raises(ValueError, match=r"directory .* does not exist"):
        lr.save(tmp_path / "nowhere" / "x.sat")
    with pytest.raises(ValueError, match="is a directory"):
        lr.save(tmp_path)
    with pytest.raises(RuntimeError, match="reset"):
        SAOLS().save(tmp_path / "x.sat")
    assert list(tmp_path.iterdir()) == []


def test_a_state_held_in_python_objects_cannot_be_saved(tmp_path):
    from strategic_apple_tasting.game import LinearThreshold
    from strategic_apple_tasting.learners import Learner

    class Keeper(Learner):
        name = "keeper"
        strategy_aware = False

        def __init__(self, feedback=None):
            self.feedback = feedback

        def _init_state(self, d):
            return {"seen": []}  # not a NamedTuple of arrays

        def _publish(self):
            return LinearThreshold(beta=np.zeros(self._d), threshold=-1.0)

        def _learn(self, rule, x_obs, accepted, reward):
            self._state["seen"].append(reward)
            return True

    lr = Keeper(feedback="apple").reset(2, rng=0)
    with pytest.raises(ValueError, match="Keeper: state field state is a dict, which cannot "
                                         "be saved without pickle"):
        lr.save(tmp_path / "keeper.sat")
    assert list(tmp_path.iterdir()) == []


def test_a_learner_as_bytes_round_trips_and_junk_is_refused_in_one_line():
    learner = _run(SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0))
    again = persistence.loads(persistence.dumps(learner))
    assert np.array_equal(again.state.fits, learner.state.fits)
    assert again.pending() == learner.pending()
    with pytest.raises(ValueError, match="the state column is not a saved learner") as info:
        persistence.loads(b"junk", "the state column")
    assert "\n" not in str(info.value)


def test_a_file_of_format_1_still_loads(tmp_path):
    """Format 1 kept one array per pending decision; its reader stays."""
    learner = _run(SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0))
    assert learner.pending()
    path = learner.save(tmp_path / "v1.sat")

    def to_v1(meta, files):
        xs = np.lib.format.read_array(io.BytesIO(files.pop("pending.npy")))
        p = meta["desk"]["pending"]
        meta["desk"]["pending"] = [{"id": i, "version": v, "accepted": a} for i, v, a in
                                   zip(p["ids"], p["versions"], p["accepted"], strict=True)]
        for k, x in enumerate(xs):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, x)
            files[f"pending{k}.npy"] = buf.getvalue()
        meta["format_version"] = 1
    _rewrite(path, to_v1)
    again = load_learner(path)
    assert again.pending() == learner.pending()
    assert np.array_equal(again.state.fits, learner.state.fits)
    x = next(iter(learner._pending.values())).x_obs
    assert np.array_equal(next(iter(again._pending.values())).x_obs, x)
