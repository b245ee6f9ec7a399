"""Tether: durable runs and governed memory for long-running AI agents."""

from __future__ import annotations

from tether.app import Tether
from tether.audit import AuditEntry, VerifyReport
from tether.clock import Clock, FakeClock, SystemClock
from tether.config import Settings, load_settings
from tether.errors import TetherError
from tether.principals import Principal, Role

__version__ = "0.1.0"

__all__ = [
    "AuditEntry",
    "Clock",
    "FakeClock",
    "Principal",
    "Role",
    "Settings",
    "SystemClock",
    "Tether",
    "TetherError",
    "VerifyReport",
    "__version__",
    "load_settings",
]
