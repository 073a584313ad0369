"""The ``sat`` command line: it builds the parser and dispatches to the command's module.

``sat run`` and ``sat demo`` (:mod:`.run`), ``sat sweep``, ``sat results``, ``sat report`` and
``sat reproduce`` (:mod:`.sweep`), ``sat lending`` (:mod:`.lending`), ``sat serve``
(:mod:`.serve`) and ``sat compile`` (:mod:`.compile`); what they share is in :mod:`.common`. No
command module imports another or this one.

Bad input gets one line naming the flag, the value and what is allowed, and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from .._version import __version__
from .common import Parser, UsageError, os_reason

# The package's layers (numba, pyarrow, pandas, matplotlib behind them) are imported where they
# are used: in a subcommand's flags (filled in only when that subcommand is chosen) and in its
# command function; so is the subcommand's own module. So `sat --help` and `sat --version`
# import none of them, and a Ctrl-C while they are imported is caught by `main` like any other
# (one line, exit status 130).

#: Subcommand → the module that fills its flags (``fill_<name>``) and runs it (``cmd_<name>``).
MODULES = {"run": "run", "demo": "run", "sweep": "sweep", "reproduce": "sweep",
           "results": "sweep", "report": "sweep", "lending": "lending", "serve": "serve",
           "compile": "compile"}


def _command(name: str, what: str) -> Callable:
    """The subcommand's ``fill_<name>`` or ``cmd_<name>``, its module imported on first use."""
    module = importlib.import_module(f".{MODULES[name]}", __package__)
    return getattr(module, f"{what}_{name}")


def _fill(name: str) -> Callable[[argparse.ArgumentParser], None]:
    def fill(p: argparse.ArgumentParser) -> None:
        _command(name, "fill")(p)
    return fill


def build_parser() -> argparse.ArgumentParser:
    """The ``sat`` parser. It imports none of the package's layers: each subcommand's flags are
    added (and what they need imported) when that subcommand is parsed or its help shown."""
    parser = Parser(prog="sat", description="Strategic apple tasting: simulate learners "
                     "against strategic agents with one-sided feedback.")
    parser.add_argument("--version", action="version", version=f"sat {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    sub.add_parser("run", fill=_fill("run"),
                   help="simulate learners and write results as Parquet",
                   description="Simulate learners on one game over several seeds.")
    sub.add_parser("demo", fill=_fill("demo"),
                   help="compare SA-OLS, naive greedy and the oracle",
                   description="SA-OLS vs naive greedy vs oracle at d = 5, T = 10^6: "
                   "writes results, a regret plot and a summary.")
    sub.add_parser("sweep", fill=_fill("sweep"),
                   help="run a TOML spec's sweep, resumably",
                   description="Run every cell of a sweep spec (see examples/), one "
                   "Parquet file per finished cell; rerunning skips finished cells.")
    sub.add_parser("reproduce", fill=_fill("reproduce"),
                   help="check the paper's claims (bundled sweeps)",
                   description="Run the bundled sweeps and write the claims table "
                   "(claim, measured, control, theory, verdict) and the consistency "
                   "checks (resumable: rerun to continue).")
    sub.add_parser("results", fill=_fill("results"),
                   help="summarize a sweep directory",
                   description="Load every finished cell of a sweep; print the "
                   "final-round summary, optionally write one table.")
    sub.add_parser("lending", fill=_fill("lending"),
                   help="the lending scenario: real applicants and outcomes, simulated gaming",
                   description="Compare learners on a real lending data set (German credit, "
                   "the FICO tables, Taiwanese card holders, or your CSV) on the compiled "
                   "engine: each round an applicant (a row) games the gameable features within "
                   "the budget; the learner sees the real outcome only if it accepts. Prints, "
                   "per budget and learner, the profit per 1,000 applicants and the regret "
                   "against the best linear rule (found by a search over the rows; a lower "
                   "bound) and against the least-squares rule, each answered by the gaming "
                   "applicants (Stackelberg) and on their true features: means over seeds with "
                   "95% intervals, in the data's own units.")
    sub.add_parser("serve", fill=_fill("serve"),
                   help="the decision service: decide, learn outcomes, publish the rule",
                   description="Run the decision service (HTTP, a real database): applicants "
                   "are decided by id under the published rule, outcomes are learned when "
                   "they arrive, the rule in force is public. Also: 'keys' (API keys), "
                   "'check' (the log replays to the saved learner), 'play' (the strategic "
                   "game against a running service). Needs the 'serve' extra.")
    sub.add_parser("compile", fill=_fill("compile"),
                   help="compile every kernel and engine loop into the cache (after install)",
                   description="Compile the package's compiled code (every learner's kernels "
                   "and engine loop, the game's parts) into the on-disk cache in parallel "
                   "worker processes, so that no run compiles. Quick when the cache is up "
                   "to date; run it after installing or upgrading.")
    sub.add_parser("report", fill=_fill("report"),
                   help="write a sweep's HTML report with its figures",
                   description="Write a self-contained HTML page (index.html) of a "
                   "sweep directory, with every figure beside it as PNG and PDF; "
                   "prints the page's path.")
    return parser


class _PipeSafe:
    """stdout that survives its reader going away (``sat run ... | head``): once the pipe is
    closed, output goes nowhere and the command carries on, so no result is lost."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self._closed = False

    def write(self, text: str) -> int:
        if not self._closed:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._close()
        return len(text)

    def flush(self) -> None:
        if not self._closed:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._close()

    def _close(self) -> None:
        self._closed = True
        # Python flushes stdout at exit: point the descriptor at /dev/null so that flush
        # cannot fail either (as Python's documentation on SIGPIPE advises).
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())

    def isatty(self) -> bool:
        return not self._closed and self._stream.isatty()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _os_error(exc: OSError) -> str:
    where = f" {str(exc.filename)!r}" if exc.filename is not None else ""
    return f"cannot use{where}: {os_reason(exc)}"


#: Values argparse takes for flags, since they start with "-" and are not negative numbers.
_SIGNED_WORDS = ("-inf", "-infinity", "-nan")


def _signed_words(argv: Sequence[str]) -> list[str]:
    """``argv`` with a value such as ``-inf`` joined to the flag before it (``--since
    -inf`` as ``--since=-inf``): argparse would say the flag "expected one argument" and never
    show the value to the flag's own check, whose line names the value and what is allowed."""
    out: list[str] = []
    for word in argv:
        if (word.lower() in _SIGNED_WORDS and out and out[-1].startswith("--")
                and "=" not in out[-1]):
            out[-1] = f"{out[-1]}={word}"
        else:
            out.append(word)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``sat``; returns the exit status. The package's layers are imported in
    here (by the chosen subcommand), so a Ctrl-C while they load is one line and status 130."""
    stdout = sys.stdout
    sys.stdout = _PipeSafe(stdout)
    # A learner named by import path (module:Class) may live in the current directory, as with
    # `python -m`; appended, so it never shadows an installed module. Spawned sweep workers
    # inherit the path.
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        args = build_parser().parse_args(_signed_words(sys.argv[1:] if argv is None else argv))
        return _command(args.command, "cmd")(args)
    except (UsageError, ValueError) as exc:
        print(f"sat: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a permission, a directory where a file belongs
        print(f"sat: error: {_os_error(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print("sat: error: out of memory: lower the dimension, the seeds or the threads",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sat: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout = stdout


if __name__ == "__main__":
    sys.exit(main())
