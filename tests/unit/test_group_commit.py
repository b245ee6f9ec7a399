"""The group committer: steps that arrive while a commit is under way share the next one,
and each caller gets its own step's outcome. No database: the batch commit is a fake."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tether.errors import LeaseLost, StorageUnavailable
from tether.runs.models import Run
from tether.storage._group_commit import GroupCommit, StepOutcome
from tether.storage.rows import StepWrite

DEADLINE_S = 10.0


def step(run_id: str) -> StepWrite:
    """A step of run ``run_id``; the fake commit reads nothing else of it."""
    run = Run.model_construct(tenant_id="acme", run_id=run_id)
    return StepWrite(run=run, expected_version=1, expected_owner="me", cancellable=True)


class FakeCommit:
    """Records each batch; the first one waits until released, so others can queue."""

    def __init__(self, outcome: Callable[[StepWrite], StepOutcome] | None = None) -> None:
        self.batches: list[list[str]] = []
        self.first_entered = threading.Event()
        self.release_first = threading.Event()
        self.outcome = outcome or (lambda write: (7, False))
        self.fail_with: Exception | None = None

    def __call__(self, writes: Sequence[StepWrite]) -> list[StepOutcome]:
        self.batches.append([w.run.run_id for w in writes])
        if len(self.batches) == 1:
            self.first_entered.set()
            if not self.release_first.wait(DEADLINE_S):
                raise RuntimeError("the test never released the first commit")
        elif self.fail_with is not None:
            raise self.fail_with
        return [self.outcome(w) for w in writes]


def poll(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.001)


def write_in_thread(
    committer: GroupCommit, run_id: str, results: dict[str, Any]
) -> threading.Thread:
    def work() -> None:
        try:
            results[run_id] = committer.write(step(run_id))
        except BaseException as exc:
            results[run_id] = exc

    thread = threading.Thread(target=work)
    thread.start()
    return thread


def queue_behind_first(
    committer: GroupCommit, fake: FakeCommit, later: Sequence[str]
) -> tuple[list[threading.Thread], dict[str, Any]]:
    """``first`` commits alone and blocks; ``later`` queue behind it; then release."""
    results: dict[str, Any] = {}
    threads = [write_in_thread(committer, "first", results)]
    assert fake.first_entered.wait(DEADLINE_S)
    for run_id in later:
        threads.append(write_in_thread(committer, run_id, results))
    poll(lambda: committer.queued == len(later))
    fake.release_first.set()
    for thread in threads:
        thread.join(DEADLINE_S)
    return threads, results


def test_a_lone_step_commits_at_once_alone() -> None:
    fake = FakeCommit()
    fake.release_first.set()
    committer = GroupCommit(fake)
    assert committer.write(step("a")) == (7, False)
    assert fake.batches == [["a"]]
    assert (committer.batches, committer.steps) == (1, 1)


def test_steps_queued_during_a_commit_share_the_next_one() -> None:
    fake = FakeCommit()
    committer = GroupCommit(fake)
    _, results = queue_behind_first(committer, fake, ["b", "c", "d"])
    assert fake.batches[0] == ["first"]
    assert sorted(fake.batches[1]) == ["b", "c", "d"]
    assert len(fake.batches) == 2
    assert all(results[r] == (7, False) for r in ("first", "b", "c", "d"))
    assert committer.queued == 0


def test_each_caller_gets_its_own_steps_outcome() -> None:
    def outcome(write: StepWrite) -> StepOutcome:
        return LeaseLost() if write.run.run_id == "lost" else (int(write.run.run_id[-1]), False)

    fake = FakeCommit(outcome)
    committer = GroupCommit(fake)
    _, results = queue_behind_first(committer, fake, ["r1", "lost", "r2"])
    assert isinstance(results["lost"], LeaseLost)
    assert results["r1"] == (1, False)
    assert results["r2"] == (2, False)


def test_a_failed_batch_fails_every_step_in_it_each_with_its_own_error() -> None:
    fake = FakeCommit()
    fake.fail_with = StorageUnavailable("the server went away")
    committer = GroupCommit(fake)
    _, results = queue_behind_first(committer, fake, ["b", "c"])
    assert results["first"] == (7, False)
    errors = [results["b"], results["c"]]
    assert all(isinstance(e, StorageUnavailable) for e in errors)
    assert errors[0] is not errors[1]
    assert all(e.message == "the server went away" for e in errors)
    # The committer is free again.
    fake.fail_with = None
    assert committer.write(step("e")) == (7, False)


def test_an_interrupted_leader_leaves_no_follower_waiting() -> None:
    class Interrupted(BaseException):
        pass

    calls: list[int] = []

    def commit(writes: Sequence[StepWrite]) -> list[StepOutcome]:
        calls.append(len(writes))
        raise Interrupted()

    committer = GroupCommit(commit)
    with pytest.raises(Interrupted):
        committer.write(step("a"))
    assert committer.queued == 0
    with pytest.raises(Interrupted):
        committer.write(step("b"))
    assert calls == [1, 1]


def test_a_batch_takes_at_most_max_batch_steps() -> None:
    fake = FakeCommit()
    committer = GroupCommit(fake, max_batch=2)
    _, results = queue_behind_first(committer, fake, ["b", "c", "d"])
    assert [len(batch) for batch in fake.batches] == [1, 2, 1]
    assert len(results) == 4
