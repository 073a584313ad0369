"""Saved learners: a learner written to a file and read back, never with pickle (DESIGN,
"Saving"). A layer of its own above :mod:`..learners`: it knows the learners' protocol and
their registry; no learner knows it.

:func:`save_learner` writes a learner (at any point of a run) and :func:`load_learner` reads it
back, ready to continue; :func:`dumps` and :func:`loads` do the same with bytes (a database
keeps them in a column). The file format is described in :mod:`.files`; every field a loader
reads is checked (:mod:`.loading`, :mod:`.states` and :mod:`.desk`, which write and read the
state and the decision bookkeeping, each in one place).

Examples
--------
>>> import tempfile, pathlib
>>> from strategic_apple_tasting.learners import SAOLS
>>> learner = SAOLS(delta=0.2, r0=0.0, feedback="apple").reset(3, rng=0)
>>> path = save_learner(learner, pathlib.Path(tempfile.mkdtemp()) / "learner.sat")
>>> type(load_learner(path)).__name__
'SAOLS'
"""

from .fields import Refused
from .files import DIGEST, FORMAT, FORMAT_VERSION, READERS, dumps, load, loads, save
from .files import load as load_learner
from .files import save as save_learner

__all__ = ["DIGEST", "FORMAT", "FORMAT_VERSION", "READERS", "Refused", "dumps", "load",
           "load_learner", "loads", "save", "save_learner"]
