"""Procedures on every backend: publishing, and policies enforced before effects.

"No destructive command without approval", "never delete production data", soft
warnings, editing the YAML without a restart, a malformed file that leaves the previous
version in force, and journaled decisions that replay unchanged after the policy changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tests.runs_support import (
    PAST_LEASE,
    TENANT,
    CaseService,
    Crash,
    Harness,
    open_harness,
    open_wait,
)
from tests.support import TestDatabase, auditor
from tether.errors import InvalidInput, PermissionDenied, ProcedureInvalid
from tether.runs import END, InterruptReason, RunContext, RunStatus, Workflow, WorkflowRegistry
from tether.runs.models import JournalKind, RunEvent

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "procedures"


@pytest.fixture
def h(backend: TestDatabase) -> Iterator[Harness]:
    with open_harness(backend) as harness:
        yield harness


def policy(name: str, action: str, effects: str, *, extra: str = "", severity: str = "hard") -> str:
    return (
        f"kind: policy\nname: {name}\ndescription: {name}\nseverity: {severity}\n"
        f'action: {action}\nmatch:\n  effects: ["{effects}"]\n{extra}'
    )


def write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for path in directory.iterdir():
        path.unlink()
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory


class Job(BaseModel):
    action: str = "shell.run"
    request: dict[str, Any] = {}
    result: Any = None
    refused: str | None = None


def job_workflow(service: CaseService, *, catch: bool = False) -> Workflow[Job]:
    """One node doing the effect its state names (retry-safe, so a crash re-sends it)."""
    wf: Workflow[Job] = Workflow("job", state=Job)

    @wf.node(start=True)
    def act(ctx: RunContext, s: Job) -> str:
        ctx.step("prepare", lambda: "ready")
        try:
            s.result = ctx.effect(
                s.action,
                lambda key: service.call(key, s.action, s.request),
                request=s.request,
                retry_safe=True,
            )
        except Exception as exc:
            if not catch:
                raise
            s.refused = type(exc).__name__
        return END

    return wf


def start(h: Harness, registry: WorkflowRegistry, action: str, request: dict[str, Any]) -> str:
    run = h.app.runs.start(h.agent, registry.get("job"), Job(action=action, request=request))
    return run.run_id


def events(h: Harness, run_id: str, kind: str) -> list[RunEvent]:
    return [e for e in h.events(run_id) if e.type == kind]


# -- publishing --------------------------------------------------------------------------


def test_publish_makes_a_version_current_audited_and_idempotent(h: Harness) -> None:
    assert h.app.procedures.current(auditor(TENANT)) is None
    first = h.app.procedures.publish(h.admin, EXAMPLES)
    assert first.changed and first.previous is None
    current = h.app.procedures.current(auditor(TENANT))
    assert current is not None
    assert current.procedures.version == first.version
    assert current.by == "alice"
    assert h.app.procedures.publish(h.admin, EXAMPLES).changed is False
    audit = [
        e for e in h.app.audit.entries(auditor(TENANT), limit=1000) if e.action.startswith("proc")
    ]
    assert [e.action for e in audit] == ["procedures.published"]
    assert audit[0].details["version"] == first.version
    blocks = h.app.procedures.render_for_context(auditor(TENANT))
    assert blocks[0].startswith("Skill deploy-staging-first")
    assert "never-delete-production-data (forbidden)" in blocks[-1]
    with pytest.raises(PermissionDenied):
        h.app.procedures.publish(h.agent, EXAMPLES)


def test_a_malformed_publish_changes_nothing(h: Harness, tmp_path: Path) -> None:
    good = h.app.procedures.publish(h.admin, EXAMPLES)
    bad = write(tmp_path / "bad", {"oops.yaml": policy("x", "explode", "db.*")})
    with pytest.raises(ProcedureInvalid, match=r"oops\.yaml: field action"):
        h.app.procedures.publish(h.admin, bad)
    current = h.app.procedures.current(auditor(TENANT))
    assert current is not None and current.procedures.version == good.version
    assert len(h.app.procedures.history(auditor(TENANT))) == 1


def test_an_empty_set_is_published_only_when_asked_for(h: Harness, tmp_path: Path) -> None:
    """An empty folder would silently remove every policy in force."""
    good = h.app.procedures.publish(h.admin, EXAMPLES)
    empty = write(tmp_path / "empty", {})
    with pytest.raises(ProcedureInvalid, match="no skills or policies"):
        h.app.procedures.publish(h.admin, empty)
    current = h.app.procedures.current(auditor(TENANT))
    assert current is not None and current.procedures.version == good.version
    assert len(h.app.procedures.history(auditor(TENANT))) == 1

    cleared = h.app.procedures.publish(h.admin, empty, allow_empty=True)
    assert cleared.changed and cleared.previous == good.version
    current = h.app.procedures.current(auditor(TENANT))
    assert current is not None and current.procedures.version == cleared.version


def test_a_worker_never_publishes_an_empty_folder(h: Harness, tmp_path: Path) -> None:
    """A worker started with an empty (or emptied) procedures folder keeps what is in
    force and says why."""
    good = h.app.procedures.publish(h.admin, EXAMPLES)
    directory = write(tmp_path / "live", {})
    service = CaseService()
    registry = WorkflowRegistry(job_workflow(service))
    executor = h.executor(
        registry, "w1", procedures_dir=str(directory), procedures_tenants=[TENANT]
    )
    run_id = start(h, registry, "db.delete_rows", {"env": "production"})
    executor.execute(TENANT, run_id)
    current = h.app.procedures.current(auditor(TENANT))
    assert current is not None and current.procedures.version == good.version
    assert not events(h, run_id, "procedures.published")
    invalid = events(h, run_id, "procedures.invalid")[0].data
    assert "no skills or policies" in invalid["error"]
    assert invalid["in_force"] == good.version


# -- enforcement -------------------------------------------------------------------------


def test_no_destructive_command_without_approval(h: Harness) -> None:
    version = h.app.procedures.publish(h.admin, EXAMPLES).version
    service = CaseService()
    registry = WorkflowRegistry(job_workflow(service))
    run_id = start(h, registry, "shell.run", {"command": "rm -rf /srv/data"})

    waiting = h.executor(registry, "w1").execute(TENANT, run_id)
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    assert service.calls == {}
    wait = open_wait(h, waiting)
    assert wait.kind is JournalKind.APPROVAL
    assert wait.request["action"] == {
        "effect": "shell.run",
        "request": {"command": "rm -rf /srv/data"},
    }
    asked = events(h, run_id, "policy.require_approval")
    assert asked[0].data["policies"] == ["no-destructive-command-without-approval"]
    assert asked[0].data["version"] == version

    h.app.runs.decide(h.approver, wait.wait_id, approve=True)
    done = h.executor(registry, "w2").execute(TENANT, run_id)
    assert done.status is RunStatus.COMPLETED
    assert list(service.calls.values()) == [1]
    intent = events(h, run_id, "effect.intent")
    assert intent[0].data["policy_version"] == version

    # A harmless command is not held up.
    other = start(h, registry, "shell.run", {"command": "ls /srv"})
    assert h.executor(registry, "w1").execute(TENANT, other).status is RunStatus.COMPLETED


def test_a_rejected_policy_approval_keeps_the_effect_from_running(h: Harness) -> None:
    h.app.procedures.publish(h.admin, EXAMPLES)
    service = CaseService()
    registry = WorkflowRegistry(job_workflow(service, catch=True))
    run_id = start(h, registry, "shell.run", {"command": "dd if=/dev/zero of=/dev/sda"})
    waiting = h.executor(registry, "w1").execute(TENANT, run_id)
    h.app.runs.decide(h.approver, open_wait(h, waiting).wait_id, approve=False)

    done = h.executor(registry, "w2").execute(TENANT, run_id)
    assert done.status is RunStatus.COMPLETED
    assert service.calls == {}
    assert h.state(run_id)["refused"] == "ActionNotApproved"


def test_never_delete_production_data(h: Harness) -> None:
    version = h.app.procedures.publish(h.admin, EXAMPLES).version
    service = CaseService()
    registry = WorkflowRegistry(job_workflow(service))
    run_id = start(h, registry, "db.delete_rows", {"env": "production", "table": "orders"})

    paused = h.executor(registry, "w1").execute(TENANT, run_id)
    assert paused.status is RunStatus.PAUSED
    assert service.calls == {}
    review = open_wait(h, paused)
    assert review.reason is InterruptReason.HUMAN_REVIEW
    assert "never-delete-production-data" in review.message
    forbidden = events(h, run_id, "policy.forbidden")
    assert forbidden[0].data["policies"] == ["never-delete-production-data"]
    assert forbidden[0].data["version"] == version

    # The explicit exception: the scratch table may be emptied.
    scratch = start(h, registry, "db.delete_rows", {"env": "production", "table": "scratch"})
    assert h.executor(registry, "w1").execute(TENANT, scratch).status is RunStatus.COMPLETED
    assert len(service.calls) == 1

    # A reviewer may let the blocked one through, explicitly.
    h.app.runs.answer(h.operator, review.wait_id, {"allow": True})
    done = h.executor(registry, "w2").execute(TENANT, run_id)
    assert done.status is RunStatus.COMPLETED
    assert len(service.calls) == 2
    assert events(h, run_id, "policy.overridden")[0].data["by"] == "olga"


def test_a_forbid_that_fails_the_run_and_a_soft_policy_that_warns(
    h: Harness, tmp_path: Path
) -> None:
    directory = write(
        tmp_path / "p",
        {
            "fail.yaml": policy("no-wipes", "forbid", "disk.wipe", extra="on_forbid: fail\n"),
            "soft.yaml": policy("big-refunds", "forbid", "payments.*", severity="soft"),
        },
    )
    version = h.app.procedures.publish(h.admin, directory).version
    service = CaseService()
    registry = WorkflowRegistry(job_workflow(service))

    wipe = start(h, registry, "disk.wipe", {"disk": "sda"})
    failed = h.executor(registry, "w1").execute(TENANT, wipe)
    assert failed.status is RunStatus.FAILED
    assert "no-wipes" in (failed.error or "")
    assert service.calls == {}
    assert events(h, wipe, "policy.forbidden")[0].data["version"] == version

    refund = start(h, registry, "payments.refund", {"amount": 5000})
    assert h.executor(registry, "w1").execute(TENANT, refund).status is RunStatus.COMPLETED
    warned = events(h, refund, "policy.warned")
    assert warned[0].data["warnings"] == ["big-refunds"]
    assert warned[0].data["version"] == version
    assert len(service.calls) == 1


def test_editing_the_yaml_changes_behaviour_without_a_restart(h: Harness, tmp_path: Path) -> None:
    directory = write(tmp_path / "live", {"deletes.yaml": policy("deletes", "warn", "db.delete*")})
    service = CaseService()
    registry = WorkflowRegistry(job_workflow(service))
    executor = h.executor(
        registry, "w1", procedures_dir=str(directory), procedures_tenants=[TENANT]
    )

    first = start(h, registry, "db.delete_rows", {"env": "production"})
    assert executor.execute(TENANT, first).status is RunStatus.COMPLETED
    first_version = events(h, first, "policy.warned")[0].data["version"]

    write(directory, {"deletes.yaml": policy("deletes", "forbid", "db.delete*")})
    second = start(h, registry, "db.delete_rows", {"env": "production"})
    assert executor.execute(TENANT, second).status is RunStatus.PAUSED
    second_version = events(h, second, "policy.forbidden")[0].data["version"]
    assert second_version != first_version
    assert events(h, second, "procedures.published")[0].data["version"] == second_version
    current = h.app.procedures.current(auditor(TENANT))
    assert current is not None and current.procedures.version == second_version

    # A malformed edit is refused, named, and the previous version stays in force.
    write(directory, {"deletes.yaml": policy("deletes", "forbid", "db.delete*", severity="x")})
    third = start(h, registry, "db.delete_rows", {"env": "production"})
    assert executor.execute(TENANT, third).status is RunStatus.PAUSED
    invalid = events(h, third, "procedures.invalid")[0].data
    assert "deletes.yaml: field severity" in invalid["error"]
    assert invalid["in_force"] == second_version
    assert events(h, third, "policy.forbidden")[0].data["version"] == second_version
    assert len(service.calls) == 1


def test_an_approved_decision_replays_even_after_the_policy_changed(
    h: Harness, tmp_path: Path
) -> None:
    directory = write(tmp_path / "p", {"a.yaml": policy("ask", "require_approval", "db.*")})
    asked_under = h.app.procedures.publish(h.admin, directory).version
    service = CaseService()
    registry = WorkflowRegistry(job_workflow(service))
    run_id = start(h, registry, "db.delete_rows", {"env": "production"})
    waiting = h.executor(registry, "w1").execute(TENANT, run_id)
    h.app.runs.decide(h.approver, open_wait(h, waiting).wait_id, approve=True)

    write(directory, {"a.yaml": policy("ask", "forbid", "db.*")})
    h.app.procedures.publish(h.admin, directory)
    done = h.executor(registry, "w2").execute(TENANT, run_id)
    assert done.status is RunStatus.COMPLETED
    assert list(service.calls.values()) == [1]
    assert events(h, run_id, "policy.forbidden") == []
    assert events(h, run_id, "effect.intent")[0].data["policy_version"] == asked_under


def test_a_journaled_decision_is_not_re_evaluated_after_a_crash(h: Harness, tmp_path: Path) -> None:
    directory = write(tmp_path / "p", {"a.yaml": policy("note", "warn", "db.*")})
    warned_under = h.app.procedures.publish(h.admin, directory).version
    service = CaseService()
    registry = WorkflowRegistry(job_workflow(service))
    run_id = start(h, registry, "db.delete_rows", {"env": "production"})

    def crash_after_effect(point: str, key: str) -> None:
        if point == "after_effect":
            raise Crash(key)

    with pytest.raises(Crash):
        h.executor(registry, "w1", faults=crash_after_effect).execute(TENANT, run_id)
    assert len(service.calls) == 1

    write(directory, {"a.yaml": policy("note", "forbid", "db.*", extra="on_forbid: fail\n")})
    h.app.procedures.publish(h.admin, directory)
    h.clock.advance(PAST_LEASE)
    done = h.executor(registry, "w2").execute(TENANT, run_id)
    assert done.status is RunStatus.COMPLETED
    assert len(service.applied) == 1
    assert events(h, run_id, "policy.forbidden") == []
    decisions = [e for e in h.journal(run_id) if e.name == "policy:db.delete_rows"]
    assert len(decisions) == 1
    assert warned_under in (decisions[0].result or "")


# -- procedures per tenant ---------------------------------------------------------------


def test_a_workers_folder_applies_only_to_the_tenants_it_is_configured_for(
    h: Harness, tmp_path: Path
) -> None:
    """A worker serving two tenants publishes its folder for the one it names; the other
    keeps what its own admin published, and an empty folder removes nothing anywhere."""
    h.app.tenants.create("globex", admin="gina")
    gina = h.app.tenants.principal("globex", "gina")
    h.app.tenants.grant(gina, "bot", ["agent"])
    theirs = h.app.procedures.publish(gina, EXAMPLES)
    directory = write(tmp_path / "live", {"deletes.yaml": policy("deletes", "warn", "db.delete*")})
    service = CaseService()
    registry = WorkflowRegistry(job_workflow(service))
    executor = h.executor(
        registry, "w1", procedures_dir=str(directory), procedures_tenants=[TENANT]
    )

    own = start(h, registry, "db.delete_rows", {"env": "production"})
    executor.execute(TENANT, own)
    other = h.app.runs.start(
        h.app.tenants.principal("globex", "bot"),
        registry.get("job"),
        Job(action="db.delete_rows", request={"env": "production"}),
    )
    assert executor.execute("globex", other.run_id).status is RunStatus.PAUSED

    mine = h.app.procedures.current(auditor(TENANT))
    assert mine is not None and mine.by == "worker:w1"
    assert [p.name for p in mine.procedures.policies] == ["deletes"]
    globex = h.app.procedures.current(gina)
    assert globex is not None and (globex.procedures.version, globex.by) == (theirs.version, "gina")
    assert [row.published_by for row in h.app.procedures.history(gina)] == ["gina"]


def test_a_procedures_folder_without_tenants_is_refused(h: Harness, tmp_path: Path) -> None:
    directory = write(tmp_path / "live", {"deletes.yaml": policy("deletes", "warn", "db.delete*")})
    registry = WorkflowRegistry(job_workflow(CaseService()))

    with pytest.raises(InvalidInput, match="names no tenants"):
        h.executor(registry, "w1", procedures_dir=str(directory))
    with pytest.raises(InvalidInput):
        h.executor(registry, "w1", procedures_dir=str(directory), procedures_tenants=["_global"])


def test_each_publication_names_the_principal_who_made_it(h: Harness) -> None:
    h.app.procedures.publish(h.admin, EXAMPLES)

    [row] = h.app.procedures.history(h.admin)
    assert row.published_by == h.admin.principal_id
    current = h.app.procedures.current(h.viewer)
    assert current is not None and current.by == h.admin.principal_id
    [entry] = [
        e for e in h.app.audit.entries(h.admin, limit=1000) if e.action == "procedures.published"
    ]
    assert entry.actor_id == h.admin.principal_id


# -- who answers a review (issue: an agent answered its own review) -----------------------


def forbidden_run(h: Harness, service: CaseService) -> tuple[WorkflowRegistry, str, str]:
    h.app.procedures.publish(h.admin, EXAMPLES)
    registry = WorkflowRegistry(job_workflow(service))
    run_id = start(h, registry, "db.delete_rows", {"env": "production", "table": "orders"})
    review = open_wait(h, h.executor(registry, "w1").execute(TENANT, run_id))
    assert review.reason is InterruptReason.HUMAN_REVIEW
    return registry, run_id, review.wait_id


@pytest.mark.parametrize("who", ["agent", "self_approving_agent", "viewer"])
def test_an_agent_cannot_answer_the_review_of_a_forbidden_effect(h: Harness, who: str) -> None:
    """The bot whose effect a policy forbade cannot answer {"allow": true} to the review
    (nor can any principal with the agent role, or without a reviewer's role): the run stays
    paused and the forbidden effect never runs."""
    service = CaseService()
    registry, run_id, wait_id = forbidden_run(h, service)
    before = h.snapshot(run_id)

    with pytest.raises(PermissionDenied):
        h.app.runs.answer(getattr(h, who), wait_id, {"allow": True})

    assert h.snapshot(run_id) == before
    assert h.executor(registry, "w2").execute(TENANT, run_id).status is RunStatus.PAUSED
    assert service.calls == {}


def test_the_principal_that_started_a_run_cannot_answer_its_review(h: Harness) -> None:
    """An operator may review, but not a run it started itself: another person must."""
    service = CaseService()
    h.app.procedures.publish(h.admin, EXAMPLES)
    registry = WorkflowRegistry(job_workflow(service))
    run = h.app.runs.start(
        h.operator,
        registry.get("job"),
        Job(action="db.delete_rows", request={"env": "production", "table": "orders"}),
    )
    review = open_wait(h, h.executor(registry, "w1").execute(TENANT, run.run_id))
    before = h.snapshot(run.run_id)

    with pytest.raises(PermissionDenied, match="started this run"):
        h.app.runs.answer(h.operator, review.wait_id, {"allow": True})

    assert h.snapshot(run.run_id) == before
    h.app.runs.answer(h.approver, review.wait_id, {"allow": True})
    assert h.executor(registry, "w2").execute(TENANT, run.run_id).status is RunStatus.COMPLETED
