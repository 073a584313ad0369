"""A learner and its game: the hyperparameters a game fills, the agent model a learner assumes,
and the checks every learner's common hyperparameters (``delta``, ``r0``, ``feedback``) get.

:class:`~.base.Learner`'s ``bind`` and ``check_params`` call these, and a learner's
``_init_state`` reads its assumed agents with :func:`belief_of` or :func:`compiled_belief_of`,
on the learner's public face only (its parameters, tags, name and ``clone``).
"""

from __future__ import annotations

from typing import Any

from ..game.agents import LazyBestResponse, is_agent_model
from ..game.best_response import check_supported
from ..game.game import FEEDBACK, check_number
from .budget import BudgetBelief, parse_estimate
from .inputs import check_bound
from .tags import LearnerTags


def bind(learner: Any, instance: Any, horizon: int | None = None) -> Any:
    """A clone of ``learner`` whose unset ``delta``, ``r0``, ``feedback``, ``agents`` (the
    learner's belief about how agents respond), ``sigma``, ``repaid`` and ``defaulted`` (for a
    game that declares its outcomes' rewards) and ``break_even_column`` (for one whose loans
    each have their own) are the game instance's, and whose unset ``horizon`` is the run's (for
    learners tuned to the horizon)."""
    game = instance.game
    # repaid, defaulted: the rewards of a game whose outcomes are loans (real data).
    known = {"delta": game.delta, "r0": game.r0, "feedback": game.feedback,
             "agents": game.agents, "sigma": game.sigma, "horizon": horizon,
             "repaid": getattr(game, "repaid", None),
             "defaulted": getattr(game, "defaulted", None),
             "break_even_column": getattr(game, "break_even_column", None)}
    params = learner.get_params()
    fill = {k: v for k, v in known.items()
            if k in params and params[k] is None and v is not None}
    if params.get("feedback") not in (None, game.feedback):
        raise ValueError(f"learner {learner.name} has feedback={params['feedback']!r} "
                         f"but the game has feedback={game.feedback!r}")
    tags = learner.tags()
    if game.feedback not in tags.supported_feedback:
        raise ValueError(f"learner {learner.name} learns under feedback "
                         f"{', '.join(tags.supported_feedback)} only, but the game has "
                         f"feedback={game.feedback!r}")
    if tags.nonlinear:
        check_supported(game.agents, learner.name)
    return learner.clone(**fill)


def belief(params: dict[str, Any], input_bound: float) -> Any:
    """The agent model a learner of these hyperparameters assumes: ``agents`` (default lazy)
    with ``delta``, or for ``delta="estimate"`` a :class:`~.budget.BudgetBelief` that learns
    the budget from the applicants."""
    model = params.get("agents")
    model = LazyBestResponse() if model is None else model
    if not is_agent_model(model):
        raise ValueError(f"agents must be an agent model, got {model!r}")
    cap = parse_estimate(params.get("delta"))
    if cap is None and params.get("delta") is not None:
        model = model._replace(delta=params["delta"])
    model.check()
    if "tremble" in model._fields:  # a length its clean band is shifted by, as by delta
        check_bound("agents.tremble", float(model.tremble), input_bound)
    if cap is not None:
        return BudgetBelief.new(model, cap)
    return model


def compiled_belief(model: Any) -> Any:
    """A belief (:func:`belief`) as compiled code receives it: a :class:`~.budget.BudgetBelief`,
    told or estimating, over the model's compiled form. One type for every built-in agent model
    and for both ways of knowing δ, so a learner's kernels compile once for all."""
    if not isinstance(model, BudgetBelief):
        model = BudgetBelief.known(model)
    return model.compiled()


def belief_of(learner: Any) -> Any:
    """The agent model ``learner`` assumes (:func:`belief` of its hyperparameters and input
    bound): ``agents`` (default lazy) with ``delta``."""
    return belief(learner.get_params(), learner.tags().input_bound)


def compiled_belief_of(learner: Any) -> BudgetBelief:
    """:func:`belief_of` as compiled code receives it, in the learner's state
    (:func:`compiled_belief`)."""
    return compiled_belief(belief_of(learner))


def check_params(name: str, params: dict[str, Any], tags: LearnerTags) -> None:
    """Refuse, in one line, a common hyperparameter out of its range: ``delta`` and ``r0``
    beyond the learner's input bound, a ``feedback`` the learner does not learn under."""
    bound = tags.input_bound
    if "delta" in params and parse_estimate(params["delta"]) is None:
        check_bound("delta", check_number("delta", params["delta"], low=0.0), bound)
    if "r0" in params:
        check_bound("r0", check_number("r0", params["r0"]), bound)
    if "feedback" in params and params["feedback"] not in FEEDBACK:
        raise ValueError(f"feedback must be one of {', '.join(FEEDBACK)}, "
                         f"got {params['feedback']!r}")
    supported = tags.supported_feedback
    if params.get("feedback") is not None and params["feedback"] not in supported:
        raise ValueError(f"feedback must be one of {', '.join(supported)} (what "
                         f"{name} learns under), got {params['feedback']!r}")
