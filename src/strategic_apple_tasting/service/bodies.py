"""What a request to the service may say: its body's shape as pydantic models (a field's type
and limits, one applicant or a batch, a shadow's saved learner in base64), and what the
service's settings bound (:class:`InputCheck`: a batch's size, the features' count, the
learner's input bound).

A refusal of a body as a whole (one applicant or a batch, not both) is an error of type
:data:`WHOLE`, whose message is the answer as it stands; any other names the field first
(``app``'s handler of validation errors writes both)."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, model_validator
from pydantic_core import PydanticCustomError

from ..learners import learner_class
from . import candidates, store
from .config import ServiceConfig
from .deciding import ServiceError

#: A feature or an outcome: a finite number, at most the learner's input bound in magnitude
#: (its ``tags().input_bound``, checked per request by :class:`InputCheck`), so that no
#: request the service takes can stop the learner.
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]
DecisionId = Annotated[str, Field(min_length=1, max_length=store.MAX_ID)]
#: The type of a validation error that refuses the body as a whole: its message is the answer.
WHOLE = "whole_body"


def _without(char: str, kind: str, message: str) -> Any:
    """A check that refuses a string holding ``char`` (error ``kind``, ``message``)."""
    def check(value: str) -> str:
        if char in value:
            raise PydanticCustomError(kind, message)
        return value
    return check


# PostgreSQL cannot store NUL in text; a lone surrogate never gets this far (pydantic refuses
# a string that is not Unicode).
_storable = _without("\x00", "nul", "contains the NUL character (U+0000), which the database "
                     "cannot store")
#: A client's decision id, checked before the group commit: one the database cannot store
#: would fail the whole group's transaction.
StoredId = Annotated[DecisionId, AfterValidator(_storable)]
# GET /decisions/{id} takes the id as one path segment: one with "/" would be decided and
# then never explainable.
_addressable = _without("/", "slash", "contains '/', which GET /decisions/{id} cannot "
                        "address: give an id without it")
#: A new decision's id: stored, and addressable by its explanation's route.
NewId = Annotated[StoredId, AfterValidator(_addressable)]
#: A decision's group label: stored for figures by group, never given to the
#: learner; checked before the group commit as an id is.
GroupLabel = Annotated[str, Field(strict=True, min_length=1, max_length=store.MAX_GROUP),
                       AfterValidator(_storable)]


def _refuse(message: str) -> PydanticCustomError:
    """The body refused as a whole, for ``message``: said as it stands (no field, no value)."""
    # A message holding braces would be read as a template: none here does.
    return PydanticCustomError(WHOLE, message)


class Applicant(BaseModel):
    """One applicant: the features it shows (after any gaming) and, optionally, the client's
    id for the decision (a retry with the same id gets the same decision) and a group label
    (for figures by group; the learner never sees it)."""

    model_config = ConfigDict(extra="forbid")
    x: list[Finite]
    id: NewId | None = None
    group: GroupLabel | None = None


class DecisionsIn(BaseModel):
    """One applicant (``x``, ``id``, ``group``) or a batch (``applicants``)."""

    model_config = ConfigDict(extra="forbid")
    x: list[Finite] | None = None
    id: NewId | None = None
    group: GroupLabel | None = None
    applicants: list[Applicant] | None = None

    @model_validator(mode="after")
    def _one_or_a_batch(self) -> DecisionsIn:
        if (self.applicants is None) == (self.x is None):
            raise _refuse("give one applicant (x, and optionally id) or a batch "
                          "(applicants), not both or neither")
        if self.applicants is not None:
            for name in ("id", "group"):
                if getattr(self, name) is not None:
                    raise _refuse(f"{name} belongs in each of applicants, not beside them")
        return self


class Outcome(BaseModel):
    """The outcome (the reward of the decision taken) of decision ``id``."""

    model_config = ConfigDict(extra="forbid")
    id: StoredId
    outcome: Finite


class OutcomesIn(BaseModel):
    """One outcome (``id``, ``outcome``) or a batch (``outcomes``)."""

    model_config = ConfigDict(extra="forbid")
    id: StoredId | None = None
    outcome: Finite | None = None
    outcomes: list[Outcome] | None = None

    @property
    def single(self) -> bool:
        """Whether the body is one outcome (``id``, ``outcome``), not a batch."""
        return self.id is not None or self.outcome is not None

    @model_validator(mode="after")
    def _one_or_a_batch(self) -> OutcomesIn:
        if self.single == (self.outcomes is not None):
            raise _refuse("give one outcome (id and outcome) or a batch (outcomes), not both "
                          "or neither")
        if self.single and (self.id is None or self.outcome is None):
            raise _refuse("a single outcome needs both id and outcome")
        return self


class RollbackIn(BaseModel):
    """The earlier rule version to put back in force."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)


class AttachIn(BaseModel):
    """A shadow to attach: its name, learner (a registered name) and parameters, optionally
    a saved learner to start from (``base``, base64 of its saved form) and a canary share."""

    model_config = ConfigDict(extra="forbid")
    name: str
    learner: str
    params: dict[str, Any] = Field(default_factory=dict)
    base: str | None = None
    canary: Annotated[float, Field(ge=0.0, le=candidates.MAX_CANARY, allow_inf_nan=False)] = 0.0
    _saved: bytes | None = PrivateAttr(default=None)

    @property
    def saved(self) -> bytes | None:
        """The saved learner ``base`` gives, decoded (None if none is given)."""
        return self._saved

    # (after the fields: a field's own refusal comes first, as for any body)
    @model_validator(mode="after")
    def _decoded(self) -> AttachIn:
        if self.base is not None:
            try:
                self._saved = base64.b64decode(self.base, validate=True)
            except (binascii.Error, ValueError):
                raise _refuse("base must be a saved learner's bytes in base64") from None
        return self


class ShadowIn(BaseModel):
    """A shadow, by name (to detach or promote)."""

    model_config = ConfigDict(extra="forbid")
    name: str


class InputCheck:
    """What the service's settings refuse (422): a batch over ``max_batch``, and what the
    learner would refuse, refused first: a feature vector of another length than the
    dimension, a feature or an outcome beyond the learner's input bound, as given or once
    standardized. One per app: the bound and the scaling are read once."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        self.bound = learner_class(config.learner).tags().input_bound
        self.scaling = config.scaling()

    def batch(self, size: int, name: str) -> None:
        """Refuse (422) a batch (``name``, of ``size`` entries) empty or over ``max_batch``."""
        if not 1 <= size <= self.config.max_batch:
            raise ServiceError(422, f"{name} has {size} entries; from 1 to "
                               f"{self.config.max_batch:,} allowed (max_batch)")

    def bounded(self, value: float, where: str) -> None:
        """Refuse (422) what the learner would refuse: a value beyond its input bound."""
        if abs(value) > self.bound:
            raise ServiceError(422, f"{where}: must be at most {self.bound:g} in magnitude, the "
                               f"learner's input bound (got {value!r})")

    def features(self, x: list[float], where: str) -> list[float]:
        """``x``, an applicant's features at ``where`` of the body, once checked."""
        d, bound, scaling = self.config.dimension, self.bound, self.scaling
        if len(x) != d:
            names = f" ({', '.join(self.config.names())})" if self.config.features else ""
            raise ServiceError(422, f"{where} has {len(x)} features; the service decides on "
                               f"{d}{names}")
        for i, value in enumerate(x):
            self.bounded(value, f"{where}.{i}")
            if scaling.identity:
                continue
            # The learner meets the standardized value: a declared scale below 1 can carry
            # a raw value within the bound beyond it, and the learner would then refuse the
            # log entry (and stop) instead of this request.
            mean, scale = scaling.means[i], scaling.scales[i]
            z = (value - mean) / scale
            if abs(z) > bound:
                raise ServiceError(
                    422, f"{where}.{i}: {value!r} is {z:.6g} standardized (declared mean "
                    f"{mean:g}, scale {scale:g}), beyond the learner's input bound {bound:g}: "
                    f"give a value from {mean - bound * scale:g} to {mean + bound * scale:g}")
        return x
