"""Context building: ``app.context`` assembles a thread's working context within a token
budget from threads, memory, runs and procedures.

Public names load their submodule on first use (see :mod:`tether._exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports

if TYPE_CHECKING:
    from tether.context.builder import Context
    from tether.context.models import (
        BuiltContext,
        ContextOptions,
        ContextSection,
        DroppedPart,
        MaskedObservation,
    )

_EXPORTS = {
    "Context": "tether.context.builder",
    "BuiltContext": "tether.context.models",
    "ContextOptions": "tether.context.models",
    "ContextSection": "tether.context.models",
    "DroppedPart": "tether.context.models",
    "MaskedObservation": "tether.context.models",
}

__all__ = [
    "BuiltContext",
    "Context",
    "ContextOptions",
    "ContextSection",
    "DroppedPart",
    "MaskedObservation",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
