"""The bundled sweeps behind the claims table, in a full and a quick size.

Each part is an ordinary sweep spec (a dictionary in the TOML format of
:mod:`..spec`), run into its own directory: ``sat reproduce`` resumes a killed run like any
sweep. The settings are chosen so that each claim's check can discriminate: a bound is checked
where it is below the regret of accept-all, a rate where a learner without the shift is linear.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import budget

#: Peer libraries' policies (one of each; :mod:`strategic_apple_tasting.peers`).
PEERS = ("mabwiser:LinUCB", "river:LinUCBDisjoint", "vw:cb_explore_adf")

#: Non-strategic contextual-bandit baselines whose regret should be linear under gaming.
NON_STRATEGIC = ("naive-greedy", "linucb", "lin-ts", "epsilon-greedy")

#: The stochastic game of the paper's main claims (d = 3, δ = 0.3, σ = 0.1).
STOCHASTIC = {"dimension": 3, "delta": 0.3, "sigma": 0.1}
#: The agents' budgets at which SA-OLS estimates δ.
BUDGETS = (0.1, 0.3, 0.5)
#: Where the explicit bounds are below accept-all's regret: small noise, small δ, d = 2.
SHARP = {"dimension": 2, "delta": 0.1, "sigma": 0.01}
#: Outcome delays D (and publication periods P, with 1 for 0) of the deciding parts.
DELAYS = (0, 10, 100, 1000)
#: The budgets of the lending parts (German credit).
LENDING_DELTAS = (0.25, 0.5, 1.0)
#: The axes of the scaling parts, one at a time about the stochastic game: the settings each
#: moves (σ; d; δ, which moves c1·c2 alone; c0 of the mixture contexts).
SCALING = {"sigma": {"sigma": [0.025, 0.05, 0.1, 0.2, 0.4]},
           "dimension": {"dimension": [2, 3, 5, 10]},
           "delta": {"delta": [0.1, 0.2, 0.3, 0.4, 0.5]},
           "c0": {"contexts": "mixture", "c0": [0.125, 0.25, 0.5, 1.0]}}
#: Where the unknown-horizon learner stays in its explore-then-commit epochs (τ* = 1.2·10⁹) and
#: each explores a small share of its rounds (T0/τ at most 13% from τ = 2¹⁵ on): on the
#: stochastic game its epochs explore all but a few of their rounds at these T.
EPOCHS = {"dimension": 2, "delta": 0.7, "sigma": 0.01}
#: The dimensions of explore-then-commit's part across d.
ETC_DIMENSIONS = (2, 5, 10)


@dataclass(frozen=True)
class Size:
    """How big each part is."""

    main: int  # horizon of the stochastic parts
    seeds: int
    etc_horizons: tuple[int, ...]
    etc_seeds: int  # ETC's commit-phase regret is small and heavy-tailed: many cheap seeds
    adversarial_horizons: tuple[int, ...]  # EXP3-SAE at d = 1
    adversarial2_horizons: tuple[int, ...]  # EXP3-SAE at d = 2
    adversarial_seeds: int
    lock_seeds: int
    lock_horizon: int
    peers_horizon: int  # the peer libraries' policies run on the Python reference path (~7,000/s)
    peers_seeds: int
    unclean_dimensions: tuple[int, ...]  # learning from gamed points: c1 from large to tiny
    unclean_deltas: tuple[float, ...]
    unclean_seeds: int  # ratios of means paired by seed are tight: fewer seeds than the rest
    sampled_horizons: tuple[int, ...]  # sampled-sae against EXP3-SAE at d = 2, 5, 10
    # sampled-sae on stochastic contexts, whose slope (0.8) is far above the √T checked
    stochastic_sampled_horizons: tuple[int, ...]
    # German credit's data game (d = 49), protocol holdout: the rule in force at T scored on
    # 300 held-out applicants a seed, whose differences are wide (about ±60 per 1,000 a seed):
    # many seeds rather than a long T
    lending_horizon: int
    lending_seeds: int
    # German credit (d = 49) with the budget estimated (each cell searches the best
    # linear rule on the rows again)
    budget_lending_horizon: int = 5_000


SIZES = {
    "full": Size(main=1_000_000, seeds=16, etc_horizons=(30_000, 100_000, 300_000, 1_000_000),
                 etc_seeds=64,
                 adversarial_horizons=(10**4, 10**5, 10**6, 10**7, 10**8),
                 adversarial2_horizons=(10**4, 10**5, 10**6, 10**7, 10**8),
                 adversarial_seeds=8, lock_seeds=4000, lock_horizon=2000,
                 peers_horizon=100_000, peers_seeds=6, unclean_dimensions=(2, 5, 10, 20),
                 unclean_deltas=(0.1, 0.3, 0.5), unclean_seeds=8,
                 sampled_horizons=(10**4, 10**5, 10**6),
                 stochastic_sampled_horizons=(10**4, 10**5, 10**6),
                 lending_horizon=20_000, lending_seeds=40),
    "quick": Size(main=50_000, seeds=8, etc_horizons=(30_000, 100_000, 300_000), etc_seeds=32,
                  adversarial_horizons=(10**4, 10**5, 10**6),
                  adversarial2_horizons=(10**4, 10**5, 10**6),
                  adversarial_seeds=4, lock_seeds=1000, lock_horizon=1000,
                  peers_horizon=5_000, peers_seeds=4, unclean_dimensions=(2, 10, 20),
                  unclean_deltas=(0.1, 0.5), unclean_seeds=8,
                  sampled_horizons=(10**4, 10**5),
                  stochastic_sampled_horizons=(10**4, 3 * 10**4),
                  lending_horizon=10_000, lending_seeds=10),
}


def _learners(*names: str, **params: dict) -> list[dict]:
    return [{"name": n, **params.get(n, {})} for n in names]


def parts(size: Size) -> dict[str, dict]:
    """Part name → sweep spec at ``size``.

    Why it is long: a table of the bundled sweeps, one entry each with the comment that says
    why its settings discriminate; it is data, read top to bottom, not logic."""
    seeds, main = size.seeds, size.main
    trap = {"contexts": "greedy-trap", "delta": 0.1, "sigma": 0.1}
    return {
        # SA-OLS, its ablations, the baselines and the unknown-horizon scheme on the paper's
        # setting; accept-all and ETC for the ratio of thm:best-both.
        "stochastic": {"horizon": main, "seeds": seeds, "game": STOCHASTIC,
                       "learners": _learners("sa-ols", "shifted-ols", *NON_STRATEGIC, "oracle",
                                             "unknown-horizon", "etc", "accept-all")},
        # The explicit bounds, where they are below accept-all's regret.
        "bounds": {"horizon": 1_000_000, "seeds": seeds, "game": SHARP,
                   "learners": _learners("sa-ols", "unknown-horizon", "accept-all")},
        # Explore-then-commit across horizons, both feedback modes; accept-all's regret over
        # the commit window is the commit bound's control.
        "etc": {"horizon": list(size.etc_horizons), "seeds": size.etc_seeds,
                "seeds_per_cell": 16,
                "game": {**SHARP, "feedback": ["apple", "bandit"]},
                "learners": _learners("etc", "accept-all")},
        # EXP3-SAE on the greedy trap, where accept-all, reject-all and SA-OLS are linear.
        "adversarial-d1": {"horizon": list(size.adversarial_horizons),
                           "seeds": size.adversarial_seeds,
                           "game": {**trap, "dimension": 1, "r0": 0.2},
                           "learners": _learners("exp3-sae", "sa-ols", "accept-all",
                                                 "reject-all")},
        "adversarial-d2": {"horizon": list(size.adversarial2_horizons),
                           "seeds": size.adversarial_seeds, "game": {**trap, "dimension": 2},
                           "learners": _learners("exp3-sae", "sa-ols", "accept-all",
                                                 "reject-all")},
        # Beyond the paper (its second open problem): exponential weights over sampled
        # strategy-aware experts, polynomial in d a round, against EXP3-SAE at d = 2, 5, 10 on
        # a trap in every coordinate plane, where a 2^-d share of directions is right (on the
        # greedy trap a quarter is, at every d; at d = 2 the two are the same but for w's side).
        "adversarial-orthogonal": {"horizon": list(size.sampled_horizons),
                                   "seeds": size.adversarial_seeds,
                                   "game": {**trap, "contexts": "orthogonal-traps",
                                            "dimension": [2, 5, 10]},
                                   "learners": _learners("sampled-sae", "exp3-sae", "sa-ols",
                                                         "accept-all", "reject-all")},
        # …and on stochastic contexts, where no sampled expert is near θ at d = 10.
        "sampled-stochastic": {"horizon": list(size.stochastic_sampled_horizons),
                               "seeds": size.adversarial_seeds,
                               "game": {"dimension": 10, "delta": 0.1, "sigma": 0.1},
                               "learners": _learners("sampled-sae", "sa-ols", "accept-all")},
        # Bandit feedback against apple tasting, on the same seeds.
        "bandit": {"horizon": main, "seeds": seeds,
                   "game": {**STOCHASTIC, "feedback": ["apple", "bandit"]},
                   "learners": _learners("sa-ols", "naive-greedy")},
        "adversarial-d2-bandit": {"horizon": list(size.adversarial2_horizons),
                                  "seeds": size.adversarial_seeds,
                                  "game": {**trap, "dimension": 2, "feedback": "bandit"},
                                  "learners": _learners("exp3-sae", "accept-all")},
        # Agent models and contexts beyond lazy agents in the uniform ball.
        "trembling": {"horizon": main, "seeds": seeds,
                      "game": {"dimension": 3, "delta": 0.2, "sigma": 0.1,
                               "agents": "trembling", "tremble": 0.05},
                      "learners": _learners("sa-ols", "naive-greedy")},
        "ellipsoid": {"horizon": main, "seeds": seeds,
                      "game": {"dimension": 2, "delta": 0.2, "sigma": 0.1,
                               "agents": "ellipsoid", "cost": [[1.0, 0.25]]},
                      "learners": _learners("sa-ols", "naive-greedy")},
        "mixture": {"horizon": 1_000_000, "seeds": seeds,
                    "game": {**SHARP, "contexts": "mixture", "c0": 0.5},
                    "learners": _learners("sa-ols", "naive-greedy", "accept-all")},
        # SA-OLS told a larger δ than the agents' (0.1): Δ = 0, 0.05, 0.1, 0.2.
        "overestimate": {"horizon": main, "seeds": seeds,
                         "game": {"dimension": 3, "delta": 0.1, "sigma": 0.1},
                         "learners": [{"name": "sa-ols", "delta": [0.1, 0.15, 0.2, 0.3]}]},
        # SA-OLS with r0 > 0: how often it locks into learning nothing, with and without the
        # option that removes it. Many seeds, short runs.
        "lock-in": {"horizon": size.lock_horizon, "seeds": size.lock_seeds,
                    "seeds_per_cell": size.lock_seeds // 4, "per_decade": 5,
                    "game": {"dimension": 2, "delta": 0.3, "sigma": 0.3, "r0": 0.2},
                    "learners": [{"name": "sa-ols"},
                                 {"name": "sa-ols", "accept_when_locked": True,
                                  "label": "sa-ols (accept when locked)"}]},
        # Peer libraries' own contextual bandits against SA-OLS, with agents that game and,
        # as the control, agents that do not (needs the peers extra).
        "peers": {"horizon": size.peers_horizon, "seeds": size.peers_seeds,
                  "seeds_per_cell": max(1, size.peers_seeds // 2),
                  "game": {"dimension": 2, "delta": 0.1, "sigma": 0.1, "truthful": [0.0, 1.0]},
                  "learners": _learners("sa-ols", *PEERS)},
        # Deciding in the real world: outcomes learned late and rules held for a period, on
        # the paper's stochastic game (accept-all, which learns nothing, must be untouched)…
        "delays": {"horizon": main, "seeds": seeds,
                   "game": {**STOCHASTIC, "delay": list(DELAYS)},
                   "learners": _learners("sa-ols", "accept-all")},
        "periods": {"horizon": main, "seeds": seeds,
                    "game": {**STOCHASTIC, "period": [1, *DELAYS[1:]]},
                    "learners": _learners("sa-ols", "accept-all")},
        # …and SA-OLS with the warm-up each imposes (d + D rounds under a delay D, P rounds
        # under a period P) and neither: what is left of the cost is staleness.
        "warm-ups": {"horizon": main, "seeds": seeds, "game": STOCHASTIC,
                     "learners": [{"name": "sa-ols", "warmup": sorted(
                         {STOCHASTIC["dimension"] + v for v in DELAYS[1:]} | set(DELAYS[1:]))}]},
        # Beyond the paper (its first open problem): learning from gamed points, over a grid
        # where c1(d, δ) runs from 0.44 to 0.008. With r0 = 0 only the rule's direction
        # matters; r0 = 0.1 makes its scale matter too, where learning from gamed points
        # without the offset (shifted-ols) is inconsistent.
        "unclean": {"horizon": main, "seeds": size.unclean_seeds,
                    "game": {"dimension": list(size.unclean_dimensions),
                             "delta": list(size.unclean_deltas), "r0": [0.0, 0.1],
                             "sigma": 0.1},
                    "learners": _learners("sa-ols", "offset-ols", "shifted-ols")},
        # …and where a mover's distance depends on where it lands (a density not symmetric
        # about the boundary), so that one offset is a biased model of it. How much worse
        # varies with θ from seed to seed: three times the seeds.
        "unclean-mixture": {"horizon": main, "seeds": 3 * size.unclean_seeds,
                            "game": {"dimension": [2, 10, 20], "delta": 0.5, "sigma": 0.1,
                                     "contexts": "mixture", "c0": 0.5},
                            "learners": _learners("sa-ols", "offset-ols")},
        # Beyond the paper: German credit's real loans at three budgets, the
        # strategy-aware learners against the naive ones with agents that game and, as the
        # control, agents that do not (needs the lending extra)…
        "lending": {"horizon": size.lending_horizon, "seeds": size.lending_seeds,
                    "game": {"data": "german-credit", "delta": list(LENDING_DELTAS),
                             "truthful": [0.0, 1.0], "protocol": "holdout"},
                    "learners": _learners("sa-ols", "offset-ols", "sa-logistic",
                                          "offset-logistic", "naive-greedy",
                                          "naive-logistic")},
        # …and the misspecification experiment: each reward the least-squares rule's own
        # prediction (σ = 0), where the linear model is exactly right.
        "lending-linear": {"horizon": size.lending_horizon, "seeds": size.lending_seeds,
                           "game": {"data": "german-credit", "delta": list(LENDING_DELTAS),
                                    "rewards": "linear", "sigma": 0.0,
                                    "protocol": "holdout"},
                           "learners": _learners("sa-ols", "naive-greedy")},
        # SA-OLS estimating the agents' budget from the applicants, against SA-OLS
        # told δ and told 2δ and δ/2 (budget.py), at each δ over d = 2, 5, 10…
        **{f"budget-{delta:g}": {"horizon": main, "seeds": seeds,
                                 "game": {"dimension": [2, 5, 10], "delta": delta,
                                          "sigma": 0.1},
                                 "learners": budget.learners(delta)}
           for delta in BUDGETS},
        # …with heterogeneous budgets and with a truthful fraction…
        "budget-heterogeneous": {"horizon": main, "seeds": seeds,
                                 "game": {"dimension": 5, "delta": 0.3, "sigma": 0.1,
                                          "agents": "heterogeneous", "budget-low": 0.1},
                                 "learners": budget.learners(0.3)},
        "budget-truthful": {"horizon": main, "seeds": seeds,
                            "game": {"dimension": 5, "delta": 0.3, "sigma": 0.1,
                                     "truthful": 0.3},
                            "learners": budget.learners(0.3)},
        # …and on German credit (needs the lending extra).
        # Each cell searches the best linear rule on the rows again: one cell per learner.
        "budget-german": {"horizon": size.budget_lending_horizon, "seeds": seeds,
                          "seeds_per_cell": seeds,
                          "game": {"data": "german-credit", "delta": 0.25},
                          "learners": budget.learners(0.25)},
        # The FICO finding on the engine: SA-OLS with gaming and without (the control).
        "budget-fico": {"horizon": main, "seeds": seeds,
                        "game": {"data": "fico", "delta": [0.0, 0.5]},
                        "learners": _learners("sa-ols")},
        # Stackelberg regret where it differs from strategic regret.
        "stackelberg": {"horizon": main // 10, "seeds": seeds,
                        "game": {"dimension": 3, "delta": 0.2, "truthful": 0.5},
                        "learners": _learners("sa-ols", "oracle", "naive-greedy")},
        # The regret's dependence on the constants of thm:stochastic-main-app, one axis at a
        # time about the stochastic game (scaling.py): σ; d; δ, which moves c1·c2; c0, through
        # mixture contexts. Naive greedy beside SA-OLS: the control of the δ axis.
        **{f"scaling-{axis}": {"horizon": main, "seeds": seeds,
                               "game": {**STOCHASTIC, **grid},
                               "learners": _learners("sa-ols", "naive-greedy")}
           for axis, grid in SCALING.items()},
        # Explore-then-commit across d at one horizon (thm:etc-reg's factor d), where T0 < T/2
        # at every d.
        "etc-dimension": {"horizon": size.etc_horizons[-2], "seeds": size.etc_seeds,
                          "seeds_per_cell": 16,
                          "game": {**SHARP, "dimension": list(ETC_DIMENSIONS)},
                          "learners": _learners("etc")},
        # The unknown-horizon learner under both feedbacks on the same seeds: in its
        # explore-then-commit epochs (τ* is past T), with SA-OLS and ETC for thm:best-both, and
        # where it has switched to SA-OLS (τ* = 312 on the sharp game).
        "unknown-horizon-bandit": {"horizon": main, "seeds": seeds,
                                   "game": {**EPOCHS, "feedback": ["apple", "bandit"]},
                                   "learners": _learners("unknown-horizon", "sa-ols", "etc",
                                                         "accept-all")},
        "unknown-horizon-bandit-sharp": {"horizon": 1_000_000, "seeds": seeds,
                                         "game": {**SHARP, "feedback": ["apple", "bandit"]},
                                         "learners": _learners("unknown-horizon",
                                                               "accept-all")},
        # The over-estimated budget's consistency (the footnote's first part): SA-OLS told
        # δ' = 0.1, 0.15, 0.2, 0.3 against agents of 0.1, as in "overestimate", with
        # shifted-ols (learns from gamed points, inconsistent) as the control of the error's rate.
        "overestimate-consistency": {"horizon": main, "seeds": seeds,
                                     "game": {"dimension": 3, "delta": 0.1, "sigma": 0.1},
                                     "learners": [{"name": "sa-ols",
                                                   "delta": [0.1, 0.15, 0.2, 0.3]},
                                                  {"name": "shifted-ols"}]},
        # lem:l2-bandit-1's bound where it is small: σ = 0.01 at d = 2 (SHARP's), with δ = 0.3
        # for a control whose error does not vanish (shifted-ols's bias grows like δ²: at
        # δ = 0.1 it is under the bound until t ≈ 700,000).
        "estimation-bound": {"horizon": main, "seeds": seeds,
                             "game": {**SHARP, "delta": 0.3},
                             "learners": _learners("sa-ols", "shifted-ols")},
        # EXP3-SAE with γ-trembling agents (app:trembling): adversarial-d1's trap, horizons
        # and seeds, the agents overshooting by up to γ (trembling.py).
        "adversarial-trembling-d1": {"horizon": list(size.adversarial_horizons),
                                     "seeds": size.adversarial_seeds,
                                     "game": {**trap, "dimension": 1, "r0": 0.2,
                                              "agents": "trembling", "tremble": 0.05},
                                     "learners": _learners("exp3-sae", "sa-ols", "accept-all",
                                                           "reject-all")},
    }


#: Size → part name → sweep spec.
PARTS = {name: parts(size) for name, size in SIZES.items()}


#: Wall time per agent-round of each part, in microseconds, on 2 workers: the full run of
#: 2026-11-30 (every part in one command, a shared 2-core machine), its cells' CPU seconds over
#: the part's agent-rounds, halved. A weight for `sat reproduce`'s estimate of the time left,
#: not a speed: agent-rounds alone would not do (the peers run on the Python reference path,
#: hundreds of times slower a round than most; German credit's d = 49 and its searches cost
#: tens of times the stochastic game's round). The quick run's short cells cost more a round
#: (start-up), in proportion much alike.
COST = {"stochastic": 0.074, "bounds": 0.036, "etc": 0.023, "adversarial-d1": 0.053,
        "adversarial-d2": 0.06, "adversarial-orthogonal": 0.63, "sampled-stochastic": 2.2,
        "bandit": 0.054, "adversarial-d2-bandit": 0.11, "trembling": 0.048, "ellipsoid": 0.042,
        "mixture": 0.034, "overestimate": 0.042, "lock-in": 0.14, "peers": 39.0,
        "delays": 0.034, "periods": 0.028, "warm-ups": 0.04, "unclean": 0.18,
        "unclean-mixture": 0.23, "lending": 1.8, "lending-linear": 1.7, "budget-0.1": 0.073,
        "budget-0.3": 0.063, "budget-0.5": 0.056, "budget-heterogeneous": 0.16,
        "budget-truthful": 0.16, "budget-german": 4.2, "budget-fico": 0.2, "stackelberg": 0.15,
        "scaling-sigma": 0.046, "scaling-dimension": 0.064, "scaling-delta": 0.046,
        "scaling-c0": 0.05, "etc-dimension": 0.048, "unknown-horizon-bandit": 0.034,
        "unknown-horizon-bandit-sharp": 0.04, "overestimate-consistency": 0.042,
        "estimation-bound": 0.039, "adversarial-trembling-d1": 0.057}


def part_cost(name: str, rounds: int) -> float:
    """The estimated cost of a part of ``rounds`` agent-rounds, in seconds at the measured pace
    (a part without a measurement counts as 1 µs a round)."""
    return rounds * COST.get(name, 1.0) * 1e-6
