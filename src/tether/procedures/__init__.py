"""Procedures: skills and policies as versioned YAML files, enforced before effects."""

from __future__ import annotations

from tether.procedures.loader import ProcedureSet, load_dir
from tether.procedures.matching import EffectFacts, evaluate
from tether.procedures.models import (
    Action,
    Condition,
    Match,
    OnForbid,
    Outcome,
    Policy,
    PolicyDecision,
    Severity,
    Skill,
)
from tether.procedures.service import (
    CheckReport,
    Current,
    ProcedureGate,
    Procedures,
    Publication,
)

__all__ = [
    "Action",
    "CheckReport",
    "Condition",
    "Current",
    "EffectFacts",
    "Match",
    "OnForbid",
    "Outcome",
    "Policy",
    "PolicyDecision",
    "ProcedureGate",
    "ProcedureSet",
    "Procedures",
    "Publication",
    "Severity",
    "Skill",
    "evaluate",
    "load_dir",
]
