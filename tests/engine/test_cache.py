"""Compiled code is cached on disk: a second process does not compile the kernel again."""

import json
import os
import subprocess
import sys

SCRIPT = """
import json
from strategic_apple_tasting import Game, simulate
from strategic_apple_tasting.engine.kernel import run_rounds
simulate(Game(dimension=2), ["accept-all"], 10, seeds=1)
print(json.dumps({"hits": sum(run_rounds.stats.cache_hits.values()),
                  "misses": sum(run_rounds.stats.cache_misses.values())}))
"""


def _run(cache_dir):
    env = {**os.environ, "SAT_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_second_process_loads_the_kernel_from_the_cache(tmp_path):
    first = _run(tmp_path)
    second = _run(tmp_path)
    assert first["misses"] == 1 and first["hits"] == 0
    assert second["misses"] == 0 and second["hits"] == 1
    assert any(tmp_path.rglob("*.nbi"))
