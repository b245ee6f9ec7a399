"""What may refuse an effect before its intent: the published policies, and the approval
and guard a node passes to the effect.

See ``docs/procedures.md``. A decision is journaled at the negative of the effect's
position, in the same commit as the intent (or the wait, or the failure), and replayed,
never re-evaluated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NoReturn

from tether import canonical
from tether.errors import ActionNotApproved, EffectForbidden, WorkflowChanged
from tether.principals import Role
from tether.procedures.matching import EffectFacts, evaluate
from tether.procedures.models import OnForbid, Outcome, PolicyDecision
from tether.runs.models import (
    ApprovalDecision,
    ApprovalRequest,
    InterruptReason,
    JournalEntry,
    JournalKind,
    JournalStatus,
    Risk,
)
from tether.runs.signals import Blocked, EventSpec, Suspend

if TYPE_CHECKING:
    from tether.runs.claim import Claim

POLICY_APPROVAL_EXPIRES = timedelta(days=7)
"""How long an approval a policy asked for stays open."""


def _dump(decision: PolicyDecision) -> str:
    return canonical.dumps(decision.model_dump(mode="json"), trusted=True)


def _policy_data(decision: PolicyDecision, name: str, key: str) -> dict[str, Any]:
    """What policy events say: the effect, the policies that decided, and their version."""
    return {
        "effect": name,
        "key": key,
        "outcome": decision.outcome.value,
        "policies": decision.deciding,
        "warnings": decision.warnings,
        "excepted": decision.excepted,
        "version": decision.version,
    }


def check_allowed(
    name: str,
    key: str,
    digest: str,
    guard: Callable[[], str | None] | None,
    approval: ApprovalDecision | None,
) -> None:
    """Refuse an effect whose approval does not cover it or whose guard objects.

    Raises:
        ActionNotApproved: the approval is not granted or was for another action
            (``digest``), or ``guard`` returned a reason.
    """
    if approval is not None:
        if not approval.approved:
            raise ActionNotApproved(
                f"effect {name!r} ({key}) is gated by approval {approval.approval_id}, "
                f"which is {approval.status.value}"
            )
        if approval.action_digest != digest:
            raise ActionNotApproved(
                f"effect {name!r} ({key}) differs from the action approved in "
                f"{approval.approval_id}; it needs a new approval"
            )
    if guard is not None:
        reason = guard()
        if reason:
            raise ActionNotApproved(f"effect {name!r} ({key}) refused by its guard: {reason}")


class PolicyGate:
    """Applies the procedures in force for a claim to the effects its nodes make.

    One per claim, held by each node visit's context, which passes in the visit's journal
    (where decisions are recorded and replayed) and where the visit is.
    """

    def __init__(self, claim: Claim) -> None:
        self._claim = claim

    def enforce(
        self,
        journal: dict[int, JournalEntry],
        node: str,
        visit: int,
        position: int,
        name: str,
        key: str,
        request: Any,
        labels: Sequence[str],
    ) -> tuple[str | None, list[EventSpec]]:
        """Apply the published policies to an effect about to record its intent.

        The decision is journaled at the negative of the effect's position, so it never
        shifts the positions of the node's other calls. A recorded decision is replayed,
        never re-evaluated; an effect started before any decision was recorded (no
        policies were in force then) is not judged afresh either.

        Args:
            journal: the node visit's journal by position; a new decision is added to it.
            node: the node of the visit.
            visit: which visit of ``node`` this is.

        Returns the policy version and the events to write with the intent.

        Raises:
            WorkflowChanged: another call's decision is journaled at this position.
        """
        recorded = journal.get(-position)
        if recorded is not None:
            return self._replay_decision(recorded, name, key, request)
        claim = self._claim
        policies = claim.policies
        if policies is None or position in journal:
            return None, []
        plain = canonical.loads(canonical.dumps(request))
        facts = EffectFacts(name, plain, frozenset(labels), claim.run.workflow)
        decision = evaluate(policies.version, policies.policies, facts)
        data = _policy_data(decision, name, key)
        if decision.outcome is Outcome.REQUIRE_APPROVAL:
            self._ask_policy_approval(node, visit, position, name, plain, decision, data)
        if decision.outcome is Outcome.FORBID:
            self._forbid(node, visit, position, name, key, plain, decision, data)
        entry = self._decision_entry(
            node, visit, position, name, JournalKind.STEP, result=_dump(decision)
        )
        journal[-position] = entry
        claim.buffer_step(entry)
        events: list[EventSpec] = []
        if decision.outcome is Outcome.WARN:
            events.append(("policy.warned", data, None))
        return decision.version, events

    def _decision_entry(
        self, node: str, visit: int, position: int, name: str, kind: JournalKind, **fields: Any
    ) -> JournalEntry:
        return self._claim.journal_entry(node, visit, -position, f"policy:{name}", kind, **fields)

    def _ask_policy_approval(
        self,
        node: str,
        visit: int,
        position: int,
        name: str,
        request: Any,
        decision: PolicyDecision,
        data: dict[str, Any],
    ) -> NoReturn:
        action = {"effect": name, "request": request}
        names = ", ".join(decision.deciding)
        title = f"approve {name}: required by policy {names}"
        payload = ApprovalRequest(
            title=title,
            action=action,
            rationale=(
                f"policy {names} (procedures {decision.version[:12]}) requires an approval "
                f"before {name}"
            ),
            risk=Risk.HIGH,
            on_approve=f"{name} runs with exactly this request",
            on_reject=f"{name} does not run; the workflow is told it was not approved",
        ).model_dump(mode="json")
        payload["policy"] = decision.model_dump(mode="json")
        wait = self._claim.new_wait(
            node,
            visit,
            -position,
            JournalKind.APPROVAL,
            InterruptReason.APPROVAL_REQUIRED,
            title,
            payload,
            expires_in=POLICY_APPROVAL_EXPIRES,
            action_digest=canonical.digest(action),
            approver_role=Role.APPROVER.value,
        )
        entry = self._decision_entry(
            node,
            visit,
            position,
            name,
            JournalKind.APPROVAL,
            status=JournalStatus.INTENT,
            wait_id=wait.wait_id,
        )
        raise Suspend(wait, entry, "approval.requested", [("policy.require_approval", data, None)])

    def _forbid(
        self,
        node: str,
        visit: int,
        position: int,
        name: str,
        key: str,
        request: Any,
        decision: PolicyDecision,
        data: dict[str, Any],
    ) -> NoReturn:
        message = (
            f"effect {name!r} ({key}) is forbidden by policy {', '.join(decision.deciding)} "
            f"(procedures {decision.version[:12]})"
        )
        if decision.on_forbid is OnForbid.FAIL:
            entry = self._decision_entry(
                node, visit, position, name, JournalKind.STEP, result=_dump(decision)
            )
            raise Blocked(message, entry, [("policy.forbidden", data, None)])
        wait = self._claim.new_wait(
            node,
            visit,
            -position,
            JournalKind.INTERRUPT,
            InterruptReason.HUMAN_REVIEW,
            f'{message}. Answer {{"allow": true}} to let it run this once; any other answer '
            "refuses it",
            {"effect": name, "request": request, "policy": decision.model_dump(mode="json")},
        )
        entry = self._decision_entry(
            node,
            visit,
            position,
            name,
            JournalKind.INTERRUPT,
            status=JournalStatus.INTENT,
            wait_id=wait.wait_id,
        )
        raise Suspend(wait, entry, "interrupt.raised", [("policy.forbidden", data, None)])

    def _replay_decision(
        self, recorded: JournalEntry, name: str, key: str, request: Any
    ) -> tuple[str | None, list[EventSpec]]:
        """Act on the decision journaled the first time; the policies in force now do not
        matter."""
        if recorded.name != f"policy:{name}":
            raise WorkflowChanged(
                f"effect {name!r} ({key}) replaces {recorded.name!r}, whose policy decision "
                "was journaled at this position. Changed code needs a new workflow version"
            )
        if recorded.kind is JournalKind.STEP:
            decision = PolicyDecision.model_validate(canonical.loads(recorded.result or "{}"))
            if decision.outcome is Outcome.FORBID:
                raise EffectForbidden(f"effect {name!r} ({key}) was forbidden by policy")
            return decision.version, []
        wait = self._claim.waits.get(recorded.wait_id or "")
        if wait is None:
            raise EffectForbidden(f"effect {name!r} ({key}): its policy decision has no wait")
        decision = PolicyDecision.model_validate(wait.request["policy"])
        names = ", ".join(decision.deciding)
        under = f"policy {names} (procedures {decision.version[:12]})"
        if recorded.status is not JournalStatus.DONE:
            raise EffectForbidden(
                f"effect {name!r} ({key}) needed a decision under {under}; "
                f"{wait.wait_id} is {wait.status.value}"
            )
        if recorded.kind is JournalKind.APPROVAL:
            approval = ApprovalDecision.model_validate_json(recorded.result or "{}")
            if not approval.approved:
                raise ActionNotApproved(
                    f"effect {name!r} ({key}) requires an approval under {under}; "
                    f"approval {approval.approval_id} is {approval.status.value}"
                )
            action = {"effect": name, "request": canonical.loads(canonical.dumps(request))}
            if approval.action_digest != canonical.digest(action):
                raise ActionNotApproved(
                    f"effect {name!r} ({key}) differs from the action approved in "
                    f"{approval.approval_id} under {under}; it needs a new approval"
                )
            return decision.version, []
        answer = canonical.loads(recorded.result or "null")
        if isinstance(answer, dict) and answer.get("allow") is True:
            data = _policy_data(decision, name, key)
            data.update(wait_id=wait.wait_id, by=wait.resolved_by)
            return decision.version, [("policy.overridden", data, None)]
        raise EffectForbidden(
            f"effect {name!r} ({key}) is forbidden under {under}; review {wait.wait_id} "
            "did not allow it"
        )
