"""Slow, obviously-correct references the compiled code is checked against (the per-round
replay and table comparison are public: :mod:`strategic_apple_tasting.checks`)."""

from __future__ import annotations

import socket
import sys

import numpy as np

from strategic_apple_tasting.checks import replay, tables_identical, totals_at_grid

__all__ = ["closed_port", "naive_linucb", "recorded_rows", "replay", "tables_identical",
           "totals_at_grid", "with_default_sigint"]


def closed_port() -> int:
    """A loopback TCP port nothing listens on: one the system just gave this process and took
    back (a fixed port, 1 or 9, is open on some machines)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def recorded_rows(n: int = 60, d: int = 4, seed: int = 0, **fields):
    """A data set's rows with 0/1 outcomes, defaults likelier with a low first feature, +0.2 a
    repaid loan and −1 a default (``fields``: more of ``DataContexts``'s, as ``protocol``)."""
    from strategic_apple_tasting.game import DataContexts

    rng = np.random.default_rng(seed)
    rows = np.column_stack([np.ones(n), rng.normal(size=(n, d - 1))])
    repaid = (rng.random(n) < 1 / (1 + np.exp(-2 * rows[:, 1]))).astype(float)
    reward = np.where(repaid > 0, 0.2, -1.0)
    return DataContexts(rows=rows, repaid=repaid, if_repaid=reward, if_defaulted=reward.copy(),
                        **fields)

# Run as ``python -c`` before the real command: puts SIGINT back to its default and execs it.
_DEFAULT_SIGINT = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                   "os.execv(sys.argv[1], sys.argv[1:])")


def with_default_sigint(argv: list[str]) -> list[str]:
    """``argv`` to run with SIGINT at its default disposition, whatever this process inherited.

    A job started in the background by a non-interactive shell (``make test &``, nohup, some CI
    runners) ignores SIGINT, an ignored signal stays ignored across fork and exec, and Python
    installs its Ctrl-C handler only if SIGINT was not ignored when it started: a test that
    sends its child SIGINT would then wait for nothing. The command is exec'd by a small Python
    (same pid, so signals sent to the process reach the command), not set up by ``preexec_fn``,
    which is unsafe in a process with threads (xdist's workers have them).
    """
    return [sys.executable, "-c", _DEFAULT_SIGINT, *argv]


def naive_linucb(d: int, data: dict, alpha: float, ridge: float, r0: float, bandit: bool):
    """LinUCB's rule g(z) = UCB1(z) − r0 (bandit: UCB1(z) − UCB0(z) − r0), from the data with
    numpy: V_a = λI + XᵀX, θ̂_a = V_a⁻¹Xᵀy, UCB_a(z) = ⟨θ̂_a, z⟩ + α·sqrt(zᵀV_a⁻¹z).

    ``data`` maps True (arm 1) and False (arm 0) to lists of (x, reward). Returns g, vectorized
    over the rows of its argument.
    """
    def arm(points):
        X = np.array([x for x, _ in points]).reshape(-1, d)
        y = np.array([r for _, r in points])
        inv = np.linalg.inv(ridge * np.eye(d) + X.T @ X)
        return inv @ X.T @ y, inv

    t1, m1 = arm(data[True])
    t0, m0 = arm(data[False])

    def g(z):
        z = np.atleast_2d(z)
        out = z @ t1 + alpha * np.sqrt(np.einsum("ij,jk,ik->i", z, m1, z)) - r0
        if bandit:
            out -= z @ t0 + alpha * np.sqrt(np.einsum("ij,jk,ik->i", z, m0, z))
        return out
    return g
