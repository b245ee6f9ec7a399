"""The LangGraph saver's group commit: a task's writes wait for the step's checkpoint and
share its transaction; alone they are committed when the window ends; a failing item
fails only its own caller. No database: the transaction is a fake that records batches."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from tether.integrations.langgraph._commit import GroupCommit
from tether.runs.graphs import GraphCheckpointWrite, GraphTaskWrites, GraphWrite
from tether.storage.rows import GraphCheckpointRow

DEADLINE_S = 10.0


def writes(task: str) -> GraphTaskWrites:
    return GraphTaskWrites(
        thread_id="t", checkpoint_ns="", checkpoint_id="c1", writes=[], node=task
    )


def checkpoint(checkpoint_id: str) -> GraphCheckpointWrite:
    row = GraphCheckpointRow("t", "", checkpoint_id, None, "{}", "{}")
    return GraphCheckpointWrite(checkpoint=row, blobs=[])


class Recorder:
    """Records each batch; refuses items named in ``bad``."""

    def __init__(self, bad: frozenset[str] = frozenset()) -> None:
        self.batches: list[list[GraphWrite]] = []
        self.bad = bad

    def __call__(self, items: Sequence[GraphWrite]) -> None:
        if any(isinstance(i, GraphTaskWrites) and i.node in self.bad for i in items):
            raise ValueError("refused")
        self.batches.append(list(items))


def wait_for(condition: object) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.001)


def test_writes_share_the_next_checkpoint_commit() -> None:
    recorder = Recorder()
    commit = GroupCommit(recorder, window=DEADLINE_S)
    done: list[str] = []
    waiter = threading.Thread(
        target=lambda: (commit.submit(writes("a"), wait=True), done.append("a"))
    )
    waiter.start()
    wait_for(lambda: commit._pending)
    commit.submit(checkpoint("c2"), wait=False)
    waiter.join(DEADLINE_S)
    assert done == ["a"]
    assert [[type(i).__name__ for i in batch] for batch in recorder.batches] == [
        ["GraphTaskWrites", "GraphCheckpointWrite"]
    ]


def test_writes_alone_are_committed_when_the_window_ends() -> None:
    recorder = Recorder()
    commit = GroupCommit(recorder, window=0.01)
    commit.submit(writes("a"), wait=True)
    assert len(recorder.batches) == 1


def test_a_refused_item_fails_only_its_caller() -> None:
    recorder = Recorder(bad=frozenset({"bad"}))
    commit = GroupCommit(recorder, window=DEADLINE_S)
    errors: dict[str, Exception | None] = {}

    def submit(task: str) -> None:
        try:
            commit.submit(writes(task), wait=True)
            errors[task] = None
        except ValueError as exc:
            errors[task] = exc

    threads = [threading.Thread(target=submit, args=(task,)) for task in ("good", "bad")]
    for thread in threads:
        thread.start()
    wait_for(lambda: len(commit._pending) == 2)
    commit.submit(checkpoint("c2"), wait=False)
    for thread in threads:
        thread.join(DEADLINE_S)
    assert errors["good"] is None
    assert isinstance(errors["bad"], ValueError)
    with pytest.raises(ValueError):
        commit.submit(writes("bad"), wait=False)
