"""The service on PostgreSQL (a throwaway cluster from Debian's package; skipped, saying why,
where it is missing): the game over the wire, kill -9 under load, the log's replay."""

from __future__ import annotations

from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.game import Game
from strategic_apple_tasting.learners import make_learner
from strategic_apple_tasting.service import wire

from .test_durability import BUSY, Load, _rows, kill_under_load, retry_everything


def test_the_service_on_postgresql(serve, postgres):
    game = Game(dimension=3, delta=0.3, delay=2, period=3)
    server = serve("--publish", "manual", "--seed", "5", database=postgres)
    over = wire.play_over_the_wire(server.url, server.key, game, 5, 60)
    here = wire.play_in_process(game, make_learner("sa-ols"), 5, 60)
    assert wire.compare_with_engine(over, here) == []
    server.stop()
    # Busy: publications and saved states every few entries, then a kill under load.
    server.args = [*server.args, *BUSY]
    server.start()
    load = Load(server, "pg").start()
    kill_under_load(server, load, 0.8)
    server.start()
    retry_everything(server, load)
    decisions, _ = _rows(server.database)
    assert set(load.sent) <= set(decisions)
    assert len(decisions) == len(load.sent) + 60  # and the wire game's 60, once each
    server.stop()
    assert main(["serve", "check", "--database", server.database]) == 0
