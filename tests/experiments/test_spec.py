"""Sweep specs: every mistake is one line naming the key path, the value and what is allowed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.experiments.spec import SpecError, check_spec, load_spec

GOOD = {"horizon": 100, "seeds": 3, "seeds_per_cell": 2,
        "game": {"dimension": [2, 3], "delta": 0.2},
        "learners": [{"name": "sa-ols"}, {"name": "etc", "exploration_rounds": [10, 20]}]}


def _with(path: str, value):
    spec = {**GOOD, "game": dict(GOOD["game"]), "learners": [dict(e) for e in GOOD["learners"]]}
    node, *rest = path.split(".")
    if not rest:
        spec[node] = value
    elif node == "game":
        spec["game"][rest[0]] = value
    else:
        spec["learners"][int(node[-2])][rest[0]] = value
    return spec


def test_ellipsoidal_costs_by_their_diagonal_or_rows():
    for cost in ([[4.0, 1.0]], [[[4.0, 1.0], [1.0, 2.0]]], [[1.0, 2.0], [2.0, 1.0]]):
        spec = check_spec({**GOOD, "game": {"dimension": 2, "delta": 0.2, "agents": "ellipsoid",
                                            "cost": cost}})
        assert len({c.game["cost"] == v for c in spec.cells for v in cost}) >= 1
    game, _ = spec.cells[0].build()
    assert game.settings()["cost"] == "diag(1, 2)"


def test_a_good_spec_expands_to_the_product():
    spec = check_spec(GOOD)
    # 2 dimensions × (1 + 2 learner variants) × 2 seed batches
    assert len(spec.cells) == 12
    assert {c.label for c in spec.cells} == {"sa-ols", "etc(exploration_rounds=10)",
                                            "etc(exploration_rounds=20)"}
    assert sorted({c.seeds for c in spec.cells}) == [(0, 1), (2,)]
    assert len({c.key for c in spec.cells}) == 12
    assert len(check_spec({**GOOD, "horizon": [100, 1000]}).cells) == 24  # horizons sweep too


BAD = [
    (_with("horizon", 0), "horizon must be an integer from 1 to 10^12, got 0"),
    (_with("horizon", "10"), 'horizon must be an integer from 1 to 10^12, got "10"'),
    (_with("horizon", [100, 0]), "horizon[1] must be an integer from 1 to 10^12, got 0"),
    (_with("horizon", 10**12 + 1),
     "horizon must be an integer from 1 to 10^12, got 1000000000001"),
    (_with("horizon", [100, 100]), "horizon[1] repeats horizon[0] (100): the values of a list"),
    (_with("seeds", [1, 1]), "seeds must be a count >= 1 or a non-empty list of distinct"),
    (_with("seeds", -2), "seeds must be an integer >= 1, got -2"),
    (_with("per_decade", 0.5), "per_decade must be an integer from 1 to 10,000, got 0.5"),
    (_with("seeds", [0, 2**63 - 2]),
     "seeds[1] must be an integer from 0 to 2^63 - 1 - 2 (the number of seeds) = "
     f"{2**63 - 3}, got {2**63 - 2}"),
    (_with("seeds", [-1]), "seeds[0] must be an integer from 0 to 2^63 - 1 - 1"),
    (_with("game.delta", [0.1, 0.2, 0.1]),
     "game.delta[2] repeats game.delta[0] (0.1): the values of a list must be distinct"),
    (_with("learners[1].exploration_rounds", [10, 10]),
     "learners[1].exploration_rounds[1] repeats learners[1].exploration_rounds[0] (10)"),
    (_with("colour", 1), "colour is not a spec key; allowed: horizon, seeds"),
    (_with("game.delta", [0.1, -1.0]), "game.delta[1]: delta must be a finite number >= 0"),
    (_with("game.delta", "big"), 'game.delta must be a number, got "big"'),
    (_with("game.dimension", [2, 0]),
     "game.dimension[1]: dimension must be an integer from 1 to 100,000"),
    (_with("game.dimension", []), "game.dimension must not be an empty list"),
    (_with("game.feedback", "full"), "game.feedback: feedback must be one of apple, bandit"),
    (_with("game.agents", "lazzy"), "game.agents: agents must be one of lazy, trembling"),
    (_with("game.tremble", 0.1), "game.tremble: tremble applies only to agents = trembling"),
    (_with("game.tremble", -0.1) | {"game": {"dimension": 2, "agents": "trembling",
                                             "tremble": -0.1}},
     "game.tremble: tremble must be a finite number >= 0"),
    (_with("game.adversarial-tremble", 1), "game.adversarial-tremble must be true or false"),
    (_with("game.colour", 1), "game.colour is not a game setting; allowed: dimension, delta"),
    (_with("game.r0", 0.5) | {"game": {"dimension": 2, "feedback": "bandit", "r0": 0.5}},
     "game.r0: r0 must be 0 under bandit feedback"),
    (_with("game.r0", 0.5) | {"game": {"dimension": 2, "feedback": ["apple", "bandit"],
                                       "r0": 0.5}},
     "game (dimension=2, feedback=\"bandit\", r0=0.5): r0 must be 0 under bandit feedback"),
    ({**GOOD, "game": {"dimension": 2, "agents": "ellipsoid"}},
     "game.agents: cost must be given with agents = ellipsoid"),
    ({**GOOD, "game": {"dimension": 2, "agents": "ellipsoid", "cost": 4}},
     "game.cost must be a list (the diagonal of A, or its rows)"),
    ({**GOOD, "game": {"dimension": 2, "agents": "ellipsoid", "cost": [[1.0, 2.0, 3.0]]}},
     "game.cost[0]: cost must be the diagonal of A (2 numbers) or its 2 rows"),
    ({**GOOD, "game": {"dimension": 2, "cost": [[1.0, 2.0]]}},
     "game.cost[0]: cost applies only to agents = ellipsoid"),
    (_with("learners", []), "learners must be a non-empty array of tables"),
    (_with("learners[0].name", "sa-olz"), "learners[0].name: learner must be one of sa-ols"),
    (_with("learners[1].speed", 3), "learners[1].speed is not a parameter of etc; allowed:"),
    (_with("learners[1].exploration_rounds", -5), "learners[1] (etc): exploration_rounds"),
    (_with("learners[0].label", 3), "learners[0].label must be a string, got 3"),
    # Two learners with one label would be merged into one row of results.
    ({**GOOD, "learners": [{"name": "sa-ols", "label": "x"},
                           {"name": "naive-greedy", "label": "x"}]},
     'learners[1].label "x" clashes with learners[0]: labels must be unique'),
    ({**GOOD, "learners": [{"name": "oracle"}, {"name": "sa-ols"}, {"name": "oracle"}]},
     'learners[2] (no label, named "oracle") clashes with learners[0]: labels must be unique'),
    ({**GOOD, "learners": [{"name": "etc", "exploration_rounds": [10, 20]},
                           {"name": "sa-ols", "label": "etc(exploration_rounds=20)"}]},
     'learners[1].label "etc(exploration_rounds=20)" clashes with learners[0]'),
]


@pytest.mark.parametrize(("raw", "message"), BAD, ids=[m[:40] for _, m in BAD])
def test_bad_specs_get_one_clear_line(raw, message):
    with pytest.raises(SpecError) as info:
        check_spec(raw)
    text = str(info.value)
    assert message in text
    assert "\n" not in text


def test_files_and_the_cli(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('horizon = 10\n[game]\ndimension = 2\ndelta = "x"\n[[learners]]\nname = "etc"\n')
    assert main(["sweep", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == 'sat: error: game.delta must be a number, got "x"'
    assert not (tmp_path / "out").exists()  # checked before anything ran or was written
    broken = tmp_path / "broken.toml"
    broken.write_text("horizon = = 3\n")
    with pytest.raises(SpecError, match="is not valid TOML"):
        load_spec(broken)
    with pytest.raises(SpecError, match="does not exist"):
        load_spec(tmp_path / "missing.toml")


@pytest.mark.parametrize("name", ["sweep-small.toml", "sweep-agents.toml", "lending.toml"])
def test_shipped_examples_are_valid(name):
    spec = load_spec(Path(__file__).parents[2] / "examples" / name)
    assert spec.cells


def test_distinct_labels_and_parameters_are_kept_apart():
    spec = check_spec({**GOOD, "learners": [
        {"name": "etc", "exploration_rounds": 10}, {"name": "etc", "exploration_rounds": 20},
        {"name": "sa-ols", "label": "x"}, {"name": "sa-ols", "label": "y"}]})
    assert {c.label for c in spec.cells} == {"etc(exploration_rounds=10)",
                                            "etc(exploration_rounds=20)", "x", "y"}
    assert len({c.key for c in spec.cells}) == len(spec.cells) == 2 * 4 * 2


def test_size_limits_are_checked_before_the_sweep_is_expanded(tmp_path):
    # 10^12 cells: expanding them first would exhaust the memory, not raise SpecError.
    huge = {**GOOD, "seeds": 10**12, "seeds_per_cell": 1}
    with pytest.raises(SpecError) as info:
        check_spec(huge)
    assert str(info.value) == (
        f"the spec has {2 * 3 * 10**12:,} cells, above the limit of 100,000: shrink its "
        "lists, or allow more with --max-cells (max_cells=) if that many are meant")
    assert len(check_spec(GOOD, max_cells=12).cells) == 12
    assert len(check_spec(GOOD, max_cells=None).cells) == 12
    with pytest.raises(SpecError, match=r"^the spec has 12 cells, above the limit of 11: "):
        check_spec(GOOD, max_cells=11)
    many_seeds = {**GOOD, "seeds": 20, "seeds_per_cell": 20}  # 6 cells of 20 seeds
    with pytest.raises(SpecError, match=r"^the spec has 20 seeds, above the limit of 10: "):
        check_spec(many_seeds, max_cells=10)
    # The largest seeds and horizon allowed are accepted.
    assert check_spec(_with("seeds", [2**63 - 2])).cells[0].seeds == (2**63 - 2,)
    toml = tmp_path / "spec.toml"
    toml.write_text('horizon = 100\nseeds = 6\nseeds_per_cell = 1\n[game]\ndimension = 2\n'
                    '[[learners]]\nname = "oracle"\n')
    with pytest.raises(SpecError, match=r"^the spec has 6 cells, above the limit of 5: "):
        load_spec(toml, max_cells=5)
    assert len(load_spec(toml, max_cells=6).cells) == 6


def test_unreadable_spec_files_are_one_line(tmp_path, capsys):
    (tmp_path / "dir.toml").mkdir()
    latin = tmp_path / "latin.toml"
    latin.write_bytes('horizon = 10 # café\n'.encode("latin-1"))
    cases = [(tmp_path / "dir.toml", f"spec {str(tmp_path / 'dir.toml')!r} is a directory"),
             (latin, f"spec {str(latin)!r} is not UTF-8 text (byte 0xe9 at offset 18)")]
    if os.geteuid() != 0:  # root reads any file
        locked = tmp_path / "locked.toml"
        locked.write_text("horizon = 10\n")
        locked.chmod(0)
        cases.append((locked, f"spec {str(locked)!r} cannot be read: Permission denied"))
    for path, message in cases:
        with pytest.raises(SpecError) as info:
            load_spec(path)
        assert str(info.value).startswith(message) and "\n" not in str(info.value)
        assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
        assert capsys.readouterr().err == f"sat: error: {info.value}\n"
    assert not (tmp_path / "out").exists()


def test_a_directory_s_spec_record_is_a_spec_too(tmp_path):
    spec = check_spec(GOOD)
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"spec": spec.canonical, "cells": []}))
    assert load_spec(record).canonical == spec.canonical
    record.write_text(json.dumps(spec.canonical))
    assert load_spec(record).cells == spec.cells
    record.write_text("[1, 2]")
    with pytest.raises(SpecError, match="must hold a JSON object, got list"):
        load_spec(record)
