"""Procedures: skills and policies as versioned YAML files, enforced before effects.

Public names load their submodule on first use (see :mod:`tether._exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports

if TYPE_CHECKING:
    from tether.procedures.loader import ProcedureSet, load_dir
    from tether.procedures.matching import EffectFacts, evaluate
    from tether.procedures.models import Outcome, Policy, PolicyDecision, Skill
    from tether.procedures.service import (
        CheckReport,
        Current,
        ProcedureGate,
        Procedures,
        Publication,
    )

_EXPORTS = {
    "ProcedureSet": "tether.procedures.loader",
    "load_dir": "tether.procedures.loader",
    "EffectFacts": "tether.procedures.matching",
    "evaluate": "tether.procedures.matching",
    "Outcome": "tether.procedures.models",
    "Policy": "tether.procedures.models",
    "PolicyDecision": "tether.procedures.models",
    "Skill": "tether.procedures.models",
    "CheckReport": "tether.procedures.service",
    "Current": "tether.procedures.service",
    "ProcedureGate": "tether.procedures.service",
    "Procedures": "tether.procedures.service",
    "Publication": "tether.procedures.service",
}

__all__ = [
    "CheckReport",
    "Current",
    "EffectFacts",
    "Outcome",
    "Policy",
    "PolicyDecision",
    "ProcedureGate",
    "ProcedureSet",
    "Procedures",
    "Publication",
    "Skill",
    "evaluate",
    "load_dir",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
