"""The write policy: a pipeline of named rules that decides what may be remembered.

Every rule looks at the proposal (and what the store knows: recorded effects, consents,
the run's writes so far) and returns allowed, held (a person must approve) or refused,
with a reason. The verdict is the strictest answer; all reasons are kept. Rules never
see or log more than they need: the decision carries the kinds of PII found, never the
values, and the redacted text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from tether.memory import pii
from tether.memory.access import ReadAccess, Reader, reader
from tether.memory.models import (
    MemoryKind,
    MemoryProposal,
    PolicyDecision,
    RuleResult,
    Scope,
    SourceType,
    Verdict,
)
from tether.memory.poisoning import assess
from tether.permissions import memory_write_access
from tether.principals import Principal, Role

if TYPE_CHECKING:
    from tether.storage.stores import MemoryStore

PII_KINDS = frozenset(pii.PII_KINDS)
"""Personal data: redacted by default. Every other finding is a secret: refused."""

UNTRUSTED = frozenset(
    {
        SourceType.USER_MESSAGE,
        SourceType.TOOL_RESULT,
        SourceType.DOCUMENT,
        SourceType.MODEL_INFERENCE,
    }
)
CASE_FACT_SOURCES = frozenset({SourceType.TOOL_RESULT, SourceType.HUMAN})

_TRANSIENT = re.compile(
    r"\b(?:right now|at the moment|currently|for now|today|tonight|this (?:morning|afternoon|"
    r"evening|week)|just now|i'?m (?:busy|tired|hungry|in a meeting|on my way|running late)|"
    r"gerade|im moment|heute|en ce moment|aujourd'hui|ahora mismo|hoy|adesso|oggi|nu even)\b",
    re.IGNORECASE,
)


class PolicyConfig(BaseModel):
    """A tenant's settings for the write policy, and who reads which of its memories
    (``read_access``, see :mod:`tether.memory.access`)."""

    model_config = ConfigDict(frozen=True)

    confidence_threshold: float = Field(0.7, ge=0.0, le=1.0)
    pii_action: str = Field("redact", pattern="^(redact|refuse)$")
    run_write_budget: int = Field(20, ge=0)
    retention_days: dict[str, int | None] = Field(
        default_factory=lambda: {
            MemoryKind.EVENT.value: 90,
            MemoryKind.SUMMARY.value: 180,
            MemoryKind.FACT.value: 365,
            MemoryKind.PREFERENCE.value: None,
            MemoryKind.INSTRUCTION.value: None,
            MemoryKind.CONSTRAINT.value: None,
        }
    )
    disabled_rules: list[str] = Field(default_factory=list)
    reinforce_similarity: float | None = Field(
        0.9, ge=0.0, le=1.0, description="word overlap at which a new text reinforces an old one"
    )
    read_access: dict[Role, ReadAccess] = Field(
        default_factory=dict,
        description=(
            "who reads which memories: per role, the scopes and the highest sensitivity; "
            "a role left out keeps its row of tether.memory.access.DEFAULT_READ_ACCESS"
        ),
    )


def policy_txn(txn: MemoryStore, tenant_id: str) -> PolicyConfig:
    """The tenant's stored configuration (the defaults when it configured none)."""
    text = txn.get_memory_policy(tenant_id)
    return PolicyConfig() if text is None else PolicyConfig.model_validate_json(text)


def reader_txn(txn: MemoryStore, principal: Principal) -> Reader:
    """What the principal may read, under its tenant's ``read_access`` table."""
    return reader(principal, policy_txn(txn, principal.tenant_id).read_access)


@dataclass(frozen=True)
class Facts:
    """What the rules may ask the store, bound to the proposal's tenant."""

    effect_recorded: Callable[[str], bool]
    has_consent: Callable[[str], bool]
    run_writes: Callable[[str], int]


@dataclass(frozen=True)
class Screen:
    """What the write path computed before the policy runs: the text with PII and secrets
    replaced by placeholders, and the installed embedder's vector of that text."""

    text: str
    vector: Sequence[float] | None = None
    embedder_id: str | None = None


@dataclass
class Review:
    proposal: MemoryProposal
    principal: Principal
    config: PolicyConfig
    facts: Facts
    findings: list[Any] = field(default_factory=list)
    screen: Screen | None = None


Rule = Callable[[Review], RuleResult | None]


def _result(rule: str, verdict: Verdict, reason: str) -> RuleResult:
    return RuleResult(rule=rule, verdict=verdict, reason=reason)


def scope_permission(review: Review) -> RuleResult | None:
    """Who may write where: the permission map's answer (see
    :func:`tether.permissions.memory_write_access`)."""
    access = memory_write_access(review.principal, review.proposal.scope.value)
    if access is None:
        return None
    verdict, reason = access
    return _result("scope_permission", Verdict(verdict), reason)


def source_rules(review: Review) -> RuleResult | None:
    proposal = review.proposal
    case_fact = proposal.scope is Scope.CASE and proposal.kind is MemoryKind.FACT
    if case_fact and proposal.source_type not in CASE_FACT_SOURCES:
        return _result(
            "source_rules",
            Verdict.REFUSED,
            f"case facts come from tool results or people, not {proposal.source_type.value}",
        )
    if proposal.source_type is SourceType.TOOL_RESULT:
        ref = proposal.source_ref or ""
        if not ref.startswith("effect:") or not review.facts.effect_recorded(
            ref.removeprefix("effect:")
        ):
            return _result(
                "source_rules",
                Verdict.REFUSED,
                "a tool_result must reference a recorded effect of this tenant "
                "(source_ref effect:<key>)",
            )
    return None


def pii_and_secrets(review: Review) -> RuleResult | None:
    kinds = sorted({finding.kind for finding in review.findings})
    secrets = [kind for kind in kinds if kind not in PII_KINDS]
    if secrets:
        return _result(
            "pii_and_secrets", Verdict.REFUSED, f"contains secrets: {', '.join(secrets)}"
        )
    if kinds and review.config.pii_action == "refuse":
        return _result(
            "pii_and_secrets", Verdict.REFUSED, f"contains personal data: {', '.join(kinds)}"
        )
    if kinds:
        return _result("pii_and_secrets", Verdict.ALLOWED, f"redacted: {', '.join(kinds)}")
    return None


def confidence_threshold(review: Review) -> RuleResult | None:
    threshold = review.config.confidence_threshold
    if review.proposal.confidence < threshold:
        return _result(
            "confidence_threshold",
            Verdict.REFUSED,
            f"confidence {review.proposal.confidence:.2f} is below {threshold:.2f}",
        )
    return None


def transient_statements(review: Review) -> RuleResult | None:
    proposal = review.proposal
    if proposal.kind in (MemoryKind.EVENT, MemoryKind.SUMMARY):
        return None
    match = _TRANSIENT.search(proposal.text)
    if match:
        return _result("transient", Verdict.REFUSED, f"transient statement ({match.group(0)!r})")
    return None


def instruction_like(review: Review) -> RuleResult | None:
    """Poisoning: text that claims or grants authority, weakens a control or steers the
    agent is held for a person, whatever its scope and whoever proposes it (no memory
    grants authority); a model's inference about someone's privileges is refused.

    The reason names the signals that fired (:mod:`tether.memory.poisoning`)."""
    proposal = review.proposal
    if proposal.source_type is SourceType.SYSTEM:
        return None
    screen = review.screen or Screen(pii.redact(proposal.text, review.findings))
    found = assess(
        screen.text,
        proposal.source_type.value,
        vector=screen.vector,
        embedder_id=screen.embedder_id,
    )
    signals = list(found.signals)
    if proposal.kind is MemoryKind.INSTRUCTION and proposal.source_type in UNTRUSTED:
        signals.append("instruction_kind")
    if not signals:
        return None
    fired = ", ".join(signals)
    if found.frames:
        fired += f"; frames: {', '.join(found.frames)}"
    if found.rules:
        fired += f"; rules: {', '.join(found.rules)}"
    if proposal.source_type is SourceType.MODEL_INFERENCE and found.privilege:
        return _result(
            "instruction_like",
            Verdict.REFUSED,
            f"a model's inference about someone's authority or privileges is not remembered "
            f"(signals: {fired})",
        )
    return _result(
        "instruction_like",
        Verdict.HELD,
        f"claims authority, weakens a control or instructs the agent: a person must approve "
        f"(signals: {fired})",
    )


def consent(review: Review) -> RuleResult | None:
    proposal = review.proposal
    if proposal.kind is not MemoryKind.PREFERENCE or proposal.scope is not Scope.USER:
        return None
    if not review.facts.has_consent(proposal.scope_id):
        return _result(
            "consent",
            Verdict.REFUSED,
            f"user {proposal.scope_id} has not consented to storing preferences",
        )
    return None


def write_budget(review: Review) -> RuleResult | None:
    run_id = review.proposal.run_id
    if run_id is None:
        return None
    used = review.facts.run_writes(run_id)
    if used >= review.config.run_write_budget:
        return _result(
            "write_budget",
            Verdict.REFUSED,
            f"run {run_id} has used its budget of {review.config.run_write_budget} memory writes",
        )
    return None


RULES: dict[str, Rule] = {
    "scope_permission": scope_permission,
    "source_rules": source_rules,
    "pii_and_secrets": pii_and_secrets,
    "confidence_threshold": confidence_threshold,
    "transient": transient_statements,
    "instruction_like": instruction_like,
    "consent": consent,
    "write_budget": write_budget,
}

_ORDER = {Verdict.ALLOWED: 0, Verdict.HELD: 1, Verdict.REFUSED: 2}


def decide(
    proposal: MemoryProposal,
    principal: Principal,
    config: PolicyConfig,
    facts: Facts,
    *,
    findings: list[pii.Finding] | None = None,
    screen: Screen | None = None,
) -> PolicyDecision:
    """Run every enabled rule and combine their answers (strictest wins).

    ``findings`` (of :func:`tether.memory.pii.detect` on the proposal's text) and
    ``screen`` are what the write path already computed; without them they are
    computed here."""
    if findings is None:
        findings = pii.detect(proposal.text)
    review = Review(proposal, principal, config, facts, findings, screen)
    results = []
    for name, rule in RULES.items():
        if name in config.disabled_rules:
            continue
        result = rule(review)
        if result is not None:
            results.append(result)
    verdict = max((r.verdict for r in results), key=_ORDER.__getitem__, default=Verdict.ALLOWED)
    return PolicyDecision(
        verdict=verdict,
        reasons=results,
        redacted_text=pii.redact(proposal.text, review.findings),
        findings=sorted({finding.kind for finding in review.findings}),
        retention_days=config.retention_days.get(proposal.kind.value),
    )
