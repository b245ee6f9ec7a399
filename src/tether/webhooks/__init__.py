"""Signed webhooks for operators: approvals requested and expiring, runs stuck, finished
and cancelled, sent to the tenant's allowlisted URLs (``app.webhooks``).

Public names load their submodule on first use (see :mod:`tether._exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether._exports import lazy_exports

if TYPE_CHECKING:
    from tether.webhooks.models import Delivery, Endpoint, WebhookEvent
    from tether.webhooks.service import Webhooks
    from tether.webhooks.signing import sign, verify

_EXPORTS = {
    "Delivery": "tether.webhooks.models",
    "Endpoint": "tether.webhooks.models",
    "WebhookEvent": "tether.webhooks.models",
    "Webhooks": "tether.webhooks.service",
    "sign": "tether.webhooks.signing",
    "verify": "tether.webhooks.signing",
}

__all__ = ["Delivery", "Endpoint", "WebhookEvent", "Webhooks", "sign", "verify"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
