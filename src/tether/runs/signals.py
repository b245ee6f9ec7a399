"""What a node's context raises to hand control back to the executor, and the answer a
``reconcile`` check gives when an effect did not happen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tether.errors import RunSignal
from tether.runs.models import Checkpoint, JournalEntry, Run, RunEvent, Wait


class NotApplied:
    """Returned by a ``reconcile`` check: the effect did not happen; run it."""


NOT_APPLIED = NotApplied()

IN_FLIGHT = "that call may still be in flight and apply later"
INTERRUPTED = (
    "was interrupted mid-effect: the worker that started it stopped before recording its "
    f"result, and {IN_FLIGHT}"
)
"""Why an intent without a result goes to review (see ``call_may_be_in_flight``)."""
CALL_ENDED = (
    "was called, but a storage fault stopped its worker before its result was recorded; "
    "it may or may not have been applied"
)
"""Why an intent whose call is known to have ended goes to review (no ``reconcile``)."""

EventSpec = tuple[str, dict[str, Any], float | None]
"""An event to write with the next commit: its type, its data and its duration (ms)."""


class Suspend(RunSignal):
    """Raised by the context to park the run on a wait (interrupt or approval)."""

    def __init__(
        self,
        wait: Wait,
        entry: JournalEntry,
        event: str,
        before: Sequence[EventSpec] = (),
        children: Sequence[tuple[Run, Checkpoint, RunEvent]] = (),
    ) -> None:
        super().__init__(wait.message)
        self.wait = wait
        self.entry = entry
        self.event = event
        self.before = list(before)
        self.children = list(children)
        """Child runs the commit that parks the run creates (see ``tether.runs.children``)."""


class Blocked(RunSignal):
    """Raised by the context when a policy forbids an effect and says the run fails."""

    def __init__(self, message: str, entry: JournalEntry, events: Sequence[EventSpec]) -> None:
        super().__init__(message)
        self.message = message
        self.entry = entry
        self.events = list(events)
