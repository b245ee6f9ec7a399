"""A user's threads in export and erasure, inside the caller's transaction.

``app.subjects`` (:mod:`tether.subjects`) calls these, so a person's turns and summaries
are exported and erased with their memories, in the same transaction.
"""

from __future__ import annotations

from typing import Any, Protocol

from tether.errors import Conflict
from tether.storage.stores import MemoryStore, ThreadStore
from tether.threads.models import Thread


class _ThreadEraseStore(ThreadStore, MemoryStore, Protocol):
    """Erasing a user's threads deletes them and first checks memory's legal holds."""


_PAGE = 5000


def export_user_threads_txn(txn: ThreadStore, tenant_id: str, user_id: str) -> list[dict[str, Any]]:
    """Every thread of ``user_id`` with its turns and summaries, JSON-ready."""
    exported = []
    for thread in txn.list_threads(tenant_id, user_id=user_id, limit=1_000_000):
        turns = []
        after = 0
        while True:
            page = txn.list_thread_turns(
                tenant_id, thread.thread_id, from_seq=after + 1, to_seq=2**62, limit=_PAGE
            )
            turns += [turn.model_dump(mode="json") for turn in page]
            if len(page) < _PAGE:
                break
            after = page[-1].seq
        summaries = txn.list_thread_summaries(tenant_id, thread.thread_id)
        exported.append(
            {
                "thread": thread.model_dump(mode="json"),
                "turns": turns,
                "summaries": [summary.model_dump(mode="json") for summary in summaries],
            }
        )
    return exported


def is_held(thread: Thread, holds: set[tuple[str, str]]) -> bool:
    """Whether a legal hold covers the thread (its user, or the conversation itself)."""
    return ("user", thread.user_id) in holds or ("conversation", thread.thread_id) in holds


def erase_user_threads_txn(
    txn: _ThreadEraseStore, tenant_id: str, user_id: str
) -> tuple[dict[str, int], list[str]]:
    """Delete every thread of ``user_id`` with its turns and summaries.

    Returns the counts (no text) and the erased thread ids (the sessions of their working
    memory).

    Raises:
        Conflict: a legal hold covers the user or one of the threads (nothing is deleted).
    """
    threads = txn.list_threads(tenant_id, user_id=user_id, limit=1_000_000)
    holds = set(txn.list_memory_holds(tenant_id))
    held = [t.thread_id for t in threads if is_held(t, holds)]
    if held:
        raise Conflict(
            f"{len(held)} of the user's threads are under legal hold; release the hold "
            "before erasing"
        )
    counts = {"threads": 0, "thread_turns": 0, "thread_summaries": 0}
    for thread in threads:
        turns, summaries = txn.delete_thread(tenant_id, thread.thread_id)
        counts["threads"] += 1
        counts["thread_turns"] += turns
        counts["thread_summaries"] += summaries
    return counts, [t.thread_id for t in threads]
