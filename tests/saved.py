"""Saved learners to break: a few learners saved mid-run (decisions pending, several rules held),
and :func:`edited`, which unzips one, changes its ``meta.json`` or arrays as a hand edit would,
and zips it again (with the digest recomputed, as an adversary would, unless told otherwise).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np

from strategic_apple_tasting import persistence
from strategic_apple_tasting.game import LinearThreshold
from strategic_apple_tasting.game.game import check_number
from strategic_apple_tasting.learners import (
    SAOLS,
    Exp3PSAE,
    Exp3SAE,
    Learner,
    LearnerTags,
    LinUCB,
    OffsetOLS,
    Oracle,
    SALogistic,
    SampledSAE,
)


class PlainGreedy(Learner):
    """A plain-Python learner that keeps its model in attributes (greedy least squares on the
    accepted points, with a little exploration drawn from its generator)."""

    name = "plain-greedy"
    tags = LearnerTags(strategy_aware=False)

    def __init__(self, ridge=1.0, explore=0.1, r0=None, feedback=None):
        self.ridge, self.explore, self.r0, self.feedback = ridge, explore, r0, feedback

    def _init_state(self, d):
        self._gram, self._xy, self._seen = self.ridge * np.eye(d), np.zeros(d), 0

    def _publish(self):
        if self.generator.random() < self.explore:
            return LinearThreshold(beta=np.zeros(self.dimension), threshold=-1.0)
        return LinearThreshold(beta=np.linalg.solve(self._gram, self._xy), threshold=self.r0)

    def _learn(self, rule, x_obs, accepted, reward):
        if not accepted or reward is None:
            return False
        self._gram += np.outer(x_obs, x_obs)
        self._xy += reward * x_obs
        self._seen += 1
        return True

    def _check_params(self):
        super()._check_params()
        check_number("ridge", self.ridge, 0.0, open_low=True)
        check_number("explore", self.explore, 0.0, 1.0)

    def _check_state(self, state, template, where):
        """What a careful plain-Python learner checks of a saved model: finite, the Gram
        matrix positive definite and the count a whole number >= 0."""
        for name in ("_gram", "_xy"):
            if not np.all(np.isfinite(getattr(self, name))):
                raise ValueError(f"attribute.{name} must be finite")
        try:
            np.linalg.cholesky(self._gram)
        except np.linalg.LinAlgError:
            raise ValueError("attribute._gram must be positive definite") from None
        if isinstance(self._seen, bool) or not isinstance(self._seen, int) or self._seen < 0:
            raise ValueError(f"attribute._seen must be an integer >= 0, got {self._seen!r}")


D = 2
#: name → a learner before its run (d = 2). EXP3-SAE's grid is dense by default at this
#: horizon; 64 points an axis make it lazy (4,096 experts, capacity 2,000).
LEARNERS: dict[str, Callable[[], Learner]] = {
    "sa-ols": lambda: SAOLS(delta=0.1, r0=0.0, feedback="apple"),
    "sa-ols-bandit": lambda: SAOLS(delta=0.1, r0=0.0, feedback="bandit"),
    "offset-ols": lambda: OffsetOLS(delta=0.1, r0=0.0, feedback="apple"),
    "oracle": lambda: Oracle(theta1=[0.6, 0.8], delta=0.1, r0=0.0, feedback="apple"),
    "exp3-sae": lambda: Exp3SAE(horizon=2000, sigma=0.1, delta=0.1, r0=0.0, feedback="apple"),
    "exp3-sae-lazy": lambda: Exp3SAE(horizon=2000, sigma=0.1, points_per_axis=64, delta=0.1,
                                     r0=0.0, feedback="apple"),
    "exp3p-sae": lambda: Exp3PSAE(horizon=2000, sigma=0.1, points_per_axis=64, delta=0.1,
                                  r0=0.0, feedback="apple"),
    "sampled-sae": lambda: SampledSAE(horizon=2000, sigma=0.1, experts=16, delta=0.1, r0=0.0,
                                      feedback="apple"),
    "linucb": lambda: LinUCB(alpha=1.0, r0=0.0, feedback="apple"),
    "plain": lambda: PlainGreedy(r0=0.0, feedback="apple"),
    # a logistic learner keeping 4 points (its kept buffer fills in the run)
    "sa-logistic": lambda: SALogistic(delta=0.1, r0=0.0, feedback="apple", batch_points=4),
}
#: What a test passes to load the plain-Python learner (it is not registered).
ALLOW = [PlainGreedy]
#: The member holding the digest of the others (format 3).
DIGEST = "sha256"


def run(learner: Learner, n: int = 40, seed: int = 0) -> Learner:
    """Decide ``n`` applicants, reporting the outcomes of some (publishing every 3 outcomes),
    so the learner holds pending decisions under several rules."""
    learner.publish_every(outcomes=3)
    xs = np.random.default_rng(seed).uniform(-1, 1, size=(n, learner.dimension))
    for i, x in enumerate(xs):
        if learner.decide(x).accepted and i % 3:
            for j in learner.pending()[:1]:
                learner.report(j, float(x[0] - 0.1 * x[1]))
    return learner


@functools.cache
def learner(name: str) -> Learner:
    """The learner ``name`` after its run (build anew with :func:`saved` to change it)."""
    return run(LEARNERS[name]().reset(D, rng=1))


@functools.cache
def saved(name: str) -> bytes:
    """The learner ``name`` after its run, saved."""
    return persistence.dumps(learner(name))


def unpack(data: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    """A saved file's ``meta.json`` (parsed) and its other members (bytes), in order."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    return json.loads(files.pop("meta.json")), files


def npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(arr), allow_pickle=False)
    return buf.getvalue()


def array(files: dict[str, bytes], name: str) -> np.ndarray:
    """Array ``name`` (``"state.counts"``) of an unpacked file, writable."""
    return np.lib.format.read_array(io.BytesIO(files[f"{name}.npy"])).copy()


def digest_of(members: list[tuple[str, bytes]]) -> bytes:
    """The digest a format-3 file keeps of its other members: SHA-256 over each one's name, a
    zero byte, its length (8 bytes, little-endian) and its bytes, in file order."""
    h = hashlib.sha256()
    for name, data in members:
        h.update(name.encode() + b"\0" + len(data).to_bytes(8, "little") + data)
    return h.hexdigest().encode()


def pack(meta: dict[str, Any], files: dict[str, bytes], digest: str = "recompute") -> bytes:
    """Zip a file again. ``digest``: "recompute" (a fresh digest of the new contents), "keep"
    (the old one), or "none" (no digest member)."""
    members = [("meta.json", json.dumps(meta).encode())]
    members += [(n, b) for n, b in files.items() if n != DIGEST]
    if digest == "recompute":
        members.append((DIGEST, digest_of(members)))
    elif digest == "keep" and DIGEST in files:
        members.append((DIGEST, files[DIGEST]))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, b in members:
            zf.writestr(n, b)
    return out.getvalue()


def edited(name: str, meta: Callable[[dict], Any] | None = None,
           arrays: dict[str, Callable[[np.ndarray], Any]] | None = None,
           digest: str = "recompute") -> bytes:
    """Learner ``name``'s file with ``meta(doc)`` applied to its document (in place) and each
    ``arrays[name](arr)`` to an array (in place, or returning its replacement)."""
    doc, files = unpack(saved(name))
    if meta is not None:
        meta(doc)
    for key, change in (arrays or {}).items():
        arr = array(files, key)
        new = change(arr)
        files[f"{key}.npy"] = npy(arr if new is None else new)
    return pack(doc, files, digest)


def load(data: bytes, allow: Any = ALLOW) -> Learner:
    """Load ``data`` as "the file" (the name every refusal must give)."""
    return persistence.loads(data, "the file", allow=allow)


def same(a: Learner, b: Learner) -> bool:
    """Two learners are the same: their saved documents and arrays are equal (the digest and
    the zip's timestamps aside)."""
    ma, fa = unpack(persistence.dumps(a))
    mb, fb = unpack(persistence.dumps(b))
    fa.pop(DIGEST, None)
    fb.pop(DIGEST, None)
    return ma == mb and fa == fb
