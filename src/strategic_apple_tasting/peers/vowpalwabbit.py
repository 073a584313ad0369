"""Vowpal Wabbit's contextual bandit with action-dependent features (``--cb_explore_adf``) as a
learner.

VW is used as its users use it: a ``vowpalwabbit.Workspace`` made from a command line, text
examples in VW's multi-line format, ``predict`` for the probability mass function (pmf) over
the actions, an action sampled from the pmf by the user, and ``learn`` on the example labelled
with the chosen action's cost (−reward) and probability. Each example is::

    shared |s x0:<x'_0> x1:<x'_1> ...
    |a accept
    |a reject

with the quadratic interaction ``-q sa``, so each action has its own linear model of x' (its
own feature, ``accept`` or ``reject``, is its intercept). Action 0 of VW's pmf is ``accept``
(arm 1), action 1 ``reject`` (arm 0). Under apple tasting a rejection is learned with cost −r0.

Exploration is SquareCB (``--squarecb``): VW's pmf is a continuous function of its predicted
costs, so the rule below is continuous in x' and agents' numerical search can follow it.
(ε-greedy, ``--epsilon``, gives a pmf that is constant on each side of the greedy boundary:
g would carry no gradient and its linearization would be 0, so agents' search would have no
direction to start from; it is not offered.)

The published rule. A user samples the action from VW's pmf by inverse CDF in VW's action
order, as VW's tutorials do: scale the pmf by 1/sum, draw u ~ U[0, 1), take the first action
whose cumulative probability exceeds u. The adapter draws u once a round from the learner's
Generator, so the round's decision at x' is the action that this u samples from VW's pmf at x':
accept iff p(x') > u, with p VW's scaled probability of ``accept`` (listed first). It publishes
g(x') = p(x') − u, nudged just below 0 where p = u (the strict test rejects there), so g ≥ 0
exactly when the sampled action is accept. VW's own random seed (``--random_seed``) is drawn
from the learner's Generator too.

The twin agents answer. With two actions SquareCB's pmf is a function of one
number, h = γ·(ĉ_reject − ĉ_accept): p = 1 − 1/(2 + h) for h ≥ 0 (accept predicted cheaper,
the costlier action gets 1/(2 + γ·gap)), p = 1/(2 − h) for h < 0, increasing in h. Each
action's predicted cost is VW's linear model of x' (``-q sa`` plus the shared and action
features; VW's contextual-bandit regressor does not clip its predictions), so h is affine in
x', and "p(x') > u" is the half-space h(x') > F⁻¹(u): a linear rule, in closed form for agents.
The adapter identifies h each round from VW's own pmf at the origin and at the d unit vectors
(h read back from the smaller probability), checks it at one more point, and publishes the
half-space, less a margin for VW's float32 arithmetic, as a :class:`~.twins.LinearTwin`. When
the check fails (a VW whose pmf is not this function of a hyperplane) the round has no twin
and agents search VW's rule itself, as before. Decisions and learning stay VW's.

Pickling: a ``Workspace`` does not pickle. The adapter pickles it through VW's own model
serialization (``Workspace.save`` to a temporary file, read back; revived by
``Workspace(arg_list=[..., "--initial_regressor", file])``); VW saves its learning state with
the model (``--save_resume`` is VW 9's default), so a revived learner continues exactly.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from ..game.game import check_number
from ._common import TINY, Box, PeerLearner, examples_need, seed_from
from .twins import LinearTwin, linear_twin

LIBRARY = "vowpalwabbit"
ACTIONS = ("|a accept", "|a reject")  # VW's action 0 is accept (arm 1)
#: The twin's margin, relative to the sizes of its terms (:func:`.twins.linear_twin`). VW
#: computes its costs and pmf in float32 (a relative step of 6·10⁻⁸), and h is read back from
#: the smaller probability p, whose step ε moves h by ε/p² = ε·(2 + |h|)²: a few float32 steps
#: of h's terms. tests/peers measures the identified h against VW's own pmf.
MARGIN = 1e-4
#: How far the check point's h may lie from the identified hyperplane, relative to the same
#: sizes, before the round is left without a twin.
IDENTIFIED = 1e-4
class _Workspace:
    """A VW workspace that pickles through VW's own model file."""

    def __init__(self, module: Any, args: list[str], model: bytes | None = None) -> None:
        self.module = module.__name__
        self.args = list(args)
        if model is None:
            self.ws = module.Workspace(arg_list=self.args)
        else:
            fd, path = tempfile.mkstemp(suffix=".vw")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(model)
                self.ws = module.Workspace(arg_list=[*self.args, "--initial_regressor", path])
            finally:
                os.unlink(path)

    def model_bytes(self) -> bytes:
        fd, path = tempfile.mkstemp(suffix=".vw")
        os.close(fd)
        try:
            self.ws.save(path)
            with open(path, "rb") as f:
                return f.read()
        finally:
            os.unlink(path)

    def __getstate__(self) -> dict[str, Any]:
        return {"module": self.module, "args": self.args, "model": self.model_bytes()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        import importlib

        self.__init__(importlib.import_module(state["module"]), state["args"], state["model"])


def _number(v: float) -> str:
    return repr(float(v))  # shortest text that reads back as the same double


#: VW computes in float32, and its parser makes NaN of a number below float32's range (10⁻²⁰⁰
#: gives a pmf of NaN): a feature or cost smaller than float32's smallest normal number is sent
#: as 0, what float32 would make of it anyway.
_FLOAT32_TINY = float(np.finfo(np.float32).tiny)


def _value(v: float) -> str:
    """A feature or a cost as VW reads it (see :data:`_FLOAT32_TINY`)."""
    return _number(0.0 if abs(v) < _FLOAT32_TINY else v)


def _normalized(pmf: list[float]) -> tuple[float, float]:
    """VW's probabilities of accept and reject scaled by 1/sum, as a user's sampler scales them."""
    scale = 1 / sum(pmf)
    return pmf[0] * scale, pmf[1] * scale


def squarecb_gap(p_accept: float, p_reject: float) -> float:
    """h = γ·(ĉ_reject − ĉ_accept) from SquareCB's two probabilities (scaled to sum 1), read
    from the smaller one, which SquareCB computes directly as 1/(2 + γ·gap)."""
    if p_accept >= p_reject:
        return 1.0 / p_reject - 2.0
    return 2.0 - 1.0 / p_accept


def squarecb_threshold(u: float) -> float:
    """F⁻¹(u): the h above which SquareCB's probability of accepting exceeds u (0 < u < 1)."""
    return 1.0 / (1.0 - u) - 2.0 if u >= 0.5 else 2.0 - 1.0 / u


def _probe_points(d: int) -> np.ndarray:
    """Where h is read each round: the origin, the d unit vectors, then the check point (a
    point off every axis, inside the unit ball)."""
    points = np.zeros((d + 2, d))
    points[1 + np.arange(d), np.arange(d)] = 1.0
    points[d + 1] = -0.5 / np.sqrt(d) * (1.0 + np.arange(d) / d)
    return points


class _VWBox(Box):
    def __init__(self, d: int, workspace: _Workspace, rng: np.random.Generator) -> None:
        super().__init__(d, intercept=True)  # VW's constant feature is always there
        self.workspace = workspace
        self.rng = rng
        self.u: float | None = None
        self.last: tuple[bytes, tuple[float, float]] | None = None  # the last pmf asked for
        self.probes = _probe_points(d)
        self.unidentified = 0  # rounds whose check failed: agents searched VW's rule itself
        self.parsed: list | None = None  # the probes as VW's examples (see :meth:`twin`)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "parsed": None}  # VW's examples belong to its workspace

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update({"probes": _probe_points(state["d"]), "unidentified": 0,
                              "parsed": None} | state)  # older pickles have no probes

    def example(self, z: np.ndarray, label: tuple[int, float, float] | None = None) -> list[str]:
        shared = "shared |s " + " ".join(f"x{i}:{_value(v)}" for i, v in enumerate(z))
        lines = [shared]
        for action, text in enumerate(ACTIONS):
            if label is not None and label[0] == action:
                text = f"0:{_value(label[1])}:{_number(label[2])} {text}"
            lines.append(text)
        return lines

    def pmf(self, z: np.ndarray) -> tuple[float, float]:
        """VW's probabilities of accept and reject at z, normalized as a user's sampler does."""
        key = np.asarray(z, float).tobytes()
        if self.last is not None and self.last[0] == key:  # VW's model has not moved since
            return self.last[1]
        self.last = (key, _normalized(self.workspace.ws.predict(self.example(z))))
        return self.last[1]

    def freeze(self) -> None:
        self.u = float(self.rng.random())

    def twin(self) -> LinearTwin | None:
        """The round's half-space h(x') ≥ F⁻¹(u), less the margin (module docstring); None
        when h read at the check point is off the hyperplane read at the others."""
        if self.u is None or not 0.0 < self.u < 1.0:
            return None
        ws = self.workspace.ws
        if self.parsed is None:
            # Parsed once and predicted on every round (a third of a prediction's cost is the
            # parse); never finished, so VW does not recycle them. tests/peers checks their
            # pmf against VW's on freshly parsed text.
            self.parsed = [ws.parse(self.example(z)) for z in self.probes]
        h = np.empty(len(self.probes))
        for i, example in enumerate(self.parsed):
            h[i] = squarecb_gap(*_normalized(ws.predict(example)))
        d = self.d
        w = h[1:d + 1] - h[0]
        size = float(np.abs(w).sum()) + abs(h[0]) + 1.0
        off = h[d + 1] - (h[0] + float(w @ self.probes[d + 1]))
        if not (np.all(np.isfinite(h)) and abs(off) <= IDENTIFIED * size):
            self.unidentified += 1
            return None
        return linear_twin(w, h[0] - squarecb_threshold(self.u), MARGIN)

    def value(self, z: np.ndarray) -> float:
        p_accept, _ = self.pmf(z)
        # Inverse CDF with accept first: accept iff its cumulative probability exceeds u.
        g = p_accept - self.u
        return g if p_accept > self.u else min(g, -TINY)

    def end_round(self, x_obs: np.ndarray, arm: int, reward: float | None) -> None:
        self.u = None
        if reward is None:
            self.last = None
            return
        action = 0 if arm == 1 else 1
        probability = self.pmf(x_obs)[action]  # the chance VW's pmf gave the action taken
        self.last = None  # VW learns: its pmf moves
        self.workspace.ws.learn(self.example(x_obs, (action, -reward, probability)))


@examples_need(LIBRARY)
class VWCBExploreADF(PeerLearner):
    """Vowpal Wabbit's ``--cb_explore_adf --squarecb`` over accept and reject.

    Each round the adapter draws u ~ U[0, 1) once; the round's rule accepts x' iff the action
    sampled with u from VW's pmf at x' is accept (inverse CDF, accept first): iff VW's
    probability of accepting x' exceeds u. SquareCB puts probability 1/(2 + γ·gap) on the action
    it predicts to cost more (gap: the difference of predicted costs, γ = gamma_scale ·
    t^gamma_exponent), the rest on the other. That probability is increasing in γ times the gap
    of VW's two linear cost predictions, so the round's rule is a half-space in x': agents
    answer it in closed form, from the hyperplane read off VW's pmf each round (the module
    docstring). VW learns each action's cost by its importance-weighted online regression
    (``cb_type``), from every point it is given. Unaware of gaming; no estimate of θ (VW's
    scores are not part of its pmf output).

    Parameters
    ----------
    gamma_scale : float
        SquareCB's γ scale (``--gamma_scale``, > 0).
    gamma_exponent : float
        SquareCB's γ exponent (``--gamma_exponent``, ≥ 0).
    learning_rate : float
        VW's ``--learning_rate`` (> 0).
    cb_type : {"mtr"}
        VW's ``--cb_type``, the cost estimator. VW 9's SquareCB accepts only ``mtr`` (VW
        refuses ``ips``, ``dr`` and ``dm`` with it), so no other is offered.
    r0 : float, optional
        Reward of rejecting (None: the game's).
    feedback : {"apple", "bandit"}, optional
        Feedback mode (None: the game's).

    Examples
    --------
    >>> import numpy as np
    >>> from strategic_apple_tasting.peers import VWCBExploreADF
    >>> learner = VWCBExploreADF(r0=0.1, feedback="apple").reset(2, np.random.default_rng(0))
    >>> x = np.array([0.4, 0.3])
    >>> accepted = learner.act(x)     # the action the round's draw samples from VW's pmf at x
    >>> learner.update(x, accepted, 0.8 if accepted else None)
    True
    """

    name = "vw:cb_explore_adf"
    library = LIBRARY
    CB_TYPES = ("mtr",)

    def __init__(self, gamma_scale: float = 10.0, gamma_exponent: float = 0.5,
                 learning_rate: float = 0.5, cb_type: str = "mtr", r0: float | None = None,
                 feedback: str | None = None) -> None:
        self._require()
        self.gamma_scale = gamma_scale
        self.gamma_exponent = gamma_exponent
        self.learning_rate = learning_rate
        self.cb_type = cb_type
        self.r0 = r0
        self.feedback = feedback

    intercept = True  # VW's constant feature; not a parameter

    def _check_params(self) -> None:
        super()._check_params()
        check_number("gamma_scale", self.gamma_scale, 0.0, open_low=True)
        check_number("gamma_exponent", self.gamma_exponent, 0.0)
        check_number("learning_rate", self.learning_rate, 0.0, open_low=True)
        if self.cb_type not in self.CB_TYPES:
            raise ValueError(f"cb_type must be one of {', '.join(self.CB_TYPES)}, "
                             f"got {self.cb_type!r}")

    def arguments(self, seed: int) -> list[str]:
        """VW's command line for this configuration (``seed``: VW's ``--random_seed``)."""
        return ["--cb_explore_adf", "--squarecb", "--quiet", "--quadratic", "sa",
                "--gamma_scale", _number(self.gamma_scale),
                "--gamma_exponent", _number(self.gamma_exponent),
                "--learning_rate", _number(self.learning_rate),
                "--cb_type", self.cb_type, "--random_seed", str(seed)]

    def _box(self, d: int) -> _VWBox:
        module = self._require()
        workspace = _Workspace(module, self.arguments(seed_from(self.generator)))
        return _VWBox(d, workspace, self.generator)
