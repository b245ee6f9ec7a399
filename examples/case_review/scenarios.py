"""The scenarios the demo goes through, found in what its runs stored, and the tests that
cover each.

Each scenario is detected from the runs' events, journals, the case service's call log,
the memory decisions and the retention pass; one the demo did not go through is reported
as not observed (and the demo fails). :data:`SCENARIO_TESTS` names the tests that show
each scenario in general; ``tests/unit/test_demo_scenarios.py`` fails when one of them
no longer exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from examples.case_review.record import CaseRun, DemoRecord
from tether.runs.models import RunEvent

SCENARIO_TESTS: dict[str, tuple[str, ...]] = {
    "question_answered": (
        "tests/conformance/test_runs_interrupts.py::test_a_question_parks_the_run_until_it_is_answered",
        "tests/conformance/test_handoff.py::test_the_case_review_at_its_approval_wait",
    ),
    "taken_over": (
        "tests/conformance/test_runs_faults.py::test_a_run_whose_lease_ran_out_is_claimed_before_older_work",
        "tests/conformance/test_runs_race.py::test_the_worker_that_lost_its_lease_commits_nothing",
    ),
    "approval_granted": (
        "tests/conformance/test_handoff.py::test_a_completed_case_review",
        "tests/conformance/test_runs_approvals.py::test_a_gated_effect_refuses_an_action_other_than_the_approved_one",
        "tests/conformance/test_runs_approvals.py::test_the_requester_cannot_approve_its_own_request",
    ),
    "approval_rejected": (
        "tests/conformance/test_handoff.py::test_a_rejected_case_review_takes_the_reject_path",
        "tests/conformance/test_runs_approvals.py::test_a_rejected_approval_gates_its_effect_shut",
    ),
    "killed_mid_effect": (
        "tests/conformance/test_runs_crash.py::test_a_crash_at_any_boundary_never_repeats_a_recorded_effect",
        "tests/conformance/test_runs_crash.py::test_an_unknown_outcome_without_retry_or_reconcile_waits_for_a_person",
        "tests/conformance/test_runs_faults.py::test_an_effect_whose_lease_was_taken_over_mid_call_goes_to_review_not_resent",
    ),
    "memory_allowed": (
        "tests/conformance/test_memory.py::test_an_allowed_proposal_is_recalled_with_its_explanation",
        "tests/unit/test_memory_policy.py::test_rule",
    ),
    "memory_held": (
        "tests/conformance/test_memory.py::test_instruction_like_text_is_held_until_a_person_approves",
        "tests/conformance/test_memory_review.py::test_pending_lists_held_memories_oldest_first_and_reject_removes_every_copy",
    ),
    "retention_expired": (
        "tests/conformance/test_memory.py::test_a_fact_expires_after_its_kinds_retention_and_is_purged_after_grace",
        "tests/conformance/test_housekeeping.py::test_the_worker_runs_a_due_pass_and_audits_its_counts",
        "tests/conformance/test_run_retention.py::test_holds_and_gc_need_their_role_and_a_reason",
    ),
}
"""Scenario -> the pytest node ids that cover it (run on SQLite for the report)."""


@dataclass(frozen=True)
class Scenario:
    key: str
    kind: str
    title: str
    observed: tuple[str, ...]
    """What the demo's runs did, one line per case (empty: not observed)."""


def find(events: list[RunEvent], type_: str, after: int = 0, **data: Any) -> RunEvent | None:
    """The first event of ``type_`` after event ``after`` whose data has ``data``."""
    return next(
        (
            event
            for event in events
            if event.seq > after
            and event.type == type_
            and all(event.data.get(k) == v for k, v in data.items())
        ),
        None,
    )


def question_answered(case: CaseRun) -> str | None:
    asked = find(case.events, "interrupt.raised", reason="clarification_required")
    if asked is None:
        return None
    answered = find(case.events, "wait.answered", asked.seq, wait_id=asked.data["wait_id"])
    claimed = answered and find(case.events, "run.claimed", answered.seq)
    done = claimed and find(case.events, "node.completed", claimed.seq)
    if answered is None or claimed is None or done is None or done.node != asked.node:
        return None
    return (
        f'`{asked.node}` asked "{asked.data["message"]}" (event {asked.seq}, '
        f"`{case.run.workflow}` waiting for the user); `{answered.data['by']}` answered "
        f"(event {answered.seq}); `{claimed.data['owner']}` claimed the run (event "
        f"{claimed.seq}), replayed `{asked.node}` from its journal with the answer and went "
        f"on to `{done.data['next']}` (event {done.seq})."
    )


def _takeover(case: CaseRun) -> tuple[RunEvent, RunEvent, RunEvent, RunEvent] | None:
    """The claim that took the run over, the claim before it, the effect intent the
    earlier worker left open, and how that effect was settled."""
    taken = find(case.events, "run.claimed", taken_over=True)
    if taken is None:
        return None
    earlier = [e for e in case.events if e.seq < taken.seq]
    claims = [e for e in earlier if e.type == "run.claimed"]
    intents = [e for e in earlier if e.type == "effect.intent"]
    if not claims or not intents:
        return None
    key = intents[-1].data["key"]
    settled = find(case.events, "effect.settled", taken.seq, key=key) or find(
        case.events, "effect.done", taken.seq, key=key
    )
    return (taken, claims[-1], intents[-1], settled) if settled else None


def taken_over(case: CaseRun) -> str | None:
    found = _takeover(case)
    if found is None:
        return None
    taken, earlier, intent, _settled = found
    checkpoint = max((c.seq for c in case.checkpoints if c.created_at <= taken.at), default=0)
    return (
        f"`{earlier.data['owner']}` stopped after event {intent.seq} and never came back; once "
        f"its lease ran out `{taken.data['owner']}` claimed the run in a new process (event "
        f"{taken.seq}, `taken_over`) and continued from checkpoint {checkpoint} at node "
        f"`{intent.node}`."
    )


def killed_mid_effect(case: CaseRun, killed: dict[str, int]) -> str | None:
    found = _takeover(case)
    if found is None:
        return None
    _taken, earlier, intent, settled = found
    owner = earlier.data["owner"]
    if owner not in killed:
        return None
    key = intent.data["key"]
    _operation, received, applied = case.calls.get(key, ("", 0, 0))
    how = settled.data.get("by", "its recorded result")
    return (
        f"`{owner}` was killed (exit {killed[owner]}) after the case service applied "
        f"`{intent.data['name']}` and before its result was recorded: intent at event "
        f"{intent.seq}, no result. The next worker settled it by `{how}` under the same key "
        f"`{key}` (event {settled.seq}): the case service received {received} call(s) for the "
        f"key and applied {applied}."
    )


def _decided(case: CaseRun, status: str) -> tuple[RunEvent, RunEvent, list[RunEvent]] | None:
    requested = find(case.events, "approval.requested")
    decided = requested and find(
        case.events, f"wait.{status}", requested.seq, wait_id=requested.data["wait_id"]
    )
    if requested is None or decided is None:
        return None
    path = [e for e in case.events if e.seq > decided.seq and e.type == "node.completed"]
    return requested, decided, path


def approval_granted(case: CaseRun) -> str | None:
    found = _decided(case, "approved")
    if found is None:
        return None
    requested, decided, path = found
    done = [e for e in case.events if e.seq > decided.seq and e.type == "effect.done"]
    applied = ", ".join(f"`{e.data['name']}`" for e in done) or "nothing"
    return (
        f"`{requested.node}` asked for approval (event {requested.seq}); "
        f"`{decided.data['by']}` approved (event {decided.seq}); the run went "
        f"{' -> '.join(f'`{e.node}`' for e in path)}, revalidated the case and applied "
        f"{applied} under the approved action's digest; it ended `{case.run.status.value}`."
    )


def approval_rejected(case: CaseRun) -> str | None:
    found = _decided(case, "rejected")
    if found is None:
        return None
    requested, decided, path = found
    effects = [e.name for e in case.effects() if e.node != "create_case_note"]
    return (
        f"`{decided.data['by']}` rejected the request of event {requested.seq} (event "
        f"{decided.seq}); the run took its reject path "
        f"{' -> '.join(f'`{e.node}`' for e in path)} and ended `{case.run.status.value}` "
        f"(outcome: {case.state.get('outcome')}); effects after the decision: "
        f"{', '.join(f'`{name}`' for name in effects) or 'none'}; the case is "
        f'`{case.case["status"]}`, its last note: "{case.notes[-1] if case.notes else ""}".'
    )


def memory_lines(record: DemoRecord, verdict: str) -> tuple[str, ...]:
    return tuple(
        f'{w.case_id}: "{w.decision.redacted_text}" ({w.proposal.source_type.value}, '
        f"{w.proposal.scope.value} {w.proposal.scope_id}) was {w.decision.verdict.value}: "
        + ("; ".join(f"{r.rule}: {r.reason}" for r in w.decision.reasons) or "no rule objected")
        for w in record.memory
        if w.decision.verdict.value == verdict
    )


def retention_lines(record: DemoRecord) -> tuple[str, ...]:
    done = record.retention
    if done is None or not done.report.runs.get("compacted"):
        return ()
    lines = []
    for case, rows in done.rows_after.items():
        was = done.rows_before[case]
        held = record.cases[case].run.run_id in done.held_runs
        lines.append(
            f"{case}: {'under a legal hold, kept whole' if held else 'compacted'}: events "
            f"{was.events} -> {rows.events}, checkpoints {was.checkpoints} -> "
            f"{rows.checkpoints}, journal {was.journal} -> {rows.journal}; effect keys "
            f"{'kept' if rows.effect_keys == was.effect_keys else 'LOST'}."
        )
    for write in record.memory:
        if write.stored is None or write.stored.expires_at is None:
            continue
        after = done.memory_after.get(write.stored.memory_id)
        lines.append(
            f"{write.case_id}: memory `{write.stored.memory_id}` (expires "
            f"{write.stored.expires_at:%Y-%m-%d}) is "
            f"`{after.status.value if after else 'purged'}` after the pass."
        )
    return tuple(lines)


def per_case(record: DemoRecord, detect: Callable[[CaseRun], str | None]) -> tuple[str, ...]:
    return tuple(f"{case}: {line}" for case, run in record.cases.items() if (line := detect(run)))


def scenarios(record: DemoRecord) -> list[Scenario]:
    return [
        Scenario(
            "question_answered",
            "resume",
            "A question for a person parks the run; the answer resumes it",
            per_case(record, question_answered),
        ),
        Scenario(
            "taken_over",
            "resume",
            "A run whose worker died resumes in a new process after the lease",
            per_case(record, taken_over),
        ),
        Scenario(
            "approval_granted",
            "resume",
            "An approval resumes the run and releases the gated effect",
            per_case(record, approval_granted),
        ),
        Scenario(
            "approval_rejected",
            "resume",
            "A rejection resumes the run down its reject path",
            per_case(record, approval_rejected),
        ),
        Scenario(
            "killed_mid_effect",
            "failure",
            "A worker SIGKILLed between a side effect and its record",
            per_case(record, lambda case: killed_mid_effect(case, record.killed)),
        ),
        Scenario(
            "memory_allowed",
            "memory",
            "A fact from a run's recorded effect is remembered",
            memory_lines(record, "allowed"),
        ),
        Scenario(
            "memory_held",
            "failure",
            "An instruction-like memory proposal is held for a person",
            memory_lines(record, "held"),
        ),
        Scenario(
            "retention_expired",
            "retention",
            "Retention expires what the runs stored; a legal hold keeps a run whole",
            retention_lines(record),
        ),
    ]
