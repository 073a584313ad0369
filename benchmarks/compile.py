"""Compile time: each learner's first run on an empty compiled-code cache, in one process, in
registry order after accept-all (which compiles the game's parts every learner shares).

Each figure is the wall time of ``simulate(Game(dimension=2), [name], 10)`` the first time the
process meets that learner: numba compiling the learner's kernels and the engine's loop for its
state class (T = 10, so running costs nothing). A fresh ``SAT_CACHE_DIR`` is made for each
repeat, in a child process, so nothing is read from a cache.

    .venv/bin/python benchmarks/compile.py [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = """
import json, sys, time
t = time.perf_counter()
from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.learners import LEARNERS
out = {"import": time.perf_counter() - t}
game = Game(dimension=2)
for name in ["accept-all", *[n for n in LEARNERS if n != "accept-all"]]:
    t = time.perf_counter()
    simulate(game, [name], 10, seeds=1)
    out[name] = time.perf_counter() - t
print(json.dumps(out))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args()
    runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="sat-compile-") as cache:
            done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                                  env={**os.environ, "SAT_CACHE_DIR": cache}, check=True)
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"empty cache, {args.repeat} repeats, median seconds (a learner sharing another's "
          "compiled core reuses it: 0)")
    print("| step | seconds |")
    print("|---|---:|")
    for key in runs[0]:
        print(f"| {key} | {statistics.median(r[key] for r in runs):.2f} |")
    total = statistics.median(sum(r.values()) for r in runs)
    print(f"| total | {total:.2f} |")


if __name__ == "__main__":
    main()
