"""How a webhook is signed, and how a receiver checks it.

Each request carries ``Tether-Timestamp`` (Unix seconds) and ``Tether-Signature:
v1=<hex>``, the HMAC-SHA256 under the tenant's signing secret of ``<timestamp>.<body>``
(the raw body bytes). A receiver recomputes it, compares in constant time, and refuses a
timestamp too far from its own clock, so a captured request cannot be replayed later;
``Tether-Delivery`` names the delivery, the same on every retry, so it can drop repeats.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "Tether-Signature"
TIMESTAMP_HEADER = "Tether-Timestamp"
DELIVERY_HEADER = "Tether-Delivery"
EVENT_HEADER = "Tether-Event"
TOLERANCE_S = 300


def sign(secret: bytes, timestamp: int, body: bytes) -> str:
    """The ``Tether-Signature`` value of ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret, str(timestamp).encode() + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


def verify(
    secret: bytes,
    *,
    signature: str,
    timestamp: str,
    body: bytes,
    now: float,
    tolerance_s: int = TOLERANCE_S,
) -> bool:
    """Whether ``signature`` signs ``body`` at ``timestamp``, within ``tolerance_s`` of
    ``now`` (Unix seconds)."""
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    if abs(now - sent) > tolerance_s:
        return False
    return hmac.compare_digest(sign(secret, sent, body), signature)
