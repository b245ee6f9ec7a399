"""Conversation threads: turns stored once, in order, with summaries beside them."""

from tether.threads.models import NewTurn, Summary, Thread, Turn, TurnKind, TurnRole

__all__ = ["NewTurn", "Summary", "Thread", "Turn", "TurnKind", "TurnRole"]
