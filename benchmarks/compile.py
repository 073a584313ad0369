"""Compile time (compiled once, at set-up): ``sat compile`` on an empty cache, and what a user
waits for after it.

Each repeat makes a fresh ``SAT_CACHE_DIR`` and times, as whole processes (wall seconds; CPU
seconds of the process and its children):

* ``sat compile`` on the empty cache (its worker processes compile every part in parallel);
* ``sat compile`` again (the cache is up to date: it returns at once);
* the first ``sat run`` after it: ``sat run --learner sa-ols --dimension 5 --horizon 1000
  --seeds 1`` (target ≤ 3 s);
* a user's compiled learner's first run after it: the guide's ``CompiledGreedy``
  (``docs/adding-a-learner.md``, its blocks written to ``my_learners.py``) in the same command
  (target ≤ 10 s): its kernels and the engine's loop for its state class compile then.

The parts ``sat compile`` reported are printed from the first repeat.

    .venv/bin/python benchmarks/compile.py [--repeat 2] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAT = [sys.executable, "-m", "strategic_apple_tasting"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of a whole process (its children included), and its output."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, _children_cpu() - cpu, done.stdout


def guide_learners(directory: Path) -> None:
    """``my_learners.py`` as the guide builds it (its two ``# file: my_learners.py`` blocks)."""
    text = (ROOT / "docs" / "adding-a-learner.md").read_text()
    blocks = re.findall(r"```python\n# file: my_learners.py[^\n]*\n(.*?)```", text, re.S)
    (directory / "my_learners.py").write_text("\n".join(blocks))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    steps = {"sat compile (empty cache)": [*SAT, "compile", "--workers", str(args.workers)],
             "sat compile (up to date)": [*SAT, "compile", "--workers", str(args.workers)],
             "first sat run after it (sa-ols)": [*SAT, "run", "--learner", "sa-ols",
                                                 "--dimension", "5", "--horizon", "1000",
                                                 "--seeds", "1", "--out", "run-sa-ols"],
             "a user's compiled learner's first run (CompiledGreedy)": [
                 *SAT, "run", "--learner", "my_learners:CompiledGreedy", "--dimension", "5",
                 "--horizon", "1000", "--seeds", "1", "--out", "run-greedy"]}
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in steps}
    report = ""
    for k in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="sat-compile-bench-") as tmp:
            work = Path(tmp)
            guide_learners(work)
            env = {**os.environ, "SAT_CACHE_DIR": str(work / "cache")}
            for name, argv in steps.items():
                wall, cpu, out = timed(argv, env, work)
                results[name].append((wall, cpu))
                if k == 0 and name.startswith("sat compile (empty"):
                    report = out
    print(f"{args.repeat} repeats, each on a fresh cache; median (min–max) seconds; "
          f"{args.workers} workers; CPU of the process and its children")
    print("| step | wall s | CPU s |\n|---|---:|---:|")
    for name, runs in results.items():
        walls = [w for w, _ in runs]
        cpus = [c for _, c in runs]
        print(f"| {name} | {statistics.median(walls):.1f} ({min(walls):.1f}–{max(walls):.1f}) "
              f"| {statistics.median(cpus):.1f} |")
    print("\nsat compile's own report (first repeat):\n" + report)


if __name__ == "__main__":
    main()
