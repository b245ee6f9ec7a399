"""LangGraph on Tether: a checkpointer and a store bound to one tenant.

``pip install 'tether[langgraph]'``, then::

    from tether.integrations.langgraph import TetherSaver, TetherStore

    graph = builder.compile(
        checkpointer=TetherSaver(app, principal), store=TetherStore(app, principal)
    )

See ``docs/langgraph.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports

if TYPE_CHECKING:
    from tether.integrations.langgraph.approvals import request_approval, resume_command
    from tether.integrations.langgraph.checkpointer import TetherSaver
    from tether.integrations.langgraph.store import TetherStore

__all__ = ["TetherSaver", "TetherStore", "request_approval", "resume_command"]

_EXPORTS = {
    "TetherSaver": "tether.integrations.langgraph.checkpointer",
    "TetherStore": "tether.integrations.langgraph.store",
    "request_approval": "tether.integrations.langgraph.approvals",
    "resume_command": "tether.integrations.langgraph.approvals",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
