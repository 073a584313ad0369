"""Argument validation of every ``theory`` function: one-line errors naming the argument."""

from __future__ import annotations

import re

import numpy as np
import pytest

from strategic_apple_tasting.theory import (
    c1,
    c2,
    etc_exploration_rounds,
    etc_regret_bound,
    exp3_sae_parameters,
    exp3_sae_regret_bound,
    expected_clean_points,
    saols_regret_bound,
    switching_time,
    unknown_horizon_regret_bound,
)

NAN, INF = float("nan"), float("inf")

BAD_CALLS = [
    (c1, (0, 0.1), {}, "d must be an integer >= 1, got 0"),
    (c1, (2.5, 0.1), {}, "d must be an integer >= 1, got 2.5"),
    (c1, (3.0, 0.1), {}, "d must be an integer >= 1, got 3.0"),
    (c1, (True, 0.1), {}, "d must be an integer >= 1, got True"),
    (c1, ("3", 0.1), {}, "d must be an integer >= 1, got '3'"),
    (c1, (1, 0.1), {"surface": True}, "d must be an integer >= 2, got 1"),
    (c1, (3, -0.1), {}, "delta must be a finite number >= 0, got -0.1"),
    (c1, (3, NAN), {}, "delta must be a finite number >= 0, got nan"),
    (c1, (3, INF), {}, "delta must be a finite number >= 0, got inf"),
    (c1, (3, None), {}, "delta must be a finite number >= 0, got None"),
    (c2, (1, 0.1), {}, "d must be an integer >= 2, got 1"),
    (c2, (3, 1.0), {}, "delta must be a finite number in [0, 1) for c2"),
    (c2, (3, -1e-9), {}, "delta must be a finite number in [0, 1) for c2"),
    (c2, (3, NAN), {}, "got nan"),
    (expected_clean_points, (3, 0.1, -1), {}, "horizon must be an integer >= 0, got -1"),
    (expected_clean_points, (3, 0.1, 10.5), {}, "horizon must be an integer >= 0, got 10.5"),
    (expected_clean_points, (0, 0.1, 10), {}, "d must be an integer >= 1, got 0"),
    (expected_clean_points, (3, -1.0, 10), {}, "delta must be a finite number >= 0, got -1.0"),
    (expected_clean_points, (3, 0.1, 10), {"radius": 0.0}, "radius must be a finite number > 0"),
    (expected_clean_points, (3, 0.1, 10), {"radius": -2.0}, "got -2.0"),
    (expected_clean_points, (3, 0.1, 10), {"r0": NAN}, "r0 must be a finite number, got nan"),
    (expected_clean_points, (3, 0.1, 10), {"r0": 0.5}, "beta_norm must be a finite number > 0"),
    (
        expected_clean_points,
        (3, 0.1, 10),
        {"r0": 0.5, "beta_norm": 0.0},
        "beta_norm must be a finite number > 0 (or None), got 0.0",
    ),
    (saols_regret_bound, (0, 0.1, 10), {"sigma": 1.0}, "d must be an integer >= 1, got 0"),
    (saols_regret_bound, (1, 0.1, 10), {"sigma": 1.0, "surface": True},
     "d must be an integer >= 2, got 1"),
    (saols_regret_bound, (3, 0.1, 0), {"sigma": 1.0}, "horizon must be an integer >= 1, got 0"),
    (saols_regret_bound, (3, NAN, 10), {"sigma": 1.0}, "delta must be a finite number >= 0"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": -1.0}, "sigma must be a finite number >= 0"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": INF}, "sigma must be a finite number >= 0"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": 1.0, "gamma": 0.0}, "gamma must be a finite"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": 1.0, "gamma": 1.0}, "in (0, 1), got 1.0"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": 1.0, "c0": 0.0}, "c0 must be a finite number"),
    (saols_regret_bound, (3, 0.1, 10), {"sigma": 1.0, "c0": 1.5}, "in (0, 1], got 1.5"),
    (etc_exploration_rounds, (0, 10), {"sigma": 1.0}, "d must be an integer >= 1, got 0"),
    (etc_exploration_rounds, (2, 0), {"sigma": 1.0}, "horizon must be an integer >= 1, got 0"),
    (etc_exploration_rounds, (2, 1e6), {"sigma": 1.0}, "horizon must be an integer >= 1"),
    (etc_exploration_rounds, (2, 10), {"sigma": -1.0}, "sigma must be a finite number >= 0"),
    (etc_exploration_rounds, (2, 10), {"sigma": 1.0, "gamma": 1.0}, "gamma must be a finite"),
    (etc_regret_bound, (2, 10), {"sigma": NAN}, "sigma must be a finite number >= 0, got nan"),
    (etc_regret_bound, (2, 10), {"sigma": 1.0, "gamma": -0.1}, "in (0, 1), got -0.1"),
    (etc_regret_bound, (2, 10), {"sigma": 1.0, "c0": 0.0}, "c0 must be a finite number in (0, 1]"),
    (switching_time, (0, 0.1), {"sigma": 1.0}, "d must be an integer >= 1, got 0"),
    (switching_time, (3, -0.1), {"sigma": 1.0}, "delta must be a finite number >= 0"),
    (switching_time, (3, 0.1), {"sigma": INF}, "sigma must be a finite number >= 0, got inf"),
    (switching_time, (3, 0.1), {"sigma": 1.0, "gamma": 0.0}, "(or None for 1/T^2), got 0.0"),
    (switching_time, (3, 0.1), {"sigma": 1.0, "c0": 2.0}, "c0 must be a finite number in (0, 1]"),
    (unknown_horizon_regret_bound, (3, 0.1, 0), {"sigma": 1.0}, "horizon must be an integer >= 1"),
    (unknown_horizon_regret_bound, (3, 0.1, 9), {"sigma": 1.0, "gamma": 1.5}, "gamma must be"),
    (exp3_sae_parameters, (0, 100), {"sigma": 1.0}, "d must be an integer >= 1, got 0"),
    (exp3_sae_parameters, (2, 1), {"sigma": 1.0}, "horizon must be an integer >= 2, got 1"),
    (exp3_sae_parameters, (2, 100), {"sigma": 0.0}, "sigma must be a finite number > 0, got 0.0"),
    (exp3_sae_parameters, (2, 100), {"sigma": 1.0, "bound": 0.0}, "bound must be a finite number"),
    (exp3_sae_parameters, (2, 100), {"sigma": 1.0, "epsilon": -1.0}, "epsilon must be a finite"),
    (exp3_sae_parameters, (2, 100), {"sigma": 1.0, "epsilon": 1e-320}, "got 1e-320"),
    (
        exp3_sae_parameters,
        (2, 100),
        {"sigma": 1.0, "points_per_axis": 1},
        "points_per_axis must be an integer >= 2, got 1",
    ),
    (exp3_sae_regret_bound, (2, 1), {"sigma": 1.0}, "horizon must be an integer >= 2, got 1"),
    (exp3_sae_regret_bound, (2, 10), {"sigma": -2.0}, "sigma must be a finite number > 0"),
]


@pytest.mark.parametrize(("func", "args", "kwargs", "message"), BAD_CALLS)
def test_bad_inputs_raise_value_error_naming_argument(func, args, kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        func(*args, **kwargs)
    assert "\n" not in str(info.value)


def test_numpy_scalars_accepted():
    assert c1(np.int64(3), np.float64(0.5)) == c1(3, 0.5)
    assert c2(np.int32(3), np.float32(0.5)) == c2(3, float(np.float32(0.5)))
    assert expected_clean_points(np.int64(2), 0.0, np.int64(102)) == 52.0
    assert etc_exploration_rounds(np.int64(2), np.int64(10**9), sigma=np.float64(1.0)) == (
        etc_exploration_rounds(2, 10**9, sigma=1.0)
    )
    assert exp3_sae_parameters(np.int32(2), np.int64(1000), sigma=np.float32(1.0)).grid_size == 49
