"""Imported once by the tests' fork server (:mod:`.forked`): what ``sat serve`` imports and
loads before it listens, so that each forked server starts with it done."""

import uvicorn  # noqa: F401

from strategic_apple_tasting.cli import main  # noqa: F401
from strategic_apple_tasting.learners import make_learner
from strategic_apple_tasting.service import app, server  # noqa: F401

# Numba's first load from the cache sets up its compiler's tables (~0.4 s): a learner's first
# rule does it.
make_learner("sa-ols", delta=0.3, r0=0.0, feedback="apple").reset(3, 0).publish()
