"""Bad input, table-driven: every row gets one clear line naming the field, before any work.

From the command line: exit status 2, one line on stderr starting ``sat: error:`` that contains
the expected text, no traceback, and nothing written. From the API: a ``ValueError`` (or
``SpecError``, a ``ValueError``) whose message contains the expected text. The README's promise
("bad flags get one line") and issue 9's count of at least 150 bad inputs rest on this table.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.experiments.spec import check_spec, load_spec
from strategic_apple_tasting.game.agents import TremblingHand
from strategic_apple_tasting.learners import LEARNERS, make_learner

NOT_RESULTS = "is not a sweep directory nor a run's output"
RUN = ["run", "-l", "sa-ols", "-d", "2", "-T", "50", "--seeds", "1"]
OUT = ["-o", "out"]


def _run(*flags: str) -> list[str]:
    return [*RUN, *OUT, *flags]


# -- the command line ------------------------------------------------------------------------
# (argv, expected text). Paths are relative to a fresh directory holding the fixtures below.
CLI: list[tuple[list[str], str]] = [
    # sat run: the learner and the run's sizes
    (["run", "-d", "2", "-T", "5", *OUT], "the following arguments are required: --learner"),
    (["run", "-l", "nope", "-d", "2", "-T", "5", *OUT],
     "--learner/-l: learner must be one of sa-ols, etc"),
    (["run", "-l", "no_such_module:Thing", "-d", "2", "-T", "5", *OUT],
     "learner 'no_such_module:Thing': cannot import 'no_such_module'"),
    (["run", "-l", "strategic_apple_tasting.learners:Nothing", "-d", "2", "-T", "5", *OUT],
     "'strategic_apple_tasting.learners' has no 'Nothing'"),
    (["run", "-l", "strategic_apple_tasting.learners:Learner", "-d", "2", "-T", "5", *OUT],
     "(Learner) has no name: a learner class sets name"),
    (["run", "-l", "strategic_apple_tasting:Game", "-d", "2", "-T", "5", *OUT],
     "not a Learner subclass"),
    (["run", "-l", "sa-ols", "-T", "5", *OUT], "required: --dimension"),
    (["run", "-l", "sa-ols", "-d", "2", *OUT], "required: --horizon"),
    (["run", "-l", "sa-ols", "-d", "2", "-T", "5"], "required: --out"),
    (_run("-d", "0"), "--dimension must be an integer from 1 to 100,000, got '0'"),
    (_run("-d", "-3"), "--dimension must be an integer from 1 to 100,000, got '-3'"),
    (_run("-d", "two"), "--dimension must be an integer from 1 to 100,000, got 'two'"),
    (_run("-d", "2.5"), "--dimension must be an integer from 1 to 100,000, got '2.5'"),
    (_run("-d", "100001"), "--dimension must be an integer from 1 to 100,000"),
    (_run("-d", ""), "--dimension must be an integer from 1 to 100,000, got ''"),
    (_run("-T", "0"), "--horizon must be an integer from 1 to 10^12, got '0'"),
    (_run("-T", "-5"), "--horizon must be an integer from 1 to 10^12, got '-5'"),
    (_run("-T", "1e3"), "--horizon must be an integer from 1 to 10^12, got '1e3'"),
    (_run("-T", "10^20"), "--horizon must be an integer from 1 to 10^12, got '10^20'"),
    (_run("-T", str(10**20)), "--horizon must be an integer from 1 to 10^12"),
    (_run("-T", str(2**63 - 1)), "--horizon must be an integer from 1 to 10^12"),
    (_run("-T", "1000000000001"), "--horizon must be an integer from 1 to 10^12"),
    (_run("--seeds", "0"), "--seeds must be an integer >= 1, got '0'"),
    (_run("--seeds", "-2"), "--seeds must be an integer >= 1, got '-2'"),
    (_run("--seeds", "many"), "--seeds must be an integer >= 1, got 'many'"),
    (_run("--first-seed", "-1"), "--first-seed must be an integer from 0 to 2^63 - 1, got '-1'"),
    (_run("--first-seed", str(10**23)), "--first-seed must be an integer from 0 to 2^63 - 1"),
    (_run("--first-seed", "x"), "--first-seed must be an integer from 0 to 2^63 - 1, got 'x'"),
    (_run("--first-seed", str(2**63 - 1), "--seeds", "2"),
     "--first-seed + --seeds - 1 must be at most 2^63 - 1"),
    (_run("--threads", "0"), "--threads must be an integer >= 1, got '0'"),
    (_run("--threads", "all"), "--threads must be an integer >= 1, got 'all'"),
    (_run("--per-decade", "0"), "--per-decade must be an integer from 1 to 10,000, got '0'"),
    (_run("--per-decade", "100000"), "--per-decade must be an integer from 1 to 10,000"),
    (_run("--max-memory", "0"), "--max-memory must be a positive number of GiB, got '0'"),
    (_run("--max-memory", "-1"), "--max-memory must be a positive number of GiB, got '-1'"),
    (_run("--max-memory", "lots"), "--max-memory must be a positive number of GiB"),
    (_run("--max-memory", "nan"), "--max-memory must be a positive number of GiB, got 'nan'"),
    (_run("--max-memory", "inf"), "--max-memory must be a positive number of GiB, got 'inf'"),
    # sat run: memory, estimated before anything is allocated
    ([*RUN[:3], "-d", "100000", "-T", "50", *OUT], "of memory (d = 100000"),
    ([*RUN[:3], "-d", "3000", "-T", "50", *OUT, "--max-memory", "0.01"],
     "more than the 0.0 GiB allowed"),
    (["run", "-l", "exp3-sae", "-d", "8", "-T", str(10**9), *OUT, "--max-memory", "1"],
     "of memory (d = 8"),
    # sat run: the game
    (_run("--delta", "nan"), "delta must be a finite number >= 0, got nan"),
    (_run("--delta", "-0.1"), "delta must be a finite number >= 0, got -0.1"),
    (_run("--delta", "inf"), "delta must be a finite number >= 0, got inf"),
    (_run("--delta", "abc"), "--delta must be a number, got 'abc'"),
    (_run("--r0", "nan"), "r0 must be a finite number, got nan"),
    (_run("--r0=-inf"), "r0 must be a finite number, got -inf"),
    (_run("--r0", "x"), "--r0 must be a number, got 'x'"),
    (_run("--sigma", "-1"), "sigma must be a finite number >= 0, got -1.0"),
    (_run("--sigma", "nan"), "sigma must be a finite number >= 0, got nan"),
    (_run("--sigma", "s"), "--sigma must be a number, got 's'"),
    (_run("--radius", "0"), "radius must be a finite number > 0, got 0.0"),
    (_run("--radius", "-1"), "radius must be a finite number > 0"),
    (_run("--radius", "nan"), "radius must be a finite number > 0, got nan"),
    (_run("--truthful", "2"), "truthful must be a probability in [0, 1], got 2.0"),
    (_run("--truthful", "-0.1"), "truthful must be a probability in [0, 1], got -0.1"),
    (_run("--truthful", "nan"), "truthful must be a probability in [0, 1], got nan"),
    (_run("--contexts", "mixture", "--c0", "1.5"), "c0 must be in (0, 1], got 1.5"),
    (_run("--contexts", "mixture", "--c0", "-0.5"), "c0 must be in (0, 1]"),
    (_run("--contexts", "mixture", "--c0", "nan"), "c0 must be in (0, 1], got nan"),
    (_run("--contexts", "nope"), "--contexts: invalid choice: 'nope'"),
    (_run("--agents", "nope"), "--agents: invalid choice: 'nope'"),
    (_run("--feedback", "both"), "--feedback: invalid choice: 'both'"),
    (_run("--agents", "trembling", "--tremble", "-1"), "tremble must be a finite number >= 0"),
    (_run("--agents", "trembling", "--tremble", "nan"),
     "tremble must be a finite number >= 0, got nan"),
    (_run("--agents", "heterogeneous", "--budget-low", "-1"),
     "budget-low must be a number in [0, delta=0.1], got -1.0"),
    (_run("--agents", "heterogeneous", "--budget-low", "0.5"), "budget-low must be"),
    (_run("--agents", "ellipsoid", "--cost", "a,b"), "--cost must be numbers separated by ','"),
    (_run("--agents", "ellipsoid", "--cost", "1,2,3"), "cost must be the diagonal of A"),
    (_run("--agents", "ellipsoid", "--cost=-1,1"), "cost must be the diagonal of A"),
    (_run("--agents", "ellipsoid", "--cost", "0,0"), "cost must be the diagonal of A"),
    (_run("--agents", "ellipsoid", "--cost", "1,2;3"), "cost must be the diagonal of A"),
    (_run("--agents", "ellipsoid", "--cost", "1,2;3,4"), "cost must be the diagonal of A"),
    (_run("--agents", "ellipsoid", "--cost", "nan,1"), "cost must be the diagonal of A"),
    (["run", "-l", "sa-ols", "-d", "1", "-T", "50", "--contexts", "greedy-trap", *OUT],
     "greedy-trap at dimension 1 needs apple feedback and r0 > 0"),
    (_run("--bogus"), "unrecognized arguments: --bogus"),
    # sat run: where the results go
    (["run", "-l", "sa-ols", "-d", "2", "-T", "50", "-o", "a-file"],
     "--out 'a-file' is a file: give a directory for the results"),
    (["run", "-l", "sa-ols", "-d", "2", "-T", "50", "-o", "a-file/below"],
     "--out 'a-file/below' is under a file ('a-file')"),
    (["run", "-l", "sa-ols", "-d", "2", "-T", "50", "-o", "/sys/sat-results"],
     "--out '/sys/sat-results' cannot be written"),
    (["run", "-l", "sa-ols", "-d", "2", "-T", "50", "-o", "earlier-run"],
     "already holds the results of an earlier run (results.parquet): pass --force"),
    # sat demo
    (["demo", "-T", "0"], "--horizon must be an integer from 1 to 10^12, got '0'"),
    (["demo", "--seeds", "0"], "--seeds must be an integer >= 1"),
    (["demo", "-d", "0"], "--dimension must be an integer from 1 to 100,000"),
    (["demo", "--delta", "-1"], "delta must be a finite number >= 0"),
    (["demo", "-o", "a-file"], "--out 'a-file' is a file"),
    (["demo", "-o", "earlier-run"], "already holds the results of an earlier run"),
    # sat sweep
    (["sweep", "missing.toml", "-o", "sw"], "spec 'missing.toml' does not exist"),
    (["sweep", "a-dir", "-o", "sw"], "spec 'a-dir' is a directory, not a spec file"),
    (["sweep", "broken.toml", "-o", "sw"], "spec 'broken.toml' is not valid TOML"),
    (["sweep", "latin1.toml", "-o", "sw"], "spec 'latin1.toml' is not UTF-8 text"),
    (["sweep", "bad-delta.toml", "-o", "sw"], "game.delta[1]: delta must be a finite number"),
    (["sweep", "huge.toml", "-o", "sw"],
     "the spec has 2,000,000 cells, above the limit of 100,000"),
    (["sweep", "two-cells.toml", "-o", "sw", "--max-cells", "1"],
     "the spec has 2 cells, above the limit of 1"),
    (["sweep", "ok.toml", "-o", "sw", "--max-cells", "0"], "--max-cells must be an integer >= 1"),
    (["sweep", "ok.toml", "-o", "a-file"], "--out 'a-file' is a file"),
    (["sweep", "ok.toml", "-o", "a-file/below"], "is under a file ('a-file')"),
    (["sweep", "ok.toml"], "required: --out"),
    (["sweep", "ok.toml", "-o", "sw", "--workers", "0"], "--workers must be an integer >= 1"),
    (["sweep", "ok.toml", "-o", "sw", "--scheduler", "tcp://127.0.0.1:1"],
     "--scheduler: cannot reach a Dask scheduler at 'tcp://127.0.0.1:1'"),
    # sat results and sat report
    (["results", "nowhere"], f"'nowhere' {NOT_RESULTS}"),
    (["results", "a-file"], f"'a-file' {NOT_RESULTS}"),
    (["results", "empty-dir"], f"'empty-dir' {NOT_RESULTS}"),
    (["results", "earlier-run", "-o", "table.txt"], "--out must end in .parquet or .csv"),
    (["report", "nowhere"], f"'nowhere' {NOT_RESULTS}"),
    (["report", "a-file"], f"'a-file' {NOT_RESULTS}"),
    (["report", "empty-dir"], f"'empty-dir' {NOT_RESULTS}"),
    # sat reproduce and the command itself
    (["reproduce", "--workers", "0"], "--workers must be an integer >= 1"),
    (["reproduce", "-o", "a-file"], "--out 'a-file' is a file"),
    (["results", "earlier-run", "-o", "a-dir"], "--out must end in .parquet or .csv"),
    (["results", "earlier-run", "-o", "a-file/t.csv"], "--out 'a-file' is a file"),
    (["nope"], "invalid choice: 'nope'"),
    ([], "the following arguments are required: command"),
    # issue 20: lending CSVs that used to run silently wrong
    (["lending", "--csv", "huge.csv", "--label", "bad", "--default-value", "1", "--features",
      "income", "-T", "5"], "features: column 'income' has 1 value(s) beyond ±1e+100"),
    (["lending", "--csv", "one-class.csv", "--label", "bad", "--default-value", "0",
      "--features", "income", "-T", "5"], "label: column 'bad' holds only the value 0"),
    (["lending", "--csv", "twice.csv", "--label", "bad", "--default-value", "1", "--features",
      "income", "-T", "5"], "names column 'income' twice"),
    # issue 20: the decision service (nothing listens on port 1 of the loopback)
    (["serve", "play", "--url", "http://127.0.0.1:1", "-d", "2", "--key", "sat_0a_b"],
     "--key puts the API key where `ps` shows it to every user"),
    (["serve", "play", "--url", "http://127.0.0.1:1", "-d", "2", "--key-file", "missing.key"],
     "--key-file 'missing.key' does not exist"),
    (["serve", "play", "--url", "http://127.0.0.1:1", "-d", "2", "--key-file", "a-dir"],
     "--key-file 'a-dir' is a directory"),
    (["serve", "play", "--url", "http://127.0.0.1:1", "-d", "2", "--key-file", "a-file"],
     "--key-file 'a-file' does not hold an API key"),
    (["serve", "-d", "2", "--param", "delta=0.1", "--param", "r0=0", "--body-timeout", "0",
      "--database", "sqlite:///a-dir/x.db"], "body_timeout must be a number of seconds"),
    (["serve", "-d", "2", "--param", "delta=0.1", "--param", "r0=0", "--body-timeout", "nan",
      "--database", "sqlite:///a-dir/x.db"], "body_timeout must be a number of seconds"),
    (["serve", "keys", "list", "--database", "postgresql://u:hunter2@127.0.0.1:1/db"],
     "database 'postgresql://u:***@127.0.0.1:1/db' cannot be used: OperationalError"),
    (["serve", "check", "--database", "postgresql://u:hunter2@127.0.0.1:1/db"],
     "database 'postgresql://u:***@127.0.0.1:1/db' cannot be used: OperationalError"),
    (["serve", "--database", "postgres://u:hunter2@127.0.0.1:1/db", "keys", "list"],
     "database 'postgres://u:***@127.0.0.1:1/db': the service runs on sqlite or postgresql"),
    # issue 20: numerics (the learners' input bound, 1e9: r0 is an outcome, delta a distance)
    (_run("--r0", "1e10"),
     "r0 must be at most 1e+09 in magnitude (the learner's input bound), got 10000000000.0"),
    (_run("--delta", "2e9"), "delta must be at most 1e+09 in magnitude"),
    # issue 23: sat compile
    (["compile", "--workers", "0"], "--workers must be an integer >= 1, got '0'"),
    (["compile", "--workers", "two"], "--workers must be an integer >= 1, got 'two'"),
]


@pytest.fixture
def fixtures(tmp_path, monkeypatch):
    """A directory with the files the rows refer to; returns a snapshot function."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("not a directory\n")
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "empty-dir").mkdir()
    (tmp_path / "earlier-run").mkdir()
    (tmp_path / "earlier-run" / "results.parquet").write_bytes(b"an earlier run\n")
    (tmp_path / "broken.toml").write_text("horizon = [1, \n")
    (tmp_path / "latin1.toml").write_bytes("# caf\xe9\nhorizon = 5\n".encode("latin-1"))
    game = '[game]\ndimension = 2\n[[learners]]\nname = "sa-ols"\n'
    (tmp_path / "ok.toml").write_text("horizon = 50\n" + game)
    (tmp_path / "two-cells.toml").write_text("horizon = [50, 60]\n" + game)
    (tmp_path / "bad-delta.toml").write_text(
        'horizon = 50\n[game]\ndimension = 2\ndelta = [0.1, -1.0]\n'
        '[[learners]]\nname = "sa-ols"\n')
    (tmp_path / "huge.csv").write_text("bad,income\n0,1e308\n1,40\n")
    (tmp_path / "one-class.csv").write_text("bad,income\n0,50\n0,40\n")
    (tmp_path / "twice.csv").write_text("bad,income,income\n0,50,3\n1,40,2\n")
    (tmp_path / "huge.toml").write_text(  # 2,000,000 cells
        "horizon = 50\nseeds = 2000\nseeds_per_cell = 1\n[game]\ndimension = 2\n"
        f"delta = {[round(0.001 * i, 3) for i in range(1000)]}\n[[learners]]\nname = \"sa-ols\"\n")

    def snapshot() -> dict[str, bytes]:
        return {str(p.relative_to(tmp_path)): (p.read_bytes() if p.is_file() else b"")
                for p in sorted(tmp_path.rglob("*"))}
    return snapshot


@pytest.mark.parametrize("argv, expected", CLI, ids=[" ".join(a)[:60] for a, _ in CLI])
def test_cli_bad_input_gets_one_line_and_exit_2(argv, expected, fixtures, capsys):
    before = fixtures()
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sat: error: "), err
    assert expected in lines[0], lines[0]
    assert "Traceback" not in err
    assert fixtures() == before  # nothing written, nothing lost


# -- sweep specs -----------------------------------------------------------------------------
BASE = {"horizon": 50, "game": {"dimension": 2}, "learners": [{"name": "sa-ols"}]}


def _spec(**changes):
    spec = {**BASE, **changes}
    return spec


def _game(**changes):
    return {**BASE, "game": {"dimension": 2, **changes}}


def _learner(**entry):
    return {**BASE, "learners": [{"name": "sa-ols", **entry}]}


SPECS: list[tuple[dict, str]] = [
    ({**BASE, "bogus": 1}, "bogus is not a spec key"),
    ({"game": BASE["game"], "learners": BASE["learners"]}, "horizon must be given"),
    ({"horizon": 5, "learners": BASE["learners"]}, "game must be given"),
    ({"horizon": 5, "game": BASE["game"]}, "learners must be given"),
    (_spec(horizon=0), "horizon"),
    (_spec(horizon=-1), "horizon"),
    (_spec(horizon="100"), "horizon"),
    (_spec(horizon=1.5), "horizon"),
    (_spec(horizon=True), "horizon"),
    (_spec(horizon=[]), "horizon must not be an empty list"),
    (_spec(horizon=[100, 0]), "horizon[1]"),
    (_spec(horizon=10**13), "horizon"),
    (_spec(horizon=2**63 - 1), "horizon"),
    (_spec(seeds=0), "seeds"),
    (_spec(seeds=-3), "seeds"),
    (_spec(seeds="8"), "seeds"),
    (_spec(seeds=[]), "seeds"),
    (_spec(seeds=[1, 1]), "seeds"),
    (_spec(seeds=[-1]), "seeds[0]"),
    (_spec(seeds=[2**63]), "seeds"),
    (_spec(seeds_per_cell=0), "seeds_per_cell"),
    (_spec(seeds_per_cell="4"), "seeds_per_cell"),
    (_spec(per_decade=0), "per_decade"),
    (_spec(per_decade=10**6), "per_decade"),
    (_spec(game=[1]), "game must be a table"),
    (_spec(game={}), "game.dimension must be given"),
    (_game(dimension=0), "game.dimension"),
    (_game(dimension="2"), "game.dimension"),
    (_game(dimension=[2, 0]), "game.dimension[1]"),
    (_game(dimension=100_001), "game.dimension: dimension must be an integer from 1 to 100,000"),
    (_game(dimension=90_000), "learners[0] (sa-ols): a cell at dimension 90000, horizon 50 "
     "needs about"),
    ({**_game(dimension=8), "horizon": 10**11, "learners": [{"name": "exp3p-sae"}]},
     "GiB of memory"),
    (_game(delta=-1.0), "game.delta"),
    (_game(delta="0.1"), "game.delta"),
    (_game(delta=[0.1, math.nan]), "game.delta[1]"),
    (_game(delta=[]), "game.delta must not be an empty list"),
    (_game(sigma=-0.5), "game.sigma"),
    (_game(r0=math.inf), "game.r0"),
    (_game(truthful=1.5), "game.truthful"),
    (_game(feedback="both"), "game.feedback"),
    (_game(agents="nope"), "game.agents"),
    (_game(contexts="nope"), "game.contexts"),
    (_game(bogus=1), "game.bogus is not a game setting"),
    (_game(agents="ellipsoid", cost=4.0), "game.cost"),
    (_game(agents="ellipsoid", cost=[[1.0, 2.0, 3.0]]), "game.cost"),
    (_game(agents="trembling", tremble=-0.1), "game.tremble"),
    (_game(contexts="mixture", c0=2.0), "game.c0"),
    (_game(delay=-1), "game.delay"),
    (_game(delay=1.5), "game.delay"),
    (_game(period=0), "game.period"),
    (_game(delay_law="poisson"), "game.delay_law"),
    (_spec(learners=[]), "learners must be a non-empty array"),
    (_spec(learners={"name": "sa-ols"}), "learners must be a non-empty array"),
    (_spec(learners=["sa-ols"]), "learners[0] must be a table"),
    (_spec(learners=[{"name": "nope"}]), "learners[0].name: learner must be one of"),
    (_spec(learners=[{}]), "learners[0].name: learner must be one of"),
    (_spec(learners=[{"name": "nowhere:Thing"}]), "learners[0].name: learner 'nowhere:Thing'"),
    (_learner(label=3), "learners[0].label must be a string"),
    (_learner(bogus=1), "learners[0].bogus is not a parameter of sa-ols"),
    (_learner(delta=-1.0), "learners[0] (sa-ols)"),
    (_spec(learners=[{"name": "etc", "exploration_rounds": 0}]), "learners[0] (etc)"),
    (_spec(learners=[{"name": "sa-ols", "label": "x"}, {"name": "naive-greedy", "label": "x"}]),
     "learners[1]"),
    (_spec(learners=[{"name": "sa-ols"}, {"name": "sa-ols"}]), "learners[1]"),
    # issue 20: numerics (the learners' input bound, 1e9)
    (_game(r0=1e10), "learners[0] (sa-ols): r0 must be at most 1e+09 in magnitude"),
    (_learner(delta=5e9), "learners[0] (sa-ols): delta must be at most 1e+09 in magnitude"),
]


@pytest.mark.parametrize("raw, expected", SPECS, ids=[f"spec{i}" for i in range(len(SPECS))])
def test_spec_bad_input_names_its_key(raw, expected):
    with pytest.raises(ValueError) as info:
        check_spec(raw)
    message = str(info.value)
    assert expected in message and "\n" not in message, message


def test_a_spec_path_that_is_a_directory(tmp_path):
    with pytest.raises(ValueError, match="is a directory"):
        load_spec(tmp_path)


# -- the Python API --------------------------------------------------------------------------
def _learner_after_reset(name: str = "sa-ols"):
    return make_learner(name, delta=0.1, r0=0.0, feedback="apple").reset(2, 0)


def _update(*args):
    return lambda: _learner_after_reset().update(*args)


API: list[tuple[str, object, str]] = [
    ("game-d0", lambda: Game(dimension=0), "dimension"),
    ("game-d-float", lambda: Game(dimension=2.5), "dimension"),
    ("game-d-bool", lambda: Game(dimension=True), "dimension"),
    ("game-delta-nan", lambda: Game(dimension=2, delta=math.nan), "delta"),
    ("game-delta-neg", lambda: Game(dimension=2, delta=-1), "delta"),
    ("game-sigma-neg", lambda: Game(dimension=2, sigma=-1), "sigma"),
    ("game-r0-inf", lambda: Game(dimension=2, r0=math.inf), "r0"),
    ("game-feedback", lambda: Game(dimension=2, feedback="both"), "feedback"),
    ("game-truthful", lambda: Game(dimension=2, truthful=2), "truthful"),
    ("sim-horizon-0", lambda: simulate(Game(dimension=2), "sa-ols", 0), "horizon"),
    ("sim-horizon-big", lambda: simulate(Game(dimension=2), "sa-ols", 10**13), "horizon"),
    ("sim-horizon-float", lambda: simulate(Game(dimension=2), "sa-ols", 10.0), "horizon"),
    ("sim-seeds-0", lambda: simulate(Game(dimension=2), "sa-ols", 5, seeds=0), "seeds"),
    ("sim-seeds-empty", lambda: simulate(Game(dimension=2), "sa-ols", 5, seeds=[]), "seeds"),
    ("sim-seeds-neg", lambda: simulate(Game(dimension=2), "sa-ols", 5, seeds=[-1]), "seed"),
    ("sim-seeds-dup", lambda: simulate(Game(dimension=2), "sa-ols", 5, seeds=[1, 1]), "seeds"),
    ("sim-seeds-big", lambda: simulate(Game(dimension=2), "sa-ols", 5, seeds=[2**63]), "seed"),
    ("sim-threads-0", lambda: simulate(Game(dimension=2), "sa-ols", 5, threads=0), "threads"),
    ("sim-per-decade-0", lambda: simulate(Game(dimension=2), "sa-ols", 5, per_decade=0),
     "per_decade"),
    ("sim-per-decade-big", lambda: simulate(Game(dimension=2), "sa-ols", 5, per_decade=10**6),
     "per_decade"),
    ("sim-memory", lambda: simulate(Game(dimension=500), "sa-ols", 5, max_memory=1000),
     "max_memory"),
    ("sim-no-learners", lambda: simulate(Game(dimension=2), [], 5), "learners"),
    ("sim-unknown-learner", lambda: simulate(Game(dimension=2), "nope", 5), "learner"),
    ("make-unknown", lambda: make_learner("nope"), "learner must be one of"),
    ("reset-d0", lambda: make_learner("sa-ols").reset(0), "d must be an integer >= 1"),
    ("reset-d-float", lambda: make_learner("sa-ols").reset(2.0), "d must be an integer >= 1"),
    ("reset-rng-str", lambda: _learner_after_reset().reset(2, "seed"), "rng must be"),
    ("reset-rng-neg", lambda: _learner_after_reset().reset(2, -1), "rng must be"),
    ("reset-rng-float", lambda: _learner_after_reset().reset(2, 1.5), "rng must be"),
    ("reset-rng-legacy", lambda: _learner_after_reset().reset(2, np.random.RandomState(0)),
     "rng must be"),
    ("update-accepted-str", _update([0.1, 0.2], "no", None), "accepted must be True or False"),
    ("update-accepted-int", _update([0.1, 0.2], 1, 0.5), "accepted must be True or False"),
    ("update-accepted-none", _update([0.1, 0.2], None, None), "accepted must be True or False"),
    ("update-unobservable", _update([0.1, 0.2], False, 123.0), "reward must be None when"),
    ("update-reward-nan", _update([0.1, 0.2], True, math.nan), "reward"),
    ("update-reward-inf", _update([0.1, 0.2], True, math.inf), "reward"),
    ("update-reward-str", _update([0.1, 0.2], True, "0.5"), "reward"),
    ("update-x-shape", _update([0.1, 0.2, 0.3], True, 0.5), "x_obs must have shape (2,)"),
    ("update-x-nan", _update([0.1, math.nan], True, 0.5), "x_obs must be finite"),
    ("update-x-matrix", _update([[0.1, 0.2]], True, 0.5), "x_obs must have shape (2,)"),
    ("act-x-shape", lambda: _learner_after_reset().act([1.0]), "x_obs must have shape (2,)"),
    ("act-x-inf", lambda: _learner_after_reset().act([1.0, math.inf]), "x_obs must be finite"),
    ("etc-rounds-0", lambda: make_learner("etc", exploration_rounds=0, horizon=100, delta=0.1,
                                          r0=0.0, feedback="apple").reset(2, 0),
     "exploration_rounds"),
    ("sa-ols-delta", lambda: make_learner("sa-ols", delta=-0.1, r0=0.0,
                                          feedback="apple").reset(2, 0), "delta"),
    ("sa-ols-feedback", lambda: make_learner("sa-ols", delta=0.1, r0=0.0,
                                             feedback="nope").reset(2, 0), "feedback"),
    # issue 20: numerics (the learners' input bound, 1e9: beyond it, refused before any kernel)
    ("update-x-big", _update([0.1, 2e9], True, 0.5),
     "x_obs[1] must be at most 1e+09 in magnitude (the learner's input bound), got 2000000000.0"),
    ("update-x-huge", _update([-1e300, 0.1], True, 0.5), "x_obs[0] must be at most 1e+09"),
    ("update-reward-big", _update([0.1, 0.2], True, 1e308),
     "reward must be at most 1e+09 in magnitude (the learner's input bound), got 1e+308"),
    ("update-reward-np-big", _update([0.1, 0.2], True, np.float64(-2e9)),
     "reward must be at most 1e+09 in magnitude (the learner's input bound), got -2000000000.0"),
    ("act-x-big", lambda: _learner_after_reset().act([1e10, 0.0]), "x_obs[0] must be at most"),
    ("decide-x-big", lambda: _learner_after_reset().decide([0.1, -3e9]),
     "x_obs[1] must be at most 1e+09 in magnitude (the learner's input bound), got -3000000000.0"),
    ("record-x-big", lambda: (lr := _learner_after_reset()).record(
        [3e9, 0.0], "a", True, lr.publish().version, 1.0), "x_obs[0] must be at most 1e+09"),
    ("report-outcome-big", lambda: (lr := _learner_after_reset()).report(
        lr.decide([0.1, 0.2]).id, 1e308),
     "outcome must be at most 1e+09 in magnitude (the learner's input bound), got 1e+308"),
    ("report-outcome-neg-big", lambda: (lr := _learner_after_reset()).report(
        lr.decide([0.1, 0.2]).id, -1e10), "outcome must be at most 1e+09"),
    ("report-outcome-np-big", lambda: (lr := _learner_after_reset()).report(
        lr.decide([0.1, 0.2]).id, np.float64(5e9)), "outcome must be at most 1e+09"),
    ("sa-ols-r0-big", lambda: make_learner("sa-ols", delta=0.1, r0=1e10,
                                           feedback="apple").reset(2, 0),
     "r0 must be at most 1e+09 in magnitude (the learner's input bound), got 10000000000.0"),
    ("sa-ols-delta-big", lambda: make_learner("sa-ols", delta=1e12, r0=0.0,
                                              feedback="apple").reset(2, 0),
     "delta must be at most 1e+09"),
    ("sa-ols-agents-tremble-big", lambda: make_learner(
        "sa-ols", delta=0.1, r0=0.0, feedback="apple",
        agents=TremblingHand(tremble=1e10)).reset(2, 0), "agents.tremble must be at most 1e+09"),
    ("oracle-theta-big", lambda: make_learner("oracle", theta1=[1e10, 0.0], delta=0.1, r0=0.0,
                                              feedback="apple").reset(2, 0),
     "theta1[0] must be at most 1e+09"),
]


@pytest.mark.parametrize("what, call, expected", API, ids=[a[0] for a in API])
def test_api_bad_input_raises_value_error(what, call, expected):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert expected in message and "\n" not in message, message


def test_every_learner_refuses_an_unobservable_reward():
    """Under apple tasting a rejected round's reward cannot be seen: every learner refuses it."""
    for name in LEARNERS:
        inst = Game(dimension=2, delta=0.1).instance(0)
        learner = make_learner(name).bind(inst, 100).reset(2, 0)
        with pytest.raises(ValueError, match="reward must be None when accepted is False"):
            learner.update([0.1, 0.2], False, 1.0)
        with pytest.raises(ValueError, match="accepted must be True or False"):
            learner.update([0.1, 0.2], "no", None)


def test_the_table_holds_at_least_150_bad_inputs():
    assert len(CLI) + len(SPECS) + len(API) + 2 >= 150


def test_an_int_seed_resets_a_randomized_learner():
    """``reset(rng=0)`` used to pass and then fail inside numba for randomized learners."""
    for name in ("lin-ts", "epsilon-greedy", "exp3-sae"):
        learner = make_learner(name).bind(Game(dimension=2).instance(0), 100)
        a, b = learner.clone().reset(2, 7), learner.clone().reset(2, 7)
        for x in ([0.3, 0.1], [0.5, -0.2], [0.1, 0.6]):
            assert a.policy() == b.policy()
            took = a.act(x)
            assert b.act(x) == took
            a.update(x, took, 0.5 if took else None)
            b.update(x, took, 0.5 if took else None)
