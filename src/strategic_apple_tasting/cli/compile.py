"""``sat compile``: compile every kernel and engine loop into the on-disk cache, once
(:mod:`strategic_apple_tasting.experiments.precompile`)."""

from __future__ import annotations

import argparse


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"--workers must be an integer >= 1, got {text!r}")
    return value


def fill_compile(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workers", "-w", type=_workers, metavar="N",
                   help="worker processes (default: the CPUs this process may use)")
    p.add_argument("--force", action="store_true",
                   help="run every part even if the cache says it is up to date")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="also list each function compiled, with its argument types")


def cmd_compile(args: argparse.Namespace) -> int:
    from ..experiments.precompile import compile_all

    compile_all(args.workers, force=args.force, verbose=args.verbose,
                say=lambda line: print(line, flush=True))
    return 0
