"""The mixed-integer check of the best linear rule: the exact optimum where every linear rule can
be enumerated, a bound never below a value, the comparison with the search (and a worse rule it
flags), the margin's limit stated in the module, and one-line errors."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from strategic_apple_tasting.engine.best_rule import exact_value, search_rules
from strategic_apple_tasting.engine.best_rule_milp import (
    MilpRule,
    compare_with_search,
    milp_best_rule,
    rule_margin,
    rule_value,
)


def _separable(rows: np.ndarray, accepted: np.ndarray) -> bool:
    """Some (β, c) accepts exactly ``accepted`` (⟨β, x⟩ ≥ c there, < c elsewhere): for finitely
    many rows, iff some (β, c) puts the rest at least 1 below c (scale β), an LP."""
    n, d = rows.shape
    # Variables (β, c): −(s_i − c) ≤ 0 on accepted rows, s_i − c ≤ −1 on the others.
    a = np.column_stack([rows, -np.ones(n)]) * np.where(accepted, -1.0, 1.0)[:, None]
    b = np.where(accepted, 0.0, -1.0)
    res = linprog(np.zeros(d + 1), A_ub=a, b_ub=b, bounds=[(None, None)] * (d + 1),
                  method="highs")
    return res.status == 0


def _enumerated_best(rows: np.ndarray, wg: np.ndarray) -> float:
    """The best linear rule's value by brute force over every accepted set that is linear."""
    best = 0.0
    for mask in itertools.product((False, True), repeat=len(rows)):
        accepted = np.array(mask)
        value = float(wg[accepted].sum())
        if value > best and _separable(rows, accepted):
            best = value
    return best


def _small(seed: int, n: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n points on a small integer grid of the plane, with an intercept; gains of both signs."""
    rng = np.random.default_rng(seed)
    cells = rng.choice(49, size=n, replace=False)
    xy = np.column_stack([cells // 7, cells % 7]).astype(float) - 3.0
    rows = np.column_stack([np.ones(n), xy])
    gain = rng.choice([-1.0, -0.5, 0.4, 1.0], size=n)
    return rows, gain, rng.dirichlet(np.ones(n))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_program_finds_the_enumerated_best_rule_in_the_plane(seed):
    """Every linear accepted set of 8 points in the plane enumerated (256 LPs): the program's
    rule is worth the best, and it proves it (a bound ≥ the optimum, and = it when optimal)."""
    rows, gain, w = _small(seed)
    best = _enumerated_best(rows, w * gain)
    found = milp_best_rule(rows, gain, w, time_limit=5)
    assert found.status == "optimal"
    assert found.value == pytest.approx(best, abs=1e-12)
    assert found.bound >= best - 1e-9
    assert found.bound >= found.value - 1e-12
    assert found.gap == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("seed", [3, 4])
def test_the_program_finds_the_best_rule_on_a_line(seed):
    """One feature and an intercept: every linear rule is a threshold on t or on −t (or accepts
    everybody or nobody), so exact_value both ways is the optimum."""
    rng = np.random.default_rng(seed)
    t = np.round(rng.normal(size=30), 2)
    rows = np.column_stack([np.ones(30), t])
    gain = np.where(np.sin(4 * t) > 0, 1.0, -1.2)
    w = np.full(30, 1 / 30)
    best = max(exact_value(t, w * gain)[0], exact_value(-t, w * gain)[0])
    found = milp_best_rule(rows, gain, time_limit=5)  # weights None: uniform
    assert found.value == pytest.approx(best, abs=1e-12)
    assert found.bound >= best - 1e-9


def test_the_value_is_the_rules_exact_value_not_the_solvers_objective():
    """``value`` is best_rule's exact evaluation of the returned (β, c), on the rows: the sum
    over the rows the rule accepts, and here (no two scores within the margin) the best
    threshold for β by exact_value, which ``free_value`` is in general."""
    rows, gain, w = _small(5, n=10)
    found = milp_best_rule(rows, gain, w, time_limit=5)
    scores = rows @ found.beta
    assert exact_value(scores, w * gain) == (found.value, found.threshold)
    assert found.free_value == found.value
    assert found.value == rule_value(rows, gain, w, found.beta, found.threshold)
    assert found.value == float((w * gain)[scores >= found.threshold].sum())
    assert found.objective <= found.value + 1e-9  # a solution's objective never exceeds its rule
    assert np.all(np.abs(found.beta) <= 1 + 1e-9) and found.beta[0] == 0  # the box; intercept


def test_the_value_is_never_above_the_bound_even_when_the_time_runs_out():
    """Optimal or stopped by its time limit, the rule's value is at most the proved bound, and
    the bound at most accepting exactly the rows that gain."""
    rng = np.random.default_rng(11)
    cases = [_small(seed) for seed in (6, 7)]
    rows = np.column_stack([np.ones(150), rng.normal(size=(150, 5))])
    cases.append((rows, np.where(rng.random(150) < 0.7, 0.2, -1.0), None))
    for rows, gain, w in cases:
        found = milp_best_rule(rows, gain, w, time_limit=0.5)
        wg = (np.full(len(rows), 1 / len(rows)) if w is None else w) * gain
        assert found.value <= found.bound + 1e-12
        assert found.bound <= wg[wg > 0].sum() + 1e-12
        assert found.status in {"optimal", "time limit"}
        assert "upper bound" in found.describe()


def test_the_comparison_flags_a_worse_rule_and_not_the_best():
    """The control: a search whose rule is deliberately worse than the best (the best
    direction turned by a right angle) shows a positive gap to the bound, the program's rule
    none; the search itself reaches the optimum here and shows none either."""
    rows, gain, w = _small(0)
    found = milp_best_rule(rows, gain, w, time_limit=5)
    search = search_rules(rows, gain, w, restarts=2)
    report = compare_with_search(rows, gain, w, search, found)
    assert report["search_gap"] == pytest.approx(0.0, abs=1e-9)
    assert report["milp_gap"] == pytest.approx(0.0, abs=1e-9)
    assert report["search_covered"]

    turned = np.array([0.0, -search.directions[search.best][2], search.directions[search.best][1]])
    value, threshold = exact_value(rows @ turned, w * gain)
    assert value < found.value  # it is worse
    worse = dataclasses.replace(search, directions=turned[None, :], best=0, value=value,
                                threshold=threshold, values=np.array([value]))
    report = compare_with_search(rows, gain, w, worse, found)
    assert report["search_value"] == value
    assert report["search_gap"] == pytest.approx(1 - value / found.bound) and value < found.bound
    assert report["milp_over_search"] > 0


def test_the_comparison_refuses_a_search_on_other_rows():
    rows, gain, w = _small(1)
    found = milp_best_rule(rows, gain, w, time_limit=5)
    other = search_rules(rows, -gain, w, restarts=1)
    with pytest.raises(ValueError, match="search must be made on these rows"):
        compare_with_search(rows, gain, w, other, found)


def test_the_bound_covers_only_rules_with_the_margin():
    """As the module says: a rule whose rejected row is closer to its boundary than the margin
    is outside the program. On a line, t = 0 loses, t = 0.001 and t = 1 gain: the best rule
    (t ≥ 0.001, worth 0.5) rejects t = 0 by 0.001 at most in the box. At margin 0.01 of the
    scores' span (0.02 in score) the program proves 1/6 (accepting t = 1 alone, or all), below
    that rule's value; at the default margin it finds it."""
    rows = np.array([[1.0, 0.0], [1.0, 0.001], [1.0, 1.0]])
    gain, w = np.array([-1.0, 1.0, 0.5]), np.full(3, 1 / 3)
    assert rule_margin(rows, np.array([0.0, 1.0]), 0.001) == pytest.approx(0.001)
    narrow = milp_best_rule(rows, gain, w, margin=0.01, time_limit=5)
    assert narrow.margin == pytest.approx(0.02)
    assert narrow.bound == pytest.approx(1 / 6) and narrow.value == pytest.approx(1 / 6)
    # Its direction's best threshold regardless of the margin is that rule, beyond the bound.
    assert narrow.free_value == pytest.approx(0.5)
    wide = milp_best_rule(rows, gain, w, time_limit=5)
    assert wide.value == pytest.approx(0.5) and wide.bound == pytest.approx(0.5)


def test_identical_rows_and_rows_worth_nothing_are_merged_and_dropped():
    """Identical rows are one binary (a rule accepts them together): +1 and −2 on the same row
    is a row that loses; rows that neither gain nor lose leave the program."""
    rows = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    found = milp_best_rule(rows, np.array([1.0, -2.0, 0.0, 0.5]), time_limit=5)
    assert found.binaries == 2
    assert found.value == pytest.approx(0.125) and found.bound == pytest.approx(0.125)
    nothing = milp_best_rule(rows, np.zeros(4), time_limit=5)
    assert (nothing.value, nothing.bound, nothing.binaries, nothing.status) == (
        0.0, 0.0, 0, "optimal")
    assert isinstance(nothing, MilpRule)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"rows": np.ones(3)}, "rows must be a non-empty \\(n, d\\) array, got shape \\(3,\\)"),
    ({"rows": np.full((3, 2), np.nan)}, "rows must be finite, got 6 NaN"),
    ({"gain": np.ones(2)}, "gain must have shape \\(3,\\) like rows' first axis, got \\(2,\\)"),
    ({"gain": np.array([1.0, np.nan, 0.0])}, "gain must be finite, got 1 NaN"),
    ({"weights": np.ones(4)}, "weights must have shape \\(3,\\)"),
    ({"weights": np.array([0.5, -0.5, 1.0])}, "weights must be finite and ≥ 0, got min -0.5"),
    ({"time_limit": 0}, "time_limit must be a finite number of seconds > 0, got 0"),
    ({"time_limit": float("nan")}, "time_limit must be .* got nan"),
    ({"time_limit": True}, "time_limit must be .* got True"),
    ({"margin": -1e-4}, "margin must be a fraction of the scores' span in \\[1e-5, 0.5\\] "
                        "\\(smaller is within the solver's integrality tolerance\\), got -0.0001"),
    ({"margin": 1e-6}, "margin must be .* got 1e-06"),
    ({"mip_rel_gap": 1.0}, "mip_rel_gap must be a number in \\[0, 1\\), got 1.0"),
])
def test_bad_input_is_one_line_naming_the_field(kwargs, message):
    args = {"rows": np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]),
            "gain": np.array([-1.0, 1.0, 1.0]), "weights": None, **kwargs}
    with pytest.raises(ValueError, match=message) as err:
        milp_best_rule(args.pop("rows"), args.pop("gain"), **args)
    assert "\n" not in str(err.value)
