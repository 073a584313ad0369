"""Bad input, table-driven: every row gets one clear line naming the field, before any work.

From the command line: exit status 2, one line on stderr starting ``sat: error:`` that contains
the expected text, no traceback, and nothing written. From the API: a ``ValueError`` (or
``SpecError``, a ``ValueError``) whose message contains the expected text. The README's promise
("bad flags get one line") and the promise of at least 150 bad inputs rest on this table.
"""

from __future__ import annotations

import io
import json
import math
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from strategic_apple_tasting import Game, persistence, simulate
from strategic_apple_tasting.cli.main import main
from strategic_apple_tasting.experiments.spec import check_spec, load_spec
from strategic_apple_tasting.game import (
    DataContexts,
    HeterogeneousBudgets,
    OrthogonalTraps,
    SubsetGaming,
)
from strategic_apple_tasting.game.agents import TremblingHand
from strategic_apple_tasting.learners import LEARNERS, make_learner
from strategic_apple_tasting.scenarios import (
    data_game,
    from_lending,
    load_dataset,
    load_fico,
    load_taiwan_credit,
    run_lending,
)
from tests import saved
from tests.helpers import closed_port

NOT_RESULTS = "is not a sweep directory nor a run's output"
RUN = ["run", "-l", "sa-ols", "-d", "2", "-T", "50", "--seeds", "1"]
OUT = ["-o", "out"]


#: ``sat serve`` with a learner that can start (the lender's service's rows add one bad flag each).
#: FICO's four groups, each with a budget.
FICO_BUDGETS = "white=0.5,black=0.3,hispanic=0.3,asian=0.1"
SERVE = ["serve", "-d", "2", "--param", "delta=0.1", "--param", "r0=0"]


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
    (["sweep", "ok.toml", "-o", "sw", "--scheduler", "tcp://127.0.0.1:CLOSED"],
     "--scheduler: cannot reach a Dask scheduler at 'tcp://127.0.0.1:CLOSED'"),
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
    # lending CSVs that used to run silently wrong
    (["lending", "--csv", "huge.csv", "--label", "bad", "--default-value", "1", "--features",
      "income", "-T", "5"], "--features: column 'income' has 1 value(s) beyond ±1e+100"),
    (["lending", "--csv", "one-class.csv", "--label", "bad", "--default-value", "0",
      "--features", "income", "-T", "5"], "--label: column 'bad' holds only the value 0"),
    (["lending", "--csv", "twice.csv", "--label", "bad", "--default-value", "1", "--features",
      "income", "-T", "5"], "names column 'income' twice"),
    # the decision service (CLOSED: a loopback port nothing listens on, picked as the row runs)
    (["serve", "play", "--url", "http://127.0.0.1:CLOSED", "-d", "2", "--key", "sat_0a_b"],
     "--key puts the API key where `ps` shows it to every user"),
    (["serve", "play", "--url", "http://127.0.0.1:CLOSED", "-d", "2", "--key-file", "missing.key"],
     "--key-file 'missing.key' does not exist"),
    (["serve", "play", "--url", "http://127.0.0.1:CLOSED", "-d", "2", "--key-file", "a-dir"],
     "--key-file 'a-dir' is a directory"),
    (["serve", "play", "--url", "http://127.0.0.1:CLOSED", "-d", "2", "--key-file", "a-file"],
     "--key-file 'a-file' does not hold an API key"),
    (["serve", "-d", "2", "--param", "delta=0.1", "--param", "r0=0", "--body-timeout", "0",
      "--database", "sqlite:///a-dir/x.db"], "body_timeout must be a number of seconds"),
    (["serve", "-d", "2", "--param", "delta=0.1", "--param", "r0=0", "--body-timeout", "nan",
      "--database", "sqlite:///a-dir/x.db"], "body_timeout must be a number of seconds"),
    # (a password goes in a file, not on the command line, where it warns: pg.url is 0600)
    (["serve", "keys", "list", "--database-file", "pg.url"],
     "database 'postgresql://u:***@127.0.0.1:CLOSED/db' cannot be used: OperationalError"),
    (["serve", "check", "--database-file", "pg.url"],
     "database 'postgresql://u:***@127.0.0.1:CLOSED/db' cannot be used: OperationalError"),
    (["serve", "--database-file", "postgres.url", "keys", "list"],
     "database 'postgres://u:***@127.0.0.1:CLOSED/db': the service runs on sqlite or postgresql"),
    # access: the database URL, keys' scopes, expiry and files, rate limits, backups
    (["serve", "keys", "list", "--database-file", "missing.url"],
     "--database-file 'missing.url' does not exist"),
    (["serve", "keys", "list", "--database-file", "a-dir"],
     "--database-file 'a-dir' is a directory, not a file"),
    (["serve", "keys", "list", "--database-file", "two-lines.url"],
     "--database-file 'two-lines.url' must hold one line, the database URL (sqlite:///FILE or "
     "postgresql://USER:PASSWORD@HOST/NAME), got 2 lines"),
    (["serve", "keys", "list", "--database", "sqlite:///m.db", "--database-file", "pg.url"],
     "give the database as --database URL or --database-file FILE, not both"),
    (["serve", "keys", "create", "--name", "k", "--scope", "decide,publish",
      "--database", "sqlite:///k.db"], "--scope must name scopes from decide, report, explain, "
     "admin joined by commas ('publish' is not one), got 'decide,publish'"),
    (["serve", "keys", "create", "--name", "k", "--expires", "-3",
      "--database", "sqlite:///k.db"],
     "--expires must be a number of days from 0 to 36,600 (exclusive of 0), got '-3'"),
    (["serve", "keys", "create", "--name", "k", "--expires", "2001-01-01",
      "--database", "sqlite:///k.db"], "--expires '2001-01-01' is in the past"),
    (["serve", "keys", "create", "--name", "k", "--expires", "soon",
      "--database", "sqlite:///k.db"], "--expires must be a number of days or an ISO 8601 date"),
    (["serve", "keys", "create", "--name", "k", "--out", "a-file",
      "--database", "sqlite:///k.db"], "--out 'a-file' exists: give --force to replace it"),
    (["serve", "keys", "create", "--name", "k", "--out", "a-dir", "--force",
      "--database", "sqlite:///k.db"], "--out 'a-dir' is a directory: give a file"),
    (["serve", "keys", "access-log", "--key", "nope", "--database", "sqlite:///m.db"],
     "file 'm.db' does not exist"),
    ([*SERVE, "--rate-limit", "-1"],
     "rate_limit must be requests a second per key from 0 (no limit) to 1e6, got -1.0"),
    ([*SERVE, "--rate-limit", "nan"],
     "rate_limit must be requests a second per key from 0 (no limit) to 1e6, got nan"),
    (["serve", "backup", "--out", "copy.db", "--database", "postgresql://u@127.0.0.1:CLOSED/db"],
     "sat serve backup copies a SQLite database; back up PostgreSQL with pg_dump"),
    (["serve", "backup", "--out", "copy.db", "--database", "sqlite:///m.db"],
     "file 'm.db' does not exist"),
    (["serve", "backup", "--out", "a-file", "--database", "sqlite:///m.db"],
     "--out 'a-file' exists: give --force to replace it"),
    # numerics (the learners' input bound, 1e9: r0 is an outcome, delta a distance)
    (_run("--r0", "1e10"),
     "r0 must be at most 1e+09 in magnitude (the learner's input bound), got 10000000000.0"),
    (_run("--delta", "2e9"), "delta must be at most 1e+09 in magnitude"),
    # claims
    (["reproduce", "--parts", "nope"], "--parts must name bundled parts (stochastic, bounds"),
    (["reproduce", "--parts", ","], "--parts must name at least one bundled part, got ','"),
    (["run", "-l", "sa-ols", "-d", "1", "-T", "50", "--contexts", "orthogonal-traps", *OUT],
     "orthogonal-traps needs dimension >= 2 (one plane at least; at dimension 1 use "
     "greedy-trap), got dimension=1"),
    (_run("--contexts", "orthogonal-traps", "--r0", "0.1"),
     "orthogonal-traps needs r0 = 0 under apple feedback (its points' gains are measured from "
     "0), got r0=0.1"),
    # lending game
    ([*RUN[:3], "-T", "5", "--data", "nope", *OUT], "argument --data: invalid choice: 'nope'"),
    ([*RUN[:3], "-T", "5", "--data", "fico", "-d", "3", *OUT],
     "dimension must be 2 for data='fico' (its features, the intercept included)"),
    ([*RUN[:3], "-T", "5", "--data", "fico", "--gameable", "income", *OUT],
     "gameable: no feature 'income'; the FICO rows' features: score"),
    ([*RUN[:3], "-T", "5", "--data", "german-credit", "--gameable", "salary", *OUT],
     "gameable: no column 'salary'; columns: "),
    ([*RUN[:3], "-T", "5", "--data", "taiwan-credit", "--gameable", "ID", *OUT],
     "gameable: no column 'ID'; columns: LIMIT_BAL, SEX"),
    ([*RUN[:3], "-T", "5", "--data", "taiwan-credit", "-d", "3", *OUT],
     "dimension must be 29 for data='taiwan-credit' (its features, the intercept included)"),
    ([*RUN[:3], "-T", "5", "--data", "fico", "--agents", "trembling", *OUT],
     "agents is fixed by the data set"),
    ([*RUN[:3], "-T", "5", "--data", "fico", "--contexts", "mixture", *OUT],
     "contexts is fixed by the data set"),
    ([*RUN[:3], "-T", "5", "--data", "fico", "--feedback", "bandit", *OUT],
     "feedback must be apple with data='fico'"),
    ([*RUN[:3], "-T", "5", "--data", "fico", "--rewards", "both", *OUT],
     "argument --rewards: invalid choice: 'both'"),
    ([*RUN[:3], "-T", "5", "--data", "fico", "--sigma", "-1", *OUT],
     "sigma must be a finite number >= 0, got -1.0"),
    ([*RUN[:3], "-T", "5", "--data", "fico", "--truthful", "1.5", *OUT],
     "truthful must be a probability in [0, 1], got 1.5"),
    (_run("--rewards", "recorded"), "rewards applies only to a data set's game"),
    (_run("--gameable", "cash"), "gameable applies only to a data set's game"),
    (["lending", "--data", "fico", "--csv", "loans.csv", "-T", "5"],
     "--data and --csv are two sources of applicants: give one"),
    (["lending", "--data", "nope", "-T", "5"], "argument --data: invalid choice: 'nope'"),
    (["lending", "--data", "fico", "--gameable", "income", "-T", "5"],
     "gameable: no feature 'income'"),
    (["lending", "--gameable", "salary", "-T", "5"], "gameable: no column 'salary'"),
    (["lending", "--data", "taiwan-credit", "--gameable", "BILL_AMT2,age", "-T", "5"],
     "gameable: no column 'age'"),
    (["lending", "--data", "taiwan-credit", "--delta-by-group", "male=0.5", "-T", "5"],
     "delta by group must give a budget to every group (male, female), missing 'female'"),
    (["lending", "--data", "fico", "--delta", "0.5", "--delta", "0.5", "-T", "5"],
     "--delta must not repeat a budget, got [0.5, 0.5]"),
    (["lending", "--data", "fico", "--truthful", "2", "-T", "5"],
     "truthful must be a probability in [0, 1], got 2.0"),
    (["lending", "--data", "fico", "--threads", "0", "-T", "5"],
     "--threads must be an integer >= 1, got '0'"),
    (["lending", "--data", "fico", "--rewards", "both", "-T", "5"],
     "argument --rewards: invalid choice: 'both'"),
    (["lending", "--data", "fico", "-l", "nope", "-T", "5"],
     "--learner/-l: learner must be one of"),
    # logistic learners (the rewards of the two outcomes, the prior)
    (["serve", "-l", "sa-logistic", "-d", "2", "--param", "delta=0.1", "--param", "r0=0",
      "--param", "repaid=-2", "--database", "sqlite:///a-dir/x.db"],
     "repaid must be larger than defaulted (the reward of a repaid loan above a defaulted "
     "one's), got repaid=-2 and defaulted=-1.0"),
    (["serve", "-l", "offset-logistic", "-d", "2", "--param", "delta=0.1", "--param", "r0=0",
      "--param", "ridge=-1", "--database", "sqlite:///a-dir/x.db"],
     "ridge must be a finite number >= 0, got -1"),
    # the service as a lender runs it (nothing is written: no database is made)
    ([*SERVE, "--min-interval", "-1"], "min_interval must be a number from 0 to 1e9, got -1.0"),
    ([*SERVE, "--warm-cap", "-1"], "--warm-cap must be an integer >= 0"),
    ([*SERVE, "--retain-days", "0"],
     "retain_days must be a number from 0 (excluded) to 1e9, got 0.0"),
    ([*SERVE, "--publish", "outcomes:5,outcomes:6"],
     "publish joins at most one outcomes:K and one period:SECONDS with a comma"),
    ([*SERVE, "--publish", "manual,period:5"], "publish joins at most one outcomes:K"),
    ([*SERVE, "--publish", "period:0"], "SECONDS a finite number >= 1), got 'period:0'"),
    ([*SERVE, "--publish", "period:1e-9"],
     "publish must be one of manual, outcomes:K, period:SECONDS (K an integer >= 1, SECONDS a "
     "finite number >= 1), got 'period:1e-9'"),
    ([*SERVE, "--shadow", "sa-ols", "--shadow-param", "delta=-1", "--shadow-param", "r0=0"],
     "shadow_params of shadow learner 'sa-ols': delta must be a finite number >= 0, got -1"),
    ([*SERVE, "--start-rule", "deep.json"],
     "--start-rule 'deep.json' is not a rule: its JSON nests deeper than Python reads (a rule "
     'is {"beta": [a weight per feature], "threshold": c})'),
    ([*SERVE, "--start-rule", "long-number.json"],
     "--start-rule 'long-number.json' is not a rule: it holds a number of more than 4,300 "
     "digits"),
    ([*SERVE, "--start-log", "empty.csv"],
     "--start-log 'empty.csv' is empty: it needs a header row naming a column per feature (x1, "
     "x2), accepted and outcome"),
    ([*SERVE, "--shadow", "nope"], "--shadow: learner must be one of"),
    ([*SERVE, "--shadow-param", "delta=0.1"], "shadow_params given without a shadow learner"),
    ([*SERVE, "--shadow", "sa-ols"], "shadow_params.delta of shadow learner 'sa-ols' must be "
     "given"),
    ([*SERVE, "--start-rule", "missing.json"], "--start-rule 'missing.json' is not a file"),
    ([*SERVE, "--start-rule", "a-file"], "--start-rule 'a-file' is not JSON"),
    ([*SERVE, "--start-rule", "rule-3.json"], "beta must be a list of 2 finite numbers"),
    ([*SERVE, "--start-rule", "a-file", "--start-log", "a-file"],
     "argument --start-log: not allowed with argument --start-rule"),
    ([*SERVE, "--start-learner", "a-file"], "--start-learner 'a-file'"),
    ([*SERVE, "--start-log", "a-file"], "--start-log 'a-file' must end in .csv or .parquet"),
    ([*SERVE, "--start-log", "history.csv"], "has no column 'x2'"),
    ([*SERVE, "--start-log", "history-twice.csv"],
     "--start-log 'history-twice.csv' names column 'x1' twice"),
    ([*SERVE, "--features", "a,outcome"], "features names 'outcome', a column of the "
     "service's own"),
    (["serve", "settings", "sqlite:///missing.db"], "file 'missing.db' does not exist"),
    (["serve", "export", "--out", "earlier-export", "--database", "sqlite:///missing.db"],
     "--out 'earlier-export' holds decisions.csv already (an earlier export's?): give "
     "--force to overwrite it"),
    (["serve", "check", "--database", "sqlite:///missing.db"],
     "file 'missing.db' does not exist (start `sat serve` on it first)"),
    (["serve", "keys", "list", "--database", "sqlite:///missing.db"],
     "file 'missing.db' does not exist"),
    (["serve", "export", "--out", "x", "--database", "sqlite:///missing.db"],
     "file 'missing.db' does not exist"),
    (["serve", "export", "--out", "a-file", "--database", "sqlite:///missing.db"],
     "--out 'a-file' is a file: give a folder"),
    (["serve", "export", "--out", "x", "--since", "soon", "--database", "sqlite:///m.db"],
     "--since must be an ISO 8601 time"),
    (["serve", "export", "--out", "x", "--since", "-inf", "--database", "sqlite:///m.db"],
     "--since must be a finite number of unix seconds, got '-inf'"),
    ([*RUN[:3], "-T", "5", "--data", "german-credit", "--gameable", "", *OUT],
     "gameable must be feature names separated by ',' (or 'none' for none; leave it out for "
     "the data set's own), got ''"),
    (["run", "-l", "sa-ols", "--data", "fico", "-T", "50", "--delta-by-group",
      "white=1e308,black=0.3,hispanic=0.3,asian=0.1", *OUT],
     "delta by group: learners are told the largest budget, and delta must be at most 1e+09 in "
     "magnitude (the learner's input bound), got 1e+308"),
    (["lending", "--data", "fico", "-T", "50", "--delta-by-group",
      "white=1e308,black=0.3,hispanic=0.3,asian=0.1"],
     "delta by group: learners are told the largest budget, and delta must be at most 1e+09"),
    (["lending", "--data", "fico", "--estimate-delta", "-l", "oracle", "-T", "50"],
     "--estimate-delta recommends a learner that estimates the budget; the oracle knows it (a "
     "benchmark, never recommended): add another with -l, got -l oracle"),
    # sat compile
    (["compile", "--workers", "0"], "--workers must be an integer >= 1, got '0'"),
    (["compile", "--workers", "two"], "--workers must be an integer >= 1, got 'two'"),
    # per-group budgets
    (["run", "-l", "sa-ols", "--data", "fico", "-T", "50", "--delta-by-group", "white=0.5",
      *OUT], "delta by group must give a budget to every group (white, black, hispanic, "
     "asian), missing 'black'"),
    (["run", "-l", "sa-ols", "--data", "fico", "-T", "50", "--delta-by-group",
      "white=0.5,black=-1,hispanic=0.3,asian=0.1", *OUT],
     "delta of group 'black' must be a finite number >= 0, got -1.0"),
    (["run", "-l", "sa-ols", "--data", "fico", "-T", "50", "--delta-by-group",
      "white=0.5,black=nan,hispanic=0.3,asian=0.1", *OUT],
     "delta of group 'black' must be a finite number >= 0, got nan"),
    (["run", "-l", "sa-ols", "--data", "fico", "-T", "50", "--delta-by-group",
      "men=0.5,white=0.5,black=0.3,hispanic=0.3,asian=0.1", *OUT],
     "delta by group names an unknown group 'men'; the groups are: white, black, hispanic, "
     "asian"),
    (["run", "-l", "sa-ols", "--data", "fico", "-T", "50", "--delta-by-group", "white", *OUT],
     "delta-by-group must be group=budget pairs separated by ','"),
    (["run", "-l", "sa-ols", "--data", "fico", "-T", "50", "--delta-by-group",
      "white=0.5,white=0.4", *OUT], "delta-by-group gives group 'white' twice"),
    (["run", "-l", "sa-ols", "--data", "fico", "-T", "50", "--delta", "0.3",
      "--delta-by-group", FICO_BUDGETS, *OUT],
     "delta and delta-by-group both give the budget: give one"),
    ([*RUN, "--delta-by-group", "a=0.1", *OUT],
     "delta-by-group applies only to a data set's game"),
    (["lending", "--data", "fico", "--delta", "0.3", "--delta-by-group", FICO_BUDGETS],
     "--delta and --delta-by-group both give the budget: give one"),
    (["lending", "--data", "fico", "--delta-by-group", "white=0.5,black=0.3"],
     "delta by group must give a budget to every group (white, black, hispanic, asian), "
     "missing 'hispanic'"),
]


@pytest.fixture
def fixtures(tmp_path, monkeypatch):
    """A directory with the files the rows refer to; returns a snapshot function."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("not a directory\n")
    (tmp_path / "a-dir").mkdir()
    for name, url in (("pg.url", "postgresql://u:hunter2@127.0.0.1:CLOSED/db"),
                      ("postgres.url", "postgres://u:hunter2@127.0.0.1:CLOSED/db"),
                      ("two-lines.url", "sqlite:///a.db\nsqlite:///b.db")):
        (tmp_path / name).write_text(url + "\n")
        (tmp_path / name).chmod(0o600)  # (a password in a file others may read warns)
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
    (tmp_path / "rule-3.json").write_text('{"beta": [1, 2, 3], "threshold": 0}')
    (tmp_path / "deep.json").write_text('{"beta": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (tmp_path / "long-number.json").write_text('{"beta": [1, 2], "threshold": ' + "9" * 5000
                                               + "}")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "history.csv").write_text("x1,accepted,outcome\n0.1,true,1.0\n")
    (tmp_path / "history-twice.csv").write_text("x1,x1,accepted,outcome\n0.1,0.2,true,1.0\n")
    (tmp_path / "earlier-export").mkdir()
    (tmp_path / "earlier-export" / "decisions.csv").write_text("id\n")
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
    port = str(closed_port())
    argv = [a.replace("127.0.0.1:CLOSED", f"127.0.0.1:{port}") for a in argv]
    expected = expected.replace("127.0.0.1:CLOSED", f"127.0.0.1:{port}")
    for name in ("pg.url", "postgres.url"):  # the URL files name the same closed port
        path = Path(name)
        path.write_text(path.read_text().replace("127.0.0.1:CLOSED", f"127.0.0.1:{port}"))
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
    # numerics (the learners' input bound, 1e9)
    (_game(r0=1e10), "learners[0] (sa-ols): r0 must be at most 1e+09 in magnitude"),
    (_learner(delta=5e9), "learners[0] (sa-ols): delta must be at most 1e+09 in magnitude"),
    # claims
    (_learner(warmup=0), "learners[0] (sa-ols)"),
    (_game(contexts="orthogonal-traps", dimension=1), "game"),
    # lending game
    ({**BASE, "game": {"data": "nope"}},
     "game.data: data must be one of german-credit, fico, fico-applicants, taiwan-credit, "
     "got 'nope'"),
    ({**BASE, "game": {"data": 3}}, "game.data must be a string, got 3"),
    ({**BASE, "game": {"data": "fico", "dimension": 3}},
     "game.dimension: dimension must be 2 for data='fico'"),
    ({**BASE, "game": {"data": "fico", "gameable": ["score", "x"]}},
     "game.gameable[1]: gameable: no feature 'x'"),
    ({**BASE, "game": {"data": "fico", "agents": "trembling"}},
     "game.agents: agents is fixed by the data set"),
    ({**BASE, "game": {"data": "fico", "rewards": "both"}},
     "game.rewards: rewards must be one of linear, recorded, got 'both'"),
    ({**BASE, "game": {"data": "fico", "feedback": "bandit"}},
     "game.feedback: feedback must be apple with data='fico'"),
    ({**BASE, "game": {"data": "fico", "delta": [0.2, -1.0]}},
     "game.delta[1]: delta must be a finite number >= 0"),
    (_game(rewards="recorded"), "game.rewards: rewards applies only to a data set's game"),
    (_game(gameable="cash"), "game.gameable: gameable applies only to a data set's game"),
    ({**BASE, "game": {"delta": 0.1}}, "game.dimension must be given (or game.data)"),
    # logistic learners (the rewards of the two outcomes, the prior)
    (_spec(learners=[{"name": "sa-logistic", "repaid": -2.0}]),
     "learners[0] (sa-logistic): repaid must be larger than defaulted (the reward of a repaid "
     "loan above a defaulted one's), got repaid=-2.0 and defaulted=-1.0"),
    (_spec(learners=[{"name": "naive-logistic", "defaulted": "low"}]),
     "learners[0] (naive-logistic): defaulted must be a finite number, got 'low'"),
    (_spec(learners=[{"name": "offset-logistic", "ridge": -1.0}]),
     "learners[0] (offset-logistic): ridge must be a finite number >= 0, got -1.0"),
    # per-group budgets
    ({**BASE, "game": {"data": "fico", "delta_by_group": [FICO_BUDGETS, "white=0.5"]}},
     "game.delta_by_group[1]: delta by group must give a budget to every group"),
    ({**BASE, "game": {"data": "fico", "delta_by_group": 0.5}},
     "game.delta_by_group must be a string, got 0.5"),
    ({**BASE, "game": {"data": "german-credit", "delta_by_group": FICO_BUDGETS}},
     "game.delta_by_group: delta by group names an unknown group 'white'"),
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
def _rows(**changes):
    """Three rows of two features with their outcomes, some field changed."""
    fields = dict(rows=np.array([[1.0, -1.0], [1.0, 0.0], [1.0, 1.0]]),
                  repaid=np.array([0.0, 1.0, 1.0]), if_repaid=np.full(3, 0.2),
                  if_defaulted=np.full(3, -1.0))
    return DataContexts(**{**fields, **changes})


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
    ("update-x-text", _update(["0.1", "a"], True, 0.5),
     "x_obs must be numbers (integers or floats), got text: ['0.1', 'a']"),
    ("decide-x-complex", lambda: _learner_after_reset().decide([1 + 2j, 0.1]),
     "x_obs must be numbers (integers or floats), got complex numbers: [(1+2j), (0.1+0j)]"),
    ("act-x-bool", lambda: _learner_after_reset().act([True, False]),
     "x_obs must be numbers (integers or floats), got booleans: [True, False]"),
    ("env-action-complex", lambda: _env_step([1 + 1j, 0.0, 0.0]),
     "action must be numbers (integers or floats), got complex numbers: [(1+1j), 0j, 0j]"),
    ("act-x-shape", lambda: _learner_after_reset().act([1.0]), "x_obs must have shape (2,)"),
    ("act-x-inf", lambda: _learner_after_reset().act([1.0, math.inf]), "x_obs must be finite"),
    ("etc-rounds-0", lambda: make_learner("etc", exploration_rounds=0, horizon=100, delta=0.1,
                                          r0=0.0, feedback="apple").reset(2, 0),
     "exploration_rounds"),
    ("sa-ols-delta", lambda: make_learner("sa-ols", delta=-0.1, r0=0.0,
                                          feedback="apple").reset(2, 0), "delta"),
    ("sa-ols-feedback", lambda: make_learner("sa-ols", delta=0.1, r0=0.0,
                                             feedback="nope").reset(2, 0), "feedback"),
    # numerics (the learners' input bound, 1e9: beyond it, refused before any kernel)
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
    # saved learners (tests/saved.py: learners saved mid-run, edited by hand with the
    # digest recomputed, loaded as "the file"). Which learner the file may name:
    ("load-learner-import", lambda: _load("sa-ols", learner="this:x"),
     "the file: learner 'this:x' is not a registered learner, and the caller did not allow it "
     "(nothing was imported)"),
    ("load-learner-number", lambda: _load("sa-ols", learner=3),
     "the file: learner must be a learner's name, got 3"),
    ("load-allow-str", lambda: saved.load(saved.saved("plain"), allow="tests.saved:PlainGreedy"),
     "allow must be a list of learner classes or import paths"),
    ("load-allow-instance", lambda: saved.load(saved.saved("plain"), allow=[object]),
     "allow must hold learner classes or import paths"),
    # the file itself
    ("load-not-bytes", lambda: persistence.loads("text", "the file"),
     "the file must be bytes, got str"),
    ("load-format-bool", lambda: _load("sa-ols", format_version=True),
     "the file is in saved-learner format True"),
    ("load-member-twice", lambda: saved.load(_twice("state.counts.npy")),
     "the file is not a saved learner (a member's name appears twice)"),
    ("load-member-stray", lambda: saved.load(_member("notes.txt", b"hello")),
     "the file is not a saved learner (it holds 'notes.txt', which is neither meta.json nor an "
     "array)"),
    ("load-array-unused", lambda: saved.load(_member("extra.npy", saved.npy(np.zeros(3)))),
     "the file: it holds arrays no field uses: extra"),
    ("load-npy-truncated", lambda: saved.load(_member("state.counts.npy", saved.npy(
        np.zeros(7, dtype=np.int64))[:-8])),
     "the file is not a saved learner (state.counts.npy is not an array file: its header needs "
     "56 bytes of data, it has 48)"),
    ("load-npy-huge-shape", lambda: saved.load(_member("state.counts.npy", _huge_header())),
     "state.counts.npy is not an array file: its header needs 8,000,000,000,000 bytes of data"),
    ("load-npy-bomb", lambda: saved.load(_member("state.counts.npy", saved.npy(np.zeros(10**6)))),
     "the file: state.counts.npy declares 8,000,128 bytes inflated, more than the 16,672 its "
     "field can need (the largest array of a SAOLS of d = 2 takes 288 bytes)"),
    ("load-npy-objects", lambda: saved.load(_member("state.counts.npy", _pickled())),
     "state.counts.npy is not an array file: it holds Python objects"),
    # (a plausible edit: the learner, its params and d, checked before the digest, hold)
    ("load-digest", lambda: _load_meta("sa-ols", lambda m: m["desk"].update(next_id=12345),
                                       digest="keep"),
     "the file is corrupt: its contents do not match their digest (sha256)"),
    ("load-digest-missing", lambda: _load("sa-ols", digest="none"),
     "the file is corrupt: its contents do not match their digest (sha256)"),
    # meta.json
    ("load-meta-missing", lambda: _load("sa-ols", drop="rng"),
     "the file: meta.json is missing 'rng'"),
    ("load-meta-extra", lambda: _load("sa-ols", extra=1),
     "the file: meta.json has an unknown key 'extra'"),
    ("load-written-by", lambda: _load("sa-ols", written_by=3),
     "the file: written_by must be a release, got 3"),
    ("load-params-list", lambda: _load("sa-ols", params=[1, 2]),
     "the file: params must be an object with keys delta, r0, feedback, agents, "
     "accept_when_locked, warmup, got [1, 2]"),
    ("load-params-extra", lambda: _load_meta("sa-ols", lambda m: m["params"].update(bogus=1)),
     "the file: params has an unknown key 'bogus'"),
    ("load-params-missing", lambda: _load_meta("sa-ols", lambda m: m["params"].pop("r0")),
     "the file: params is missing 'r0'"),
    ("load-params-delta", lambda: _load_meta("sa-ols", lambda m: m["params"].update(delta=-1)),
     "the file: params do not make a sa-ols learner (ValueError: delta must be a finite "
     "number >= 0, got -1)"),
    ("load-params-agents", lambda: _load_meta("sa-ols", lambda m: m["params"].update(
        agents={"__agents__": "nope", "fields": {}})),
     "the file: params: agent model 'nope' is unknown"),
    ("load-params-agents-fields", lambda: _load_meta("sa-ols", lambda m: m["params"].update(
        agents={"__agents__": "lazy", "fields": {"speed": 1}})),
     "the file: params: agent model 'lazy' has fields delta, truthful, got {'speed': 1}"),
    ("load-params-array-objects", lambda: _load_meta("oracle", lambda m: m["params"].update(
        theta1={"__array__": [0.6, 0.8], "dtype": "object"})),
     "the file: params: an array must be {'__array__': [...], 'dtype': a numeric dtype}"),
    ("load-d-str", lambda: _load("sa-ols", d="2"), "the file: d must be an integer >= 1, got '2'"),
    ("load-d-0", lambda: _load("sa-ols", d=0), "the file: d must be an integer >= 1, got 0"),
    ("load-d-huge", lambda: _load("sa-ols", d=10**5),
     "the file: d = 100000 with these params makes a state of about"),
    ("load-d-grid", lambda: _load("exp3-sae", d=2**40),
     "the file: d must be at most"),
    ("load-d-other", lambda: _load("sa-ols", d=3),
     "the file: state.fits must be an array of dtype float64 and shape (4, 4, 4), got dtype "
     "float64 and shape (4, 3, 3)"),
    # a compiled learner's state: dtypes, shapes, scalars, then what the kernels rely on
    ("load-state-shape", lambda: _load_arrays("sa-ols", fits=lambda a: np.zeros((1, 1, 1))),
     "the file: state.fits must be an array of dtype float64 and shape (4, 3, 3), got dtype "
     "float64 and shape (1, 1, 1)"),
    ("load-state-dtype", lambda: _load_arrays("sa-ols", counts=lambda a: a.astype(float)),
     "the file: state.counts must be an array of dtype int64 and shape (7,), got dtype float64"),
    ("load-state-phase", lambda: _load_arrays("sa-ols", counts=_set(1, 10**6)),
     "the file: state.counts[1] (the phase) must be in [0, 1], got 1000000"),
    ("load-state-phase-wrong", lambda: _load_arrays("sa-ols", counts=_set(1, 0)),
     "the file: state.counts[1] (the phase) must be 1, the phase of round count 32, got 0"),
    ("load-state-rounds", lambda: _load_arrays("sa-ols", counts=_set(0, -1)),
     "the file: state.counts[0] (rounds) must be in [0, 1152921504606846975], got -1"),
    ("load-state-rounds-end", lambda: _load_arrays("sa-ols", counts=_rounds_near_the_end),
     "the file: state.counts[0] (rounds) must be in [0, 1152921504606846975], got"),
    ("load-state-stale", lambda: _load_arrays("sa-ols", counts=_set(6, 2)),
     "the file: state.counts[6] (θ̂ stale) must be 0 or 1, got 2"),
    ("load-state-nan", lambda: _load_arrays("sa-ols", fits=_set((0, 0, 0), math.nan)),
     "the file: state.fits[0, 0, 0] must be finite, got nan"),
    ("load-state-triangular", lambda: _load_arrays("sa-ols", fits=_set((0, 1, 0), 0.5)),
     "the file: state.fits[0, 1, 0] must be 0 (below the diagonal of a triangular factor), "
     "got 0.5"),
    ("load-state-theta", lambda: _load_arrays("sa-ols", counts=_set(6, 0),
                                              theta=_set((0, 0), 9.0)),
     "the file: state.theta must be what the fit of state.fits gives"),
    ("load-state-radius", lambda: _load_arrays("sa-ols", radius=_set(0, -1.0)),
     "the file: state.radius[0] must be in [0, inf], got -1.0"),
    ("load-state-schedule", lambda: _load_arrays("sa-ols", phase_kind=_set(1, 2)),
     "the file: state.phase_kind must be what the learner's parameters make it"),
    ("load-state-scalar", lambda: _load_meta("sa-ols", lambda m: m["state"]["fields"]["r0"]
                                             .update(value=0.5)),
     "the file: state.r0 must be 0.0 (what the learner's parameters make it), got 0.5"),
    ("load-state-agents", lambda: _load_meta("sa-ols", lambda m: m["state"]["fields"]["agents"]
                                             ["fields"]["delta"].update(value=0.9)),
     "the file: state.agents.delta must be 0.1 (what the learner's parameters make it), got 0.9"),
    ("load-state-kind", lambda: _load_meta("sa-ols", lambda m: m["state"]["fields"].update(
        counts={"value": 3})),
     "the file: state.counts is missing 'array'"),
    ("load-state-tuple", lambda: _load_meta("sa-ols", lambda m: m["state"].update(tuple="X")),
     "the file: state must be a PhasedOLSState, got 'X'"),
    ("load-state-float", lambda: _load_meta("sa-ols", lambda m: m["state"]["fields"]["r0"]
                                            .update(value="0.0")),
     "the file: state.r0 must be a number, got '0.0'"),
    ("load-oracle-beta", lambda: _load_arrays("oracle", beta=_set(0, 0.0)),
     "the file: state.beta must be what the learner's parameters make it"),
    ("load-offset-counts", lambda: _load_arrays("offset-ols", counts=_set(2, 10**6)),
     "the file: state.counts[2] (gamed points) must be in [0,"),
    ("load-linucb-counts", lambda: _load_arrays("linucb", counts=_set(2, 10**6)),
     "the file: state.counts[2] (arm 0's points) must be 0, got 1000000"),
    ("load-linucb-rounds", lambda: _load_arrays("linucb", counts=_set(0, 2**63 - 5)),
     "the file: state.counts[0] (rounds) must be in [0, 4611686018427387904], got "
     "9223372036854775803"),
    ("load-linucb-rule-state", lambda: _load_arrays("linucb", **{"rule6.fits": _set(
        (0, 0, 0), 0.0)}),
     "the file: desk.rules[0].rule.state.fits[0, 0, 0] must be > 0 (a ridge factor's diagonal)"),
    ("load-exp3-played", lambda: _load_arrays("exp3-sae", played=_set(0, 10**6)),
     "the file: state.played[0] must be in [0,"),
    ("load-exp3-q", lambda: _load_arrays("exp3-sae", q_played=_set(0, 2.0)),
     "the file: state.q_played[0] must be in [0, 1], got 2.0"),
    ("load-exp3-snapshot", lambda: _load_arrays("exp3-sae", **{"snapshot4.played": _set(0, -3)}),
     "the file: desk.rules[0].snapshot.played[0] must be in [0,"),
    ("load-exp3-tree", lambda: _load_arrays("exp3-sae", **{"experts.reals": _tree_node()}),
     "of the tree) must be the sum of its children, 3.0, got 2.0"),
    ("load-exp3-used-dense", lambda: _load_arrays("exp3-sae", **{"experts.ints": _set(0, 3)}),
     "the file: state.experts.ints[0] (slots in use) must be 196, got 3"),
    ("load-lazy-used", lambda: _load_arrays("exp3-sae-lazy", **{"experts.ints": _set(0, 5000)}),
     "the file: state.experts.ints[0] (slots in use) must be in [0, 2000], got 5000"),
    ("load-lazy-table", lambda: _load_arrays("exp3-sae-lazy", **{"experts.ints": _slot(999)}),
     "the file: state.experts.ints[3:] (the hash table) must hold each of the 5 slots in use "
     "(0 to 4) once, holds slots 0, 1, 2, 3, 999"),
    ("load-lazy-key", lambda: _load_arrays("exp3-sae-lazy", **{"experts.keys": _set((0, 0),
                                                                                    2**63)}),
     "the file: state.experts.keys[0] must pack a grid point's coordinates, each in [0, 64)"),
    ("load-lazy-logw", lambda: _load_arrays("exp3-sae-lazy", **{"experts.reals": _set(
        2, math.nan)}),
     "the file: state.experts.reals[2] (log weight of slot 0) must be < inf and not NaN, got nan"),
    ("load-exp3p-top", lambda: _load_arrays("exp3p-sae", **{"weights.reals": _set(2, 99.0)}),
     "the file: state.weights.reals[2] (the largest log weight) must be"),
    ("load-exp3p-share", lambda: _load_arrays("exp3p-sae", **{"weights.share": _set(0, 7.0)}),
     "the file: state.weights.share[0] must be in [0, 1], got 7.0"),
    ("load-sampled-played", lambda: _load_arrays("sampled-sae", played=_set(0, 99)),
     "the file: state.played[0] must be in [0, 15], got 99"),
    ("load-sampled-w", lambda: _load_arrays("sampled-sae", w=_set(3, -1.0)),
     "the file: state.w[3] must be in [0, inf], got -1.0"),
    ("load-sampled-experts", lambda: _load_arrays("sampled-sae", experts=_set((0, 0), math.inf)),
     "the file: state.experts[0, 0] must be finite, got inf"),
    ("load-sampled-ball", lambda: _load_arrays("sampled-sae", experts=_set((2, 1), 1e100)),
     "the file: state.experts[2] must lie in the ball of radius bound = 1.0, has norm 1e+100"),
    ("load-sampled-q", lambda: _load_arrays("sampled-sae", q_sum=_set(0, 0.5)),
     "the file: state.q must be what state.w gives"),
    # a plain-Python learner's attributes
    ("load-plain-attributes", lambda: _load_meta("plain", lambda m: m["attributes"].pop("_seen")),
     "the file: attributes must be _gram, _seen, _xy (what PlainGreedy keeps), got _gram, _xy"),
    ("load-plain-shape", lambda: _load_arrays("plain", **{"attribute._gram": lambda a: np.eye(3)}),
     "the file: attribute._gram must be an array of dtype float64 and shape (2, 2)"),
    ("load-plain-check", lambda: _load_arrays("plain", **{"attribute._gram": _set(
        (0, 0), math.nan)}),
     "the file: attribute._gram must be finite"),
    # published rules
    ("load-rule-beta-length", lambda: _load_rule("sa-ols", beta={"__array__": [0.1] * 5,
                                                                 "dtype": "float64"}),
     "the file: desk.rules[0].rule.beta must have 2 elements (d), got 5"),
    ("load-rule-beta-nan", lambda: _load_rule("sa-ols", beta={"__array__": [math.nan, 0.1],
                                                              "dtype": "float64"}),
     "the file: desk.rules[0].rule.beta[0] must be a finite number, got nan"),
    ("load-rule-beta-dtype", lambda: _load_rule("sa-ols", beta={"__array__": [0.1, 0.1],
                                                                "dtype": "object"}),
     "the file: desk.rules[0].rule.beta.dtype must be 'float64', got 'object'"),
    ("load-rule-threshold", lambda: _load_rule("sa-ols", threshold="x"),
     "the file: desk.rules[0].rule.threshold must be a finite number, got 'x'"),
    ("load-rule-threshold-inf", lambda: _load_rule("sa-ols", threshold=math.inf),
     "the file: desk.rules[0].rule.threshold must be a finite number, got inf"),
    ("load-rule-probability", lambda: _load_rule("sa-ols", probability=1.5),
     "the file: desk.rules[0].rule.probability must be a finite number in [0, 1], got 1.5"),
    ("load-rule-general", lambda: _load_rule("sa-ols", state={"value": None}),
     "the file: desk.rules[0].rule must be a linear threshold (SAOLS publishes no other), got "
     "a general rule"),
    ("load-rule-version-twice", lambda: _load_desk("sa-ols", lambda k: k["rules"][1].update(
        version=k["rules"][0]["version"])),
     "the file: desk.rules[1].version must be a version up to desk.version (4) held once, "
     "got 3"),
    ("load-rule-version-ahead", lambda: _load_desk("sa-ols", lambda k: k["rules"][0].update(
        version=99)),
     "the file: desk.rules[0].version must be a version up to desk.version (4) held once, "
     "got 99"),
    ("load-rule-effective", lambda: _load_desk("sa-ols", lambda k: k["rules"][0].update(
        effective=1e9)),
     "the file: desk.rules[0].effective must be a finite number in [0, 40], got 1000000000.0"),
    ("load-rule-snapshot", lambda: _load_desk("sa-ols", lambda k: k["rules"][0].update(
        snapshot={"x": 1})),
     "the file: desk.rules[0].snapshot has an unknown key 'x'"),
    ("load-rule-snapshot-missing", lambda: _load_desk("exp3-sae", lambda k: k["rules"][0].update(
        snapshot={})),
     "the file: desk.rules[0].snapshot is missing 'played'"),
    # the decision bookkeeping
    ("load-desk-rules", lambda: _load_desk("sa-ols", lambda k: k.update(rules=5)),
     "the file: desk.rules must be a list, got 5"),
    ("load-desk-clock-missing", lambda: _load_desk("sa-ols", lambda k: k.pop("clock")),
     "the file: desk is missing 'clock'"),
    ("load-desk-in-force", lambda: _load_desk("sa-ols", lambda k: k.update(in_force=3)),
     "the file: desk.in_force must be null or the newest version, 4, which the file holds; "
     "got 3"),
    ("load-pending-version", lambda: _load_desk("sa-ols", lambda k: k["pending"].update(
        versions=[99] * len(k["pending"]["versions"]))),
     "the file: desk.pending[0] version must be a rule version the file holds (3, 4), got 99"),
    ("load-pending-id-twice", lambda: _load_desk("sa-ols", lambda k: k["pending"]["ids"]
                                                 .__setitem__(1, k["pending"]["ids"][0])),
     "the file: desk.pending[1] repeats decision id"),
    ("load-pending-id-bool", lambda: _load_desk("sa-ols", lambda k: k["pending"]["ids"]
                                                .__setitem__(0, True)),
     "the file: desk.pending[0] id must be an integer or a string (a decision id), got True"),
    ("load-pending-lengths", lambda: _load_desk("sa-ols", lambda k: k["pending"]["ids"].pop()),
     "the file: desk.pending: ids, versions and accepted must have one entry per decision, "
     "got 7, 8 and 8"),
    ("load-pending-apple-rejection", lambda: _load_desk("sa-ols", lambda k: k["pending"]
                                                        ["accepted"].__setitem__(0, False)),
     "the file: desk.pending[0] is a rejection under apple tasting, which waits for no outcome"),
    ("load-pending-decision", lambda: _load_desk("sa-ols-bandit", _flip_first_accepted),
     "the file: desk.pending[0] says accepted="),
    ("load-pending-nan", lambda: _load_arrays("sa-ols", **{"pending": _set((0, 0), math.nan)}),
     "the file: desk.pending[0]: its features must be finite, got [nan,"),
    ("load-pending-shape", lambda: _load_arrays("sa-ols", pending=lambda a: a[:, :1]),
     "the file: pending.npy must be an array of dtype float64 and shape (8, 2), got dtype "
     "float64 and shape (8, 1)"),
    ("load-uses-short", lambda: _load_desk("sa-ols", lambda k: k.update(uses=[[v, 0] for v, _ in
                                                                             k["uses"]])),
     "the file: desk.uses must count the"),
    ("load-uses-version", lambda: _load_desk("sa-ols", lambda k: k["uses"].append([77, 1])),
     "the file: desk.uses[2][0] must be a rule version the file holds (3, 4), got 77"),
    ("load-uses-pair", lambda: _load_desk("sa-ols", lambda k: k["uses"].append(7)),
     "the file: desk.uses[2] must be a pair [version, uses], got 7"),
    ("load-reported-twice", lambda: _load_desk("sa-ols", lambda k: k["reported"].append(
        k["reported"][0])),
     "the file: desk.reported["),
    ("load-every-outcomes", lambda: _load_desk("sa-ols", lambda k: k.update(every_outcomes=0)),
     "the file: desk.every_outcomes must be an integer >= 1, got 0"),
    ("load-period", lambda: _load_desk("sa-ols", lambda k: k.update(period=-1)),
     "the file: desk.period must be a finite number in (0, inf], got -1"),
    ("load-clock-nan", lambda: _load_desk("sa-ols", lambda k: k.update(clock=math.nan)),
     "the file: desk.clock must be a finite number in [0, inf], got nan"),
    ("load-next-id", lambda: _load_desk("sa-ols", lambda k: k.update(next_id=-1)),
     "the file: desk.next_id must be an integer >= 0, got -1"),
    ("load-stale", lambda: _load_desk("sa-ols", lambda k: k.update(stale=1)),
     "the file: desk.stale must be true or false, got 1"),
    ("load-outcomes-since", lambda: _load_desk("sa-ols", lambda k: k.update(outcomes_since="3")),
     "the file: desk.outcomes_since must be an integer >= 0, got '3'"),
    ("load-version", lambda: _load_desk("sa-ols", lambda k: k.update(version="4")),
     "the file: desk.version must be an integer >= 0, got '4'"),
    # the random generator
    ("load-rng-state", lambda: _load_meta("sa-ols", lambda m: m["rng"]["state"].update(
        state="x")),
     "the file: rng.state.state must be an integer >= 0, got 'x'"),
    ("load-rng-big", lambda: _load_meta("sa-ols", lambda m: m["rng"]["state"].update(
        state=2**130)),
     "the file: rng.state.state must be below 2^128"),
    ("load-rng-inc", lambda: _load_meta("sa-ols", lambda m: m["rng"]["state"].update(inc=2)),
     "the file: rng.state.inc must be odd and below 2^128 (a PCG increment), got 2"),
    ("load-rng-kind", lambda: _load_meta("sa-ols", lambda m: m["rng"].update(
        bit_generator="MT19937")),
     "the file: rng.bit_generator must be one of PCG64, PCG64DXSM, got 'MT19937'"),
    ("load-rng-spare", lambda: _load_meta("sa-ols", lambda m: m["rng"].update(has_uint32=1.7)),
     "the file: rng.has_uint32 must be an integer >= 0, got 1.7"),
    # claims
    ("sa-ols-warmup-0", lambda: make_learner("sa-ols", delta=0.1, r0=0.0, feedback="apple",
                                             warmup=0).reset(2, 0),
     "warmup must be an integer >= 1 or None (d rounds), got 0"),
    ("sa-ols-warmup-float", lambda: make_learner("sa-ols", delta=0.1, r0=0.0, feedback="apple",
                                                 warmup=2.5).reset(2, 0),
     "warmup must be an integer >= 1 or None (d rounds), got 2.5"),
    ("orthogonal-traps-d1", lambda: Game(dimension=1, contexts=OrthogonalTraps()),
     "orthogonal-traps needs dimension >= 2"),
    ("orthogonal-traps-r0", lambda: Game(dimension=4, r0=0.2, contexts=OrthogonalTraps()),
     "orthogonal-traps needs r0 = 0 under apple feedback"),
    ("orthogonal-traps-margin", lambda: Game(dimension=4,
                                             contexts=OrthogonalTraps(margin=2.0)),
     "margin must be in (0, 1], got 2.0"),
    # lending game
    ("game-rewards-recorded", lambda: Game(dimension=2, rewards="recorded"),
     "rewards 'recorded' needs a data set's rows as contexts"),
    ("game-rewards-name", lambda: Game(dimension=2, rewards="nope"),
     "rewards must be one of linear, recorded, got 'nope'"),
    ("data-rows-1d", lambda: Game(dimension=1, contexts=_rows(rows=np.ones(3))),
     "rows must be a 2-D float64 array with at least one row and column"),
    ("data-rows-nan", lambda: Game(dimension=2, contexts=_rows(rows=np.full((3, 2), np.nan))),
     "rows must be finite"),
    ("data-repaid", lambda: Game(dimension=2, contexts=_rows(repaid=np.array([1.5, 0, 1]))),
     "repaid must be probabilities in [0, 1], got 1.5 at row 0"),
    ("data-repaid-shape", lambda: Game(dimension=2, contexts=_rows(repaid=np.ones(2))),
     "repaid must be a float array of shape (3,)"),
    ("data-reward-nan", lambda: Game(dimension=2, contexts=_rows(
        if_repaid=np.array([1.0, np.nan, 1.0]))), "if_repaid must be finite"),
    ("data-weights", lambda: Game(dimension=2, contexts=_rows(weights=np.array([1.0, -1, 0]))),
     "weights must be finite, >= 0 and not all 0"),
    ("data-groups", lambda: Game(dimension=2, contexts=_rows(groups=np.array([0, 1, 2]),
                                                             group_names=("a", "b"))),
     "groups must be indices of group_names (0 to 1), got values from 0 to 2"),
    ("data-order", lambda: Game(dimension=2, contexts=_rows(order=np.array([0, 3]))),
     "order must be a non-empty 1-D integer array of rows (0 to 2)"),
    ("data-names", lambda: Game(dimension=2, contexts=_rows(feature_names=("a",))),
     "feature_names must be 2 names, one a column, got 1"),
    ("data-scale", lambda: Game(dimension=2, contexts=_rows(reward_scale=0.0)),
     "reward_scale must be a finite number > 0, got 0.0"),
    ("data-bandit", lambda: Game(dimension=2, contexts=_rows(), feedback="bandit"),
     "feedback must be apple with data contexts"),
    ("data-heterogeneous", lambda: Game(dimension=2, contexts=_rows(),
                                        agents=HeterogeneousBudgets(low=0.05)),
     "agents must share one budget in a data game"),
    ("subset-mask-list", lambda: Game(dimension=2, agents=SubsetGaming(gameable=[True, False])),
     "gameable must be a 1-D boolean array"),
    ("subset-mask-length", lambda: Game(dimension=2, agents=SubsetGaming(
        gameable=np.ones(3, dtype=bool))), "gameable must have one entry per feature (2), got 3"),
    ("fico-mix-group", lambda: load_fico(mix={"martian": 1.0}),
     "mix: no group 'martian'; groups: white, black, hispanic, asian"),
    ("fico-mix-negative", lambda: load_fico(mix={"white": -1.0}),
     "mix['white'] must be a finite number >= 0, got -1.0"),
    ("fico-mix-zero", lambda: load_fico(mix={"white": 0.0}), "mix must be a mapping of"),
    ("fico-mix-list", lambda: load_fico(mix=[1.0, 2.0]), "mix must be a mapping of"),
    ("fico-gameable", lambda: load_fico(gameable=["intercept"]),
     "gameable: no feature 'intercept'"),
    ("fico-gameable-str", lambda: load_fico(gameable="score"),
     "gameable must be a list of feature names, got 'score'"),
    ("fico-rewards", lambda: load_fico(rewards=(1.0, "x")), "rewards must be two finite numbers"),
    ("taiwan-gameable", lambda: load_taiwan_credit(gameable=["target"]),
     "gameable: no column 'target'; columns: LIMIT_BAL, SEX"),
    ("taiwan-gameable-str", lambda: load_taiwan_credit(gameable="PAY_AMT1"),
     "gameable must be a list of column names, got 'PAY_AMT1'"),
    ("taiwan-rewards", lambda: load_taiwan_credit(rewards=(1.0, float("nan"))),
     "rewards must be two finite numbers"),
    ("dataset-name", lambda: load_dataset("nope"),
     "data must be one of german-credit, fico, fico-applicants, taiwan-credit, got 'nope'"),
    ("data-game-data", lambda: data_game(object()), "data must be a DataSet or a LendingData"),
    ("from-lending", lambda: from_lending(3), "data must be a LendingData"),
    ("run-lending-learners", lambda: run_lending(load_dataset("fico"), "sa-ols", horizon=5,
                                                 seeds=1, delta=0.1),
     "learners must be a non-empty list of learners"),
    ("run-lending-delta", lambda: run_lending(load_dataset("fico"), ["sa-ols"], horizon=5,
                                              seeds=1, delta=math.nan),
     "delta must be a finite number >= 0, got nan"),
    # logistic learners (the rewards of the two outcomes, the prior)
    ("logistic-repaid-nan", lambda: _logistic(repaid=math.nan),
     "repaid must be a finite number, got nan"),
    ("logistic-repaid-str", lambda: _logistic(repaid="0.2"),
     "repaid must be a finite number, got '0.2'"),
    ("logistic-repaid-bool", lambda: _logistic(repaid=True),
     "repaid must be a finite number, got True"),
    ("logistic-defaulted-inf", lambda: _logistic(defaulted=-math.inf),
     "defaulted must be a finite number, got -inf"),
    ("logistic-repaid-below", lambda: _logistic(repaid=-1.0, defaulted=0.2),
     "repaid must be larger than defaulted (the reward of a repaid loan above a defaulted "
     "one's), got repaid=-1.0 and defaulted=0.2"),
    ("logistic-repaid-equal", lambda: _logistic(repaid=0.5, defaulted=0.5),
     "repaid must be larger than defaulted"),
    ("logistic-repaid-default", lambda: _logistic(repaid=-1.0),
     "got repaid=-1.0 and defaulted=-1.0"),
    ("logistic-defaulted-big", lambda: _logistic(defaulted=-1e10),
     "defaulted must be at most 1e+09 in magnitude (the learner's input bound), got "
     "-10000000000.0"),
    ("logistic-ridge-neg", lambda: _logistic(ridge=-0.5),
     "ridge must be a finite number >= 0, got -0.5"),
    ("logistic-ridge-nan", lambda: _logistic(ridge=math.nan),
     "ridge must be a finite number >= 0, got nan"),
    ("logistic-ridge-big", lambda: _logistic(ridge=1e10),
     "ridge must be at most 1e+09 in magnitude (the learner's input bound), got "
     "10000000000.0"),
    ("logistic-ridge-none", lambda: _logistic(ridge=None),
     "ridge must be a finite number >= 0, got None"),
    ("offset-logistic-r0-none", lambda: make_learner(
        "offset-logistic", delta=0.1, feedback="apple").reset(2, 0),
     "r0 must be a finite number, got None"),
    ("naive-logistic-repaid-list", lambda: make_learner(
        "naive-logistic", delta=0.1, r0=0.0, feedback="apple", repaid=[1.0]).reset(2, 0),
     "repaid must be a finite number, got [1.0]"),
    ("logistic-batch-negative", lambda: _logistic(batch_points=-1),
     "batch_points must be an integer from 0 to 100,000 or None (5·d), got -1"),
    ("logistic-batch-bool", lambda: _logistic(batch_points=True),
     "batch_points must be an integer from 0 to 100,000 or None (5·d), got True"),
    ("logistic-batch-float", lambda: _logistic(batch_points=2.5),
     "batch_points must be an integer from 0 to 100,000 or None (5·d), got 2.5"),
    ("logistic-batch-big", lambda: _logistic(batch_points=10**6),
     "batch_points must be an integer from 0 to 100,000 or None (5·d), got 1000000"),
    # logistic learners, saved (the kernels index the kept points by counts[5])
    ("load-logistic-kept", lambda: _load_arrays("sa-logistic", counts=_set(5, 10**6)),
     "the file: state.counts[5] (points kept) must be 4, got 1000000"),
    ("load-logistic-learned", lambda: _load_arrays("sa-logistic", counts=_set(6, 2)),
     "the file: state.counts[6] (points learned) must be"),
    ("load-logistic-next", lambda: _load_arrays("sa-logistic", counts=_set(7, -4)),
     "the file: state.counts[7] (next refit) must be in [2, 4611686018427387904], got -4"),
    ("load-logistic-label", lambda: _load_arrays("sa-logistic", kept=_set((1, 2), 3.0)),
     "the file: state.kept[:, -1] (labels)[1] must be in [0, 1], got 3.0"),
    ("load-logistic-fit", lambda: _load_arrays("sa-logistic", fit=_set((1, 0), 0.5)),
     "the file: state.fit[1, 0] must be 0 (below the diagonal of a triangular factor)"),
    # the service's declared features, cadences and a rule to adopt
    ("service-feature-scale", lambda: _service(features=[{"name": "a", "scale": 0.0}, "b"]),
     "features[0].scale ('a') must be a finite number > 0"),
    ("service-feature-mean", lambda: _service(features=[{"name": "a", "mean": math.inf}, "b"]),
     "features[0].mean ('a') must be a finite number"),
    ("service-feature-key", lambda: _service(features=[{"name": "a", "units": "USD"}, "b"]),
     "features[0]: unknown key 'units'; allowed: name, unit, definition, mean, scale"),
    ("service-feature-name", lambda: _service(features=[{"unit": "USD"}, "b"]),
     "features[0].name must be text (a name: not empty)"),
    ("service-feature-twice", lambda: _service(features=["a", {"name": "a"}]),
     "features names 'a' twice"),
    ("service-feature-kind", lambda: _service(features=[3, "b"]),
     "features[0] must be a name or a table, got 3"),
    ("service-two-starts", lambda: _service(start_rule="r.json", start_log="h.csv"),
     "give one warm start, not start_rule and start_log"),
    ("service-warm-cap", lambda: _service(warm_cap=1.5),
     "warm_cap must be an integer >= 0, got 1.5"),
    ("desk-adopt-general", lambda: _adopt(lambda: 0.0), "a rule to adopt must be linear"),
    ("desk-adopt-nan", lambda: _adopt(_linear([np.nan, 0.0], 0.0)),
     "rule.beta"),
    # the budget estimated from the applicants
    ("learner-delta-estimate", lambda: _budget_learner("estimat"),
     "delta must be a number >= 0, 'estimate' or 'estimate:<cap>' with a cap in (0, 1e6], "
     "got 'estimat'"),
    ("learner-delta-estimate-cap", lambda: _budget_learner("estimate:-1"),
     "delta must be a number >= 0, 'estimate' or 'estimate:<cap>' with a cap in (0, 1e6], "
     "got 'estimate:-1'"),
    ("estimate-budget-level", lambda: _estimate_budget(np.zeros(3), level=1.5),
     "level must be a number in (0, 1), got 1.5"),
    ("estimate-budget-cap", lambda: _estimate_budget(np.zeros(3), delta_max=-1.0),
     "delta_max must be a number in (0, 1e+06), got -1.0"),
    ("probe-beta", lambda: _probe_rule(Game(dimension=2), np.ones(3), 0.0, 10),
     "beta must be 2 finite numbers, got shape (3,)"),
    ("probe-unreachable", lambda: _probe_rule(Game(dimension=2), np.zeros(2), 0.0, 10),
     "beta must reach a gameable feature"),
    # per-group budgets
    ("group-budget-unknown", lambda: _fico_game({"men": 0.1, **_FICO_BUDGETS}),
     "delta by group names an unknown group 'men'; the groups are: white, black, hispanic, "
     "asian"),
    ("group-budget-missing", lambda: _fico_game({"white": 0.5}),
     "delta by group must give a budget to every group (white, black, hispanic, asian), "
     "missing 'black'"),
    ("group-budget-negative", lambda: _fico_game({**_FICO_BUDGETS, "asian": -0.1}),
     "delta of group 'asian' must be a finite number >= 0, got -0.1"),
    ("group-budget-nan", lambda: _fico_game({**_FICO_BUDGETS, "asian": float("nan")}),
     "delta of group 'asian' must be a finite number >= 0, got nan"),
    ("group-budget-text", lambda: _fico_game({**_FICO_BUDGETS, "asian": "0.1"}),
     "delta of group 'asian' must be a finite number >= 0, got '0.1'"),
    ("group-budget-no-groups", lambda: Game(dimension=2, delta={"a": 0.1}),
     "delta by group needs a data set whose rows have groups (German credit, FICO), got "
     "contexts 'uniform-ball'"),
    ("oracle-delta-estimate", lambda: make_learner("oracle", theta1=[1.0, 0.0], r0=0.0,
                                                    delta="estimate",
                                                    feedback="apple").reset(2),
     "delta must be a number >= 0 for the oracle (it knows the game's budget: it is the "
     "benchmark, and it has no estimator), got 'estimate'"),
    # learner protocol (a learner's supported_feedback, one of its tags)
    ("learner-unsupported-feedback", lambda: _apple_only(r0=0.0, feedback="bandit").reset(2),
     "feedback must be one of apple (what apple-only learns under), got 'bandit'"),
    ("bind-unsupported-feedback",
     lambda: _apple_only().bind(Game(dimension=2, feedback="bandit").instance(0)),
     "learner apple-only learns under feedback apple only, but the game has "
     "feedback='bandit'"),
]

def _env_step(action):
    from strategic_apple_tasting.envs.apple_tasting import StrategicAppleTastingEnv

    env = StrategicAppleTastingEnv(Game(dimension=2), horizon=5)
    env.reset(seed=0)
    return env.step(action)


_FICO_BUDGETS = {"white": 0.5, "black": 0.3, "hispanic": 0.3, "asian": 0.1}


def _fico_game(delta):
    from strategic_apple_tasting.scenarios import data_game, load_dataset

    return data_game(load_dataset("fico"), delta=delta)


def _service(**given):
    from strategic_apple_tasting.service.config import ServiceConfig

    return ServiceConfig(dimension=2, params={"delta": 0.1, "r0": 0}, **given).check()


def _linear(beta, threshold):
    from strategic_apple_tasting.game.policies import LinearThreshold

    return LinearThreshold(np.array(beta), threshold)


def _adopt(rule):
    learner = make_learner("sa-ols", delta=0.1, r0=0.0, feedback="apple").reset(
        2, np.random.default_rng(0))
    return learner.adopt(rule)


def _budget_learner(delta):
    from strategic_apple_tasting.learners import SAOLS

    return SAOLS(delta=delta, r0=0.0, feedback="apple").reset(2)


def _estimate_budget(*args, **kw):
    from strategic_apple_tasting.learners.budget import estimate_budget

    return estimate_budget(*args, **kw)


def _apple_only(**params):
    from tests.learners.test_tags import AppleOnly

    return AppleOnly(**params)


def _probe_rule(*args):
    from strategic_apple_tasting.engine.probe import probe_rule

    return probe_rule(*args)


# saved learners, the edits the rows make (lambdas: the files are made when a row
# runs).
def _load_meta(name, edit, digest="recompute"):
    return saved.load(saved.edited(name, meta=edit, digest=digest))


def _load(name, digest="recompute", drop=None, **changes):
    """Load ``name``'s file with top-level document keys changed (or ``drop`` removed)."""
    def edit(meta):
        meta.update(changes)
        if drop:
            del meta[drop]
    return _load_meta(name, edit, digest)


def _load_desk(name, edit):
    return _load_meta(name, lambda m: edit(m["desk"]))


def _load_rule(name, **changes):
    return _load_desk(name, lambda k: k["rules"][0]["rule"].update(changes))


def _load_arrays(name, **edits):
    """Load ``name``'s file with arrays edited: ``fits=...`` edits state.fits; a key with a
    dot other than a state field's (``"rule6.fits"``, ``"attribute._gram"``) or ``pending``
    names the member itself."""
    own = ("attribute.", "rule", "snapshot", "pending")
    arrays = {(k if k.startswith(own) else f"state.{k}"): v for k, v in edits.items()}
    return saved.load(saved.edited(name, arrays=arrays))


def _set(index, value):
    def edit(arr):
        arr[index] = value
    return edit


def _members(data, change):
    meta, files = saved.unpack(data)
    members = [("meta.json", json.dumps(meta).encode()), *files.items()]
    return change(members)


def _zip(members):
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name
        with zipfile.ZipFile(out, "w") as zf:
            for n, b in members:
                zf.writestr(n, b)
    return out.getvalue()


def _twice(name):
    return _members(saved.saved("sa-ols"),
                    lambda ms: _zip(ms + [(n, b) for n, b in ms if n == name]))


def _member(name, data):
    """SA-OLS's file with member ``name`` added or replaced (the digest recomputed)."""
    meta, files = saved.unpack(saved.saved("sa-ols"))
    files[name] = data
    return saved.pack(meta, files)


def _huge_header():
    """A .npy header claiming 10^12 int64 elements, with 8 bytes of data."""
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, dtype=np.int64))
    header["shape"] = (10**12,)
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue() + b"\0" * 8


def _pickled():
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.array([object()] * 7, dtype=object), allow_pickle=True)
    return buf.getvalue()


def _tree_node():
    def edit(reals):
        reals[np.flatnonzero(reals)[-1]] += 1.0  # the last leaf: its sum no longer adds up
    return edit


def _slot(slot):
    def edit(ints):
        filled = np.flatnonzero(ints[3:] >= 0)
        ints[3 + filled[0]] = (ints[3 + filled[0]] & -(1 << 32)) | slot
    return edit


def _rounds_near_the_end(counts):
    """SA-OLS's round count a few rounds before its schedule's end, in the last phase: a few
    updates would index past the schedule."""
    counts[0], counts[1] = 2**61 - 2, 1  # the schedule ends at 2^61 + 1 (d + FOREVER)


def _flip_first_accepted(desk):
    desk["pending"]["accepted"][0] = not desk["pending"]["accepted"][0]


def _logistic(**params):
    return make_learner("sa-logistic", delta=0.1, r0=0.0, feedback="apple",
                        **params).reset(2, 0)


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
