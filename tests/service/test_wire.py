"""The strategic game over the wire reproduces the engine: the end-to-end test of the service."""

from __future__ import annotations

import dataclasses

import pytest

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.game import Game
from strategic_apple_tasting.learners import make_learner
from strategic_apple_tasting.service import wire

GAMES = {
    # The paper's game: a rule per round, outcomes at once.
    "sa-ols, the paper's game": (
        ["--learner", "sa-ols", "--param", "delta=0.3", "--param", "r0=0",
         "--param", "feedback=\"apple\""],
        Game(dimension=3, delta=0.3), "sa-ols", {}, 100),
    # Outcomes late by a uniform 0..6 rounds, a rule held 4 rounds.
    "sa-ols, delays and periods": (
        ["--learner", "sa-ols", "--param", "delta=0.3", "--param", "r0=0",
         "--param", "feedback=\"apple\""],
        Game(dimension=3, delta=0.3, delay=3, delay_law="uniform", period=4), "sa-ols", {},
        200),
    # A randomized learner: its draws come from the service's seeded stream.
    "exp3-sae under bandit feedback": (
        ["--learner", "exp3-sae", "--param", "delta=0.3", "--param", "r0=0",
         "--param", "sigma=0.1", "--param", "horizon=200", "--param", "feedback=\"bandit\""],
        Game(dimension=2, delta=0.3, feedback="bandit", period=2), "exp3-sae", {}, 200),
}


@pytest.mark.parametrize("case", list(GAMES))
def test_the_game_over_the_wire_is_the_engine_bit_for_bit(serve, case):
    flags, game, learner, params, horizon = GAMES[case]
    seed = 11
    server = serve(*flags, "--publish", "manual", "--seed", str(seed),
                   dimension=game.dimension)
    over = wire.play_over_the_wire(server.url, server.key, game, seed, horizon)
    here = wire.play_in_process(game, make_learner(learner, **params), seed, horizon)
    assert wire.compare_with_engine(over, here) == []
    assert len(over.accepted) == horizon and len(over.rules) == -(-horizon // game.period)
    # The comparison can fail: the in-process game with other settings is told apart.
    other = dataclasses.replace(game, period=game.period + 1)
    control = wire.play_in_process(other, make_learner(learner, **params), seed, horizon)
    assert wire.compare_with_engine(over, control) != []


def test_sat_serve_play_compares_with_the_engine(serve, capsys, monkeypatch):
    server = serve("--publish", "manual", "--seed", "3")
    monkeypatch.setenv("SAT_KEY", server.key)  # never on the command line (test_secrets.py)
    status = main(["serve", "play", "--url", server.url, "--seed", "3",
                   "-T", "60", "--dimension", "3", "--delta", "0.3", "--delay", "2",
                   "--compare"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "the same as the engine in process" in out
    # A second game needs a fresh service: refused in one line.
    assert main(["serve", "play", "--url", server.url, "-T", "5", "--dimension", "3"]) == 2
    assert "needs a fresh service" in capsys.readouterr().err
