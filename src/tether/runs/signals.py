"""What a node's context raises to hand control back to the executor."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tether.errors import RunSignal
from tether.runs.models import JournalEntry, Wait

EventSpec = tuple[str, dict[str, Any], float | None]
"""An event to write with the next commit: its type, its data and its duration (ms)."""


class Suspend(RunSignal):
    """Raised by the context to park the run on a wait (interrupt or approval)."""

    def __init__(
        self, wait: Wait, entry: JournalEntry, event: str, before: Sequence[EventSpec] = ()
    ) -> None:
        super().__init__(wait.message)
        self.wait = wait
        self.entry = entry
        self.event = event
        self.before = list(before)


class Blocked(RunSignal):
    """Raised by the context when a policy forbids an effect and says the run fails."""

    def __init__(self, message: str, entry: JournalEntry, events: Sequence[EventSpec]) -> None:
        super().__init__(message)
        self.message = message
        self.entry = entry
        self.events = list(events)
