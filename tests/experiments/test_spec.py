"""Sweep specs: every mistake is one line naming the key path, the value and what is allowed."""

from __future__ import annotations

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
    (_with("horizon", 0), "horizon must be an integer >= 1, got 0"),
    (_with("horizon", "10"), 'horizon must be an integer >= 1, got "10"'),
    (_with("horizon", [100, 0]), "horizon[1] must be an integer >= 1, got 0"),
    (_with("seeds", [1, 1]), "seeds must be a count >= 1 or a non-empty list of distinct"),
    (_with("seeds", -2), "seeds must be an integer >= 1, got -2"),
    (_with("per_decade", 0.5), "per_decade must be an integer >= 1, got 0.5"),
    (_with("colour", 1), "colour is not a spec key; allowed: horizon, seeds"),
    (_with("game.delta", [0.1, -1.0]), "game.delta[1]: delta must be a finite number >= 0"),
    (_with("game.delta", "big"), 'game.delta must be a number, got "big"'),
    (_with("game.dimension", [2, 0]), "game.dimension[1]: dimension must be an integer >= 1"),
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
    (_with("learners[0].name", "sa-olz"), 'learners[0].name must be one of accept-all'),
    (_with("learners[1].speed", 3), "learners[1].speed is not a parameter of etc; allowed:"),
    (_with("learners[1].exploration_rounds", -5), "learners[1] (etc): exploration_rounds"),
    (_with("learners[0].label", 3), "learners[0].label must be a string, got 3"),
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


@pytest.mark.parametrize("name", ["sweep-small.toml", "sweep-agents.toml"])
def test_shipped_examples_are_valid(name):
    from pathlib import Path

    spec = load_spec(Path(__file__).parents[2] / "examples" / name)
    assert spec.cells
