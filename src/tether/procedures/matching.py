"""Evaluating policies against an effect, and finding policies that contradict each other.

Evaluation is pure: (policies, effect name, request, labels, workflow) -> decision. The
strictest matching policy sets the outcome (forbid > require approval > warn > allow);
every matching policy is named in the decision.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from tether.procedures.models import (
    Condition,
    Exception_,
    Match,
    OnForbid,
    Op,
    Outcome,
    Policy,
    PolicyDecision,
    PolicyHit,
)
from tether.procedures.regex import full_match

_MISSING = object()


@dataclass(frozen=True)
class EffectFacts:
    """What a policy may look at: the declared facts of one effect about to happen."""

    name: str
    request: Any
    labels: frozenset[str] = frozenset()
    workflow: str = ""


def lookup(request: Any, path: str) -> Any:
    """The value at a dotted ``path`` inside ``request``, or ``_MISSING``."""
    value = request
    for part in path.split("."):
        if isinstance(value, Mapping):
            if part not in value:
                return _MISSING
            value = value[part]
        elif isinstance(value, list) and part.isdigit():
            index = int(part)
            if index >= len(value):
                return _MISSING
            value = value[index]
        else:
            return _MISSING
    return value


def condition_holds(condition: Condition, request: Any) -> bool:
    value = lookup(request, condition.field)
    expected = condition.value
    op = condition.op
    if op is Op.EXISTS:
        return (value is not _MISSING) is (True if expected is None else bool(expected))
    if value is _MISSING:
        return op in (Op.NE, Op.NOT_IN)
    if op is Op.EQ:
        return bool(value == expected)
    if op is Op.NE:
        return bool(value != expected)
    if op is Op.IN:
        return bool(value in expected)
    if op is Op.NOT_IN:
        return bool(value not in expected)
    if op is Op.MATCHES:
        return isinstance(value, str) and full_match(expected, value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return bool(value > expected) if op is Op.GT else bool(value < expected)


def _globs(patterns: Sequence[str], value: str) -> bool:
    return any(fnmatchcase(value, pattern) for pattern in patterns)


def matches(match: Match | Exception_, facts: EffectFacts) -> bool:
    if not _globs(match.effects, facts.name):
        return False
    if match.workflows and not _globs(match.workflows, facts.workflow):
        return False
    if not set(match.labels) <= facts.labels:
        return False
    return all(condition_holds(condition, facts.request) for condition in match.conditions)


def evaluate(version: str, policies: Sequence[Policy], facts: EffectFacts) -> PolicyDecision:
    """Decide what happens to the effect described by ``facts`` under ``policies``."""
    hits: list[PolicyHit] = []
    excepted: list[str] = []
    outcome = Outcome.ALLOW
    on_forbid: OnForbid | None = None
    for policy in policies:
        if not matches(policy.match, facts):
            continue
        if any(matches(exception, facts) for exception in policy.exceptions):
            excepted.append(policy.name)
            continue
        hits.append(
            PolicyHit(
                name=policy.name,
                severity=policy.severity,
                action=policy.action,
                on_forbid=policy.on_forbid,
            )
        )
        if policy.outcome.rank > outcome.rank:
            outcome = policy.outcome
        if policy.outcome is Outcome.FORBID and on_forbid is not OnForbid.FAIL:
            on_forbid = policy.on_forbid
    return PolicyDecision(
        version=version, outcome=outcome, on_forbid=on_forbid, hits=hits, excepted=excepted
    )


# -- contradictions ----------------------------------------------------------------------


def _literal_prefix(pattern: str) -> str:
    for index, char in enumerate(pattern):
        if char in "*?[":
            return pattern[:index]
    return pattern


def globs_overlap(left: Collection[str], right: Collection[str]) -> bool:
    """Whether some name could match a pattern of each list (conservative: may say yes
    for two patterns that share only a prefix)."""
    for a in left:
        for b in right:
            if fnmatchcase(a, b) or fnmatchcase(b, a):
                return True
            wild_a, wild_b = _literal_prefix(a) != a, _literal_prefix(b) != b
            if wild_a and wild_b:
                pa, pb = _literal_prefix(a), _literal_prefix(b)
                if pa.startswith(pb) or pb.startswith(pa):
                    return True
    return False


def _conditions_exclusive(left: Condition, right: Condition) -> bool:
    """Whether no request can satisfy both conditions on the same field."""
    ops = {left.op, right.op}
    if ops == {Op.EXISTS}:
        return (left.value is not False) is not (right.value is not False)
    if Op.EXISTS in ops:
        other = right if left.op is Op.EXISTS else left
        exists = left if left.op is Op.EXISTS else right
        return exists.value is False and other.op not in (Op.NE, Op.NOT_IN)
    for a, b in ((left, right), (right, left)):
        if a.op is Op.EQ and b.op is Op.EQ:
            return bool(a.value != b.value)
        if a.op is Op.EQ and b.op is Op.NE:
            return bool(a.value == b.value)
        if a.op is Op.EQ and b.op is Op.IN:
            return a.value not in b.value
        if a.op is Op.EQ and b.op is Op.NOT_IN:
            return a.value in b.value
        if a.op is Op.IN and b.op is Op.IN:
            return not any(item in b.value for item in a.value)
    return False


def matches_overlap(left: Match, right: Match) -> bool:
    """Whether one effect could be matched by both (exceptions are not considered)."""
    if not globs_overlap(left.effects, right.effects):
        return False
    if left.workflows and right.workflows and not globs_overlap(left.workflows, right.workflows):
        return False
    for a in left.conditions:
        for b in right.conditions:
            if a.field == b.field and _conditions_exclusive(a, b):
                return False
    return True


def _describe(policy: Policy) -> str:
    if policy.outcome is Outcome.FORBID:
        return "forbids"
    if policy.outcome is Outcome.REQUIRE_APPROVAL:
        return "requires approval"
    return "only warns" if policy.severity.value == "hard" else "only warns (soft)"


def contradictions(policies: Sequence[Policy], sources: Mapping[str, str]) -> list[str]:
    """Warnings for pairs of policies that can match the same effect with different
    outcomes (or different consequences of a forbid). Enforcement is still well defined
    (the strictest wins), but the pair says two things and one of them is not what
    happens."""
    warnings: list[str] = []
    for index, left in enumerate(policies):
        for right in policies[index + 1 :]:
            if not matches_overlap(left.match, right.match):
                continue
            same = left.match == right.match
            where = "have the same match" if same else "can match the same effect"
            pair = (
                f"policies {left.name!r} ({sources.get(left.name, '?')}) and "
                f"{right.name!r} ({sources.get(right.name, '?')}) {where} "
                f"(effects {', '.join(left.match.effects)} / {', '.join(right.match.effects)})"
            )
            if left.outcome is not right.outcome:
                strict = left if left.outcome.rank > right.outcome.rank else right
                warnings.append(
                    f"{pair}, but {left.name!r} {_describe(left)} while {right.name!r} "
                    f"{_describe(right)}; {strict.name!r} wins ({strict.outcome.value})"
                )
            elif left.outcome is Outcome.FORBID and left.on_forbid is not right.on_forbid:
                warnings.append(
                    f"{pair}; both forbid, but {left.name!r} sends the run to "
                    f"{left.on_forbid.value} and {right.name!r} to {right.on_forbid.value}; "
                    "fail wins"
                )
    return warnings
