"""What a procedure file may say: skills (how to work) and policies (what is allowed).

Both are YAML documents validated into these models. Policies match *declared* fields only
(the effect's name, conditions on its request arguments, its labels, the workflow), never
keywords in free text, so a policy cannot be dodged by rephrasing and cannot fire on a
word that merely appears somewhere.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from tether.procedures.regex import compile_pattern

Name = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9][a-z0-9_.-]{0,99}$"),
]
Glob = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Label = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:/-]{1,100}$")]


class Severity(enum.StrEnum):
    HARD = "hard"
    SOFT = "soft"


class Action(enum.StrEnum):
    REQUIRE_APPROVAL = "require_approval"
    FORBID = "forbid"
    WARN = "warn"


class OnForbid(enum.StrEnum):
    HUMAN_REVIEW = "human_review"
    FAIL = "fail"


class Outcome(enum.StrEnum):
    """What enforcement does with an effect, from mildest to strictest."""

    ALLOW = "allow"
    WARN = "warn"
    REQUIRE_APPROVAL = "require_approval"
    FORBID = "forbid"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Outcome.ALLOW: 0, Outcome.WARN: 1, Outcome.REQUIRE_APPROVAL: 2, Outcome.FORBID: 3}


class Op(enum.StrEnum):
    EQ = "eq"
    NE = "ne"
    IN = "in"
    NOT_IN = "not_in"
    MATCHES = "matches"
    EXISTS = "exists"
    GT = "gt"
    LT = "lt"


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Condition(_Strict):
    """A test on one field of the effect's request, addressed by a dotted path.

    ``field: customer.address.country`` reads ``request["customer"]["address"]["country"]``;
    a number in the path indexes a list. A field that is absent satisfies only ``ne``,
    ``not_in`` and ``exists: false``.
    """

    field: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")]
    op: Op
    value: Any = None

    @model_validator(mode="after")
    def _value_fits_op(self) -> Condition:
        value = self.value
        if self.op in (Op.IN, Op.NOT_IN) and not isinstance(value, list):
            raise ValueError(f"op {self.op.value} needs a list value")
        if self.op is Op.MATCHES:
            if not isinstance(value, str):
                raise ValueError("op matches needs a regular expression (a string)")
            compile_pattern(value)
        if self.op in (Op.GT, Op.LT) and (
            isinstance(value, bool) or not isinstance(value, (int, float))
        ):
            raise ValueError(f"op {self.op.value} needs a number")
        if self.op is Op.EXISTS and value is not None and not isinstance(value, bool):
            raise ValueError("op exists takes true or false (default true)")
        if self.op in (Op.EQ, Op.NE) and value is None:
            raise ValueError(f"op {self.op.value} needs a value")
        return self


class Match(_Strict):
    """Which effects a policy covers. Every given criterion must hold; within a list of
    patterns one match is enough; ``labels`` must all be present on the effect."""

    effects: list[Glob] = Field(min_length=1, description="glob patterns on the effect name")
    conditions: list[Condition] = Field(default_factory=list)
    labels: list[Label] = Field(default_factory=list)
    workflows: list[Glob] = Field(default_factory=list, description="globs on workflow names")


class Exception_(_Strict):
    """An explicit carve-out: an effect the policy matches but this also matches is let
    through. Same shape as ``match``; ``effects`` defaults to every effect."""

    effects: list[Glob] = Field(default_factory=lambda: ["*"])
    conditions: list[Condition] = Field(default_factory=list)
    labels: list[Label] = Field(default_factory=list)
    workflows: list[Glob] = Field(default_factory=list)
    reason: str = ""


class Policy(_Strict):
    """A rule enforced before an effect. ``soft`` policies only ever warn."""

    kind: Literal["policy"]
    name: Name
    description: str = Field(min_length=1)
    severity: Severity
    action: Action
    on_forbid: OnForbid = OnForbid.HUMAN_REVIEW
    match: Match
    exceptions: list[Exception_] = Field(default_factory=list)

    @property
    def outcome(self) -> Outcome:
        """What this policy does to an effect it matches."""
        if self.severity is Severity.SOFT:
            return Outcome.WARN
        return Outcome(self.action.value)


class Skill(_Strict):
    """How to do a kind of work: handed to the model as context, never enforced."""

    kind: Literal["skill"]
    name: Name
    description: str = Field(min_length=1)
    applies_to: list[Label] = Field(default_factory=list)
    steps: list[Annotated[str, StringConstraints(min_length=1)]] = Field(default_factory=list)
    instructions: str = ""

    @model_validator(mode="after")
    def _has_content(self) -> Skill:
        if not self.steps and not self.instructions.strip():
            raise ValueError("a skill needs steps or instructions")
        return self


Document = Annotated[Skill | Policy, Field(discriminator="kind")]


class PolicyHit(_Strict):
    """One policy that matched an effect, as journaled with the decision."""

    name: str
    severity: Severity
    action: Action
    on_forbid: OnForbid


class PolicyDecision(_Strict):
    """What the published policy set decided for one effect; journaled, never recomputed."""

    version: str
    outcome: Outcome
    on_forbid: OnForbid | None = None
    hits: list[PolicyHit] = Field(default_factory=list)
    excepted: list[str] = Field(default_factory=list, description="matched but carved out")

    @property
    def deciding(self) -> list[str]:
        """Names of the policies that set the outcome."""
        return [hit.name for hit in self.hits if _hit_outcome(hit) is self.outcome]

    @property
    def warnings(self) -> list[str]:
        return [hit.name for hit in self.hits if _hit_outcome(hit) is Outcome.WARN]


def _hit_outcome(hit: PolicyHit) -> Outcome:
    return Outcome.WARN if hit.severity is Severity.SOFT else Outcome(hit.action.value)
