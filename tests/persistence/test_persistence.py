"""Saving and loading learners: a versioned file of JSON and arrays, no pickle.

Every learner's round trip (saved mid-run, loaded, continuing bit-identically) is a public
check run by the conformance suite (``check_saves_and_loads``); these tests cover the file
itself and every way a load can be refused."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from strategic_apple_tasting import Game, persistence
from strategic_apple_tasting.game.agents import EllipsoidalCost, LazyBestResponse
from strategic_apple_tasting.learners import (
    LEARNERS,
    SAOLS,
    Exp3SAE,
    LinUCB,
)
from strategic_apple_tasting.learners.introspect import check_configurations
from strategic_apple_tasting.persistence import load_learner, save_learner
from tests import saved


def _run(learner, n=30, seed=0):
    xs = np.random.default_rng(seed).uniform(-1, 1, size=(n, learner.dimension))
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
        learner = check_configurations(cls)[0].clone().bind(inst, 500)
        lr = _run(learner.reset(3, rng=1))
        back = load_learner(save_learner(lr, tmp_path / f"{name}.sat"))
        assert repr(back) == repr(lr) and back.pending() == lr.pending(), name


def test_the_file_is_json_and_arrays(tmp_path):
    lr = _run(SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0))
    path = save_learner(lr, tmp_path / "saols.sat")
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        meta = json.loads(zf.read("meta.json"))
    assert names[0] == "meta.json" and all(n.endswith(".npy") for n in names[1:-1])
    assert names[-1] == persistence.DIGEST == "sha256"
    with zipfile.ZipFile(path) as zf:
        digest = zf.read(names[-1]).decode()
        assert digest == hashlib.sha256(b"".join(
            n.encode() + b"\0" + len(zf.read(n)).to_bytes(8, "little") + zf.read(n)
            for n in names[:-1])).hexdigest()
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
    back = load_learner(save_learner(saved, tmp_path / "exp3.sat"))
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
    back = load_learner(save_learner(lr, tmp_path / "linucb.sat"))
    probes = np.random.default_rng(4).uniform(-1, 1, size=(20, 2))
    assert [back.rule_in_force().rule.value(p) for p in probes] == \
        [lr.rule_in_force().rule.value(p) for p in probes]


def _rewrite(path, edit, digest="recompute"):
    """Edit a saved file's document and members in place, as a hand edit would (``digest``:
    recompute it, as anyone can, or "none")."""
    meta, files = saved.unpack(path.read_bytes())
    edit(meta, files)
    path.write_bytes(saved.pack(meta, files, digest))


def test_loading_refuses_what_it_cannot_read_in_one_line(tmp_path):
    good = _run(SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0))
    path = save_learner(good, tmp_path / "good.sat")
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
        (newer, f"format {persistence.FORMAT_VERSION + 1}.*this release reads formats 1, 2, "
                "3: upgrade to read it"),
        (other, "other.sat': state must be a RidgeBanditState, got 'PhasedOLSState'"),
    ]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message) as info:
            load_learner(bad)
        assert "\n" not in str(info.value)


def test_saving_refuses_a_path_it_cannot_write_before_writing_anything(tmp_path):
    lr = SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0)
    with pytest.raises(ValueError, match=r"directory .* does not exist"):
        save_learner(lr, tmp_path / "nowhere" / "x.sat")
    with pytest.raises(ValueError, match="is a directory"):
        save_learner(lr, tmp_path)
    with pytest.raises(RuntimeError, match="reset"):
        save_learner(SAOLS(), tmp_path / "x.sat")
    assert list(tmp_path.iterdir()) == []


def test_a_state_held_in_python_objects_cannot_be_saved(tmp_path):
    from strategic_apple_tasting.game import LinearThreshold
    from strategic_apple_tasting.learners import Learner, LearnerTags

    class Keeper(Learner):
        name = "keeper"
        tags = LearnerTags(strategy_aware=False)

        def __init__(self, feedback=None):
            self.feedback = feedback

        def _init_state(self, d):
            return {"seen": []}  # not a NamedTuple of arrays

        def _publish(self):
            return LinearThreshold(beta=np.zeros(self.dimension), threshold=-1.0)

        def _learn(self, rule, x_obs, accepted, reward):
            self.state["seen"].append(reward)
            return True

    lr = Keeper(feedback="apple").reset(2, rng=0)
    with pytest.raises(ValueError, match="Keeper: state field state is a dict, which cannot "
                                         "be saved without pickle"):
        save_learner(lr, tmp_path / "keeper.sat")
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
    path = save_learner(learner, tmp_path / "v1.sat")

    def to_v1(meta, files):
        files.pop(persistence.DIGEST)
        xs = np.lib.format.read_array(io.BytesIO(files.pop("pending.npy")))
        p = meta["desk"]["pending"]
        meta["desk"]["pending"] = [{"id": i, "version": v, "accepted": a} for i, v, a in
                                   zip(p["ids"], p["versions"], p["accepted"], strict=True)]
        for k, x in enumerate(xs):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, x)
            files[f"pending{k}.npy"] = buf.getvalue()
        meta["format_version"] = 1
    _rewrite(path, to_v1, digest="none")
    again = load_learner(path)
    assert again.pending() == learner.pending()
    assert np.array_equal(again.state.fits, learner.state.fits)
    x = next(iter(learner.desk_record().pending.values())).x_obs
    assert np.array_equal(next(iter(again.desk_record().pending.values())).x_obs, x)


def test_a_file_of_format_2_still_loads(tmp_path):
    """Format 2 had no digest; its reader stays (and checks everything but the digest)."""
    learner = saved.learner("exp3-sae")
    meta, files = saved.unpack(saved.saved("exp3-sae"))
    meta["format_version"] = 2
    again = saved.load(saved.pack(meta, files, digest="none"))
    assert saved.same(again, learner)
    # A format-2 file keeps no digest: one that has one is not of format 2.
    with pytest.raises(ValueError, match=r"the file is not a saved learner \(it holds 'sha256'"):
        saved.load(saved.pack(meta, files, digest="recompute"))


@pytest.mark.parametrize("belief", [
    LazyBestResponse(delta=0.1, truthful=0.25),
    EllipsoidalCost(delta=0.1, cost_inv=np.diag([1.0, 2.0])),
], ids=["lazy", "ellipsoid"])
def test_a_file_from_before_one_compiled_agent_type_still_loads(tmp_path, belief):
    """Files written before every built-in agent model reached compiled code as one AgentsCore
    hold the model's own record in the state; they load as that model (and a record that is not
    what the learner's parameters make is refused, as any field is)."""
    learner = _run(SAOLS(delta=0.1, r0=0.0, feedback="apple", agents=belief).reset(2, rng=0))
    path = save_learner(learner, tmp_path / "old.sat")

    def to_old(meta, files, delta=0.1):
        for name in [n for n in files if n.startswith("state.agents.")]:
            del files[name]  # AgentsCore's arrays
        fields = {}
        for key, value in belief._replace(delta=delta)._asdict().items():
            if isinstance(value, np.ndarray):
                files[f"state.agents.{key}.npy"] = saved.npy(value)
                fields[key] = {"array": f"state.agents.{key}"}
            else:
                fields[key] = {"value": value, "float": True}
        meta["state"]["fields"]["agents"] = {"tuple": type(belief).__name__, "fields": fields}
    _rewrite(path, to_old)
    again = load_learner(path)
    assert again.pending() == learner.pending()
    assert np.array_equal(again.state.fits, learner.state.fits)
    assert again.decide(np.array([0.3, -0.2])).accepted == learner.decide(
        np.array([0.3, -0.2])).accepted
    path = save_learner(learner, tmp_path / "other.sat")
    _rewrite(path, lambda meta, files: to_old(meta, files, delta=0.2))
    with pytest.raises(ValueError, match="state.agents must be the agent model the learner's "
                       r"parameters make \(\w+ differs in delta\)"):
        load_learner(path)


def _unwrap_belief(meta, files):
    """A file as a learner told δ wrote it before its state held a BudgetBelief: the agent
    model alone (the belief's ``base``, its arrays under their old names)."""
    base = meta["state"]["fields"]["agents"]["fields"]["base"]
    for name in [n for n in files if n.startswith("state.agents.")]:
        key = name[len("state.agents."):-len(".npy")]
        data = files.pop(name)
        if key.startswith("base."):
            files[f"state.agents.{key[len('base.'):]}.npy"] = data
    for field in base["fields"].values():
        if "array" in field:
            field["array"] = field["array"].replace("state.agents.base.", "state.agents.")
    meta["state"]["fields"]["agents"] = base


def test_a_file_from_before_the_budget_belief_still_loads(tmp_path):
    """Files written before a learner told δ held its agent model in a BudgetBelief hold the
    model alone (an AgentsCore record): it loads as the told belief's base. A learner that
    estimates δ cannot be such a file (its estimate would be lost): refused. An estimating
    belief saved under its former name, EstimatedBudget, loads; any other name is refused."""
    learner = _run(SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(2, rng=0))
    path = save_learner(learner, tmp_path / "told.sat")
    _rewrite(path, _unwrap_belief)
    meta, _ = saved.unpack(path.read_bytes())
    assert meta["state"]["fields"]["agents"]["tuple"] == "AgentsCore"
    again = load_learner(path)
    assert saved.same(again, learner)

    estimating = _run(SAOLS(delta="estimate", r0=0.0, feedback="apple").reset(2, rng=0), n=60)
    path = save_learner(estimating, tmp_path / "estimating.sat")
    _rewrite(path, _unwrap_belief)
    with pytest.raises(ValueError, match=r"state\.agents must be a BudgetBelief, got 'AgentsCore'"):
        load_learner(path)
    for name, loads in (("EstimatedBudget", True), ("Belief", False)):
        path = save_learner(estimating, tmp_path / f"{name}.sat")
        _rewrite(path, lambda meta, files, name=name:
                 meta["state"]["fields"]["agents"].update(tuple=name))
        if loads:
            assert saved.same(load_learner(path), estimating)
        else:
            with pytest.raises(ValueError, match=r"state\.agents must be a BudgetBelief, got "
                               r"'Belief'"):
                load_learner(path)


# -- the loader trusts nothing ------------------------------------------------------
SIDE_EFFECT = """
import pathlib
pathlib.Path({marker!r}).write_text("imported")

from strategic_apple_tasting.learners import Learner


class Evil(Learner):
    name = "evil"
    def __init__(self, feedback=None):
        self.feedback = feedback
    def _init_state(self, d):
        return None
    def _publish(self):
        raise AssertionError("never called")
    def _learn(self, rule, x_obs, accepted, reward):
        raise AssertionError("never called")
"""


@pytest.fixture
def evil_module(tmp_path, monkeypatch):
    """A module on the path that says when it is imported (a file appears)."""
    marker = tmp_path / "imported"
    (tmp_path / "evil_learner.py").write_text(SIDE_EFFECT.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield marker
    sys.modules.pop("evil_learner", None)


def test_a_file_cannot_make_the_loader_import_anything(evil_module):
    """The issue's probe: ``"learner": "this:x"`` printed the Zen of Python. A name that is not
    registered nor allowed is refused in one line naming the file and the field, and nothing is
    imported."""
    for name in ("this:x", "evil_learner:Evil", "os:system", "builtins:eval"):
        data = saved.edited("sa-ols", meta=lambda m, name=name: m.update(learner=name))
        before = set(sys.modules)
        with pytest.raises(ValueError) as info:
            saved.load(data)
        message = str(info.value)
        assert message.startswith(f"the file: learner {name!r} is not a registered learner, "
                                  "and the caller did not allow it (nothing was imported)")
        assert "\n" not in message
        assert set(sys.modules) == before, set(sys.modules) - before
        assert not evil_module.exists()
    # In a fresh interpreter too ("this" prints on import; numpy may import other modules).
    code = ("import sys; from tests import saved\n"
            "data = saved.edited('sa-ols', meta=lambda m: m.update(learner='this:x'))\n"
            "try:\n    saved.load(data)\nexcept ValueError as e:\n    print(e)\n"
            "print('this' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                             filter(None, [str(Path(__file__).parents[2]),
                                           os.environ.get("PYTHONPATH")]))}).stdout
    assert out.splitlines()[-1] == "False" and "Beautiful is better" not in out


def test_allow_names_the_learners_a_file_may_name(evil_module):
    """A learner outside the registry loads when the caller allows its class or its import
    path (only then is its module imported)."""
    plain = saved.saved("plain")
    assert saved.same(saved.load(plain, allow=[saved.PlainGreedy]), saved.learner("plain"))
    assert saved.same(saved.load(plain, allow=["tests.saved:PlainGreedy"]),
                      saved.learner("plain"))
    with pytest.raises(ValueError, match=r"learner 'tests\.saved:PlainGreedy' is not a registered"):
        saved.load(plain, allow=None)
    evil = saved.edited("plain", meta=lambda m: m.update(learner="evil_learner:Evil"))
    with pytest.raises(ValueError, match="'evil_learner:Evil' is not a registered learner"):
        saved.load(evil, allow=[saved.PlainGreedy, "evil_learner:Other"])
    assert not evil_module.exists()
    # The control: allowed by its path, the module is imported (and then the file, a
    # PlainGreedy's, does not describe it).
    with pytest.raises(ValueError, match="params has an unknown key"):
        saved.load(evil, allow=["evil_learner:Evil"])
    assert evil_module.exists()
    for bad in ("evil_learner:Evil", [3], [SAOLS()], ["no-colon"]):
        with pytest.raises(ValueError, match="allow must"):
            saved.load(plain, allow=bad)


def test_the_digest_refuses_a_changed_file_and_the_checks_hold_without_it():
    """Any change of the contents is refused as corrupt unless the digest is recomputed;
    recomputed (anyone can), the structural checks still refuse a bad field."""
    good = saved.saved("sa-ols")
    meta, files = saved.unpack(good)
    meta["desk"]["clock"] += 1.0  # a plausible edit: still a valid learner
    with pytest.raises(ValueError, match=r"^the file is corrupt: its contents do not match "
                                         r"their digest \(sha256\)$"):
        saved.load(saved.pack(meta, files, digest="keep"))
    assert saved.load(saved.pack(meta, files)).clock == saved.learner("sa-ols").clock + 1
    counts = saved.array(files, "state.counts")
    counts[1] = 10**6  # the phase: the kernels index the schedule by it
    files["state.counts.npy"] = saved.npy(counts)
    for digest, message in (("keep", "is corrupt"),
                            ("recompute", r"state.counts\[1\] \(the phase\) must be in")):
        with pytest.raises(ValueError, match=message):
            saved.load(saved.pack(meta, files, digest))
    with pytest.raises(ValueError, match="is corrupt"):
        saved.load(saved.pack(meta, files, digest="none"))


def test_every_flipped_byte_is_refused_or_changes_nothing():
    """Each byte of a saved file flipped in turn (every 7th, for time): the loader refuses it
    in one line, or (a byte the zip format ignores: a timestamp, an attribute) loads the very
    same learner; never a different one."""
    data = saved.saved("exp3-sae-lazy")
    original = saved.learner("exp3-sae-lazy")
    outcomes = {"refused": 0, "same": 0}
    for at in range(0, len(data), 7):
        flipped = bytearray(data)
        flipped[at] ^= 0x10
        try:
            back = saved.load(bytes(flipped))
        except ValueError as exc:
            assert "\n" not in str(exc) and "unexpected" not in str(exc), (at, exc)
            outcomes["refused"] += 1
            continue
        assert saved.same(back, original), at
        outcomes["same"] += 1
    assert outcomes["refused"] > 0 and outcomes["same"] > 0, outcomes


def test_saved_files_are_readable_by_their_owner_only(tmp_path, monkeypatch):
    """A saved learner holds applicants' features: created 0600 before a byte is written,
    also when it replaces a file that others could read, whatever the umask."""
    learner = saved.learner("sa-ols")
    seen = []
    real_fdopen = os.fdopen

    def watch(fd, *args, **kwargs):
        seen.append((stat.S_IMODE(os.fstat(fd).st_mode), os.fstat(fd).st_size))
        return real_fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", watch)
    old = os.umask(0o000)
    try:
        first = save_learner(learner, tmp_path / "a.sat")
        (tmp_path / "b.sat").write_text("readable by all")
        (tmp_path / "b.sat").chmod(0o644)
        second = save_learner(learner, tmp_path / "b.sat")
    finally:
        os.umask(old)
    assert seen == [(0o600, 0), (0o600, 0)]
    for path in (first, second):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert saved.same(load_learner(path), learner)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sat", "b.sat"]


def test_a_generator_whose_state_is_not_json_cannot_be_saved(tmp_path):
    learner = SAOLS(delta=0.1, r0=0.0, feedback="apple").reset(
        2, np.random.Generator(np.random.MT19937(0)))
    with pytest.raises(ValueError, match="SAOLS: its random generator's MT19937 cannot be "
                                         "saved"):
        save_learner(learner, tmp_path / "x.sat")
    assert list(tmp_path.iterdir()) == []


def test_an_installed_entry_point_is_a_registered_name():
    """A name another package registers under the entry-point group is registered: the file
    may name it without an allow-list (here the peer adapters', which cannot be saved, so the
    file, an SA-OLS's, does not describe it: refused for its parameters, not its name)."""
    pytest.importorskip("mabwiser")
    data = saved.edited("sa-ols", meta=lambda m: m.update(learner="mabwiser:LinUCB"))
    with pytest.raises(ValueError, match=r"^the file: params has an unknown key|^the file: "
                                         r"params is missing"):
        saved.load(data, allow=None)
