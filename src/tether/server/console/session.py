"""Console sessions: an API key sealed in a cookie, and the CSRF token that goes with it.

Logging in verifies the API key once (:func:`tether.server.auth.principal_for_key`) and
puts it in the ``tether_console`` cookie sealed with AES-256-GCM under the
``console-session`` key derived from the master key: the browser holds only ciphertext,
and any change to the cookie fails its authentication tag. Every request opens the cookie
and checks the key again, so revoking the key, letting it expire or taking a role away
from its principal takes effect on the next click, and a session never outlives
:data:`SESSION_S`. The cookie is ``HttpOnly`` (no script reads it), ``SameSite=Strict``
(no other site's page sends it) and ``Secure`` when the console is served over HTTPS.

Each session also carries a random id; its CSRF token is an HMAC of that id under the
``console-csrf`` key. Every form carries the token and htmx sends it as ``X-CSRF-Token``;
:func:`check_csrf` refuses any state-changing request without the session's token (403).
The login form, before there is a session, is protected the same way by a short-lived
``tether_console_login`` cookie holding a random value whose HMAC the form carries.
"""

from __future__ import annotations

import base64
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from hashlib import sha256

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tether.keys import CONSOLE_CSRF, CONSOLE_SESSION, Keyring
from tether.principals import Principal

SESSION_COOKIE = "tether_console"
LOGIN_COOKIE = "tether_console_login"
SESSION_S = 8 * 3600
"""A session's whole life: after it the operator logs in again, whatever they did since."""
LOGIN_S = 15 * 60
"""How long a login form stays usable."""
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
_AAD = b"tether console session v1"
_NONCE = 12


@dataclass(frozen=True)
class Session:
    """A logged-in request: who acts, and the token its forms must carry."""

    principal: Principal
    session_id: str
    csrf: str
    expires_at: float


@dataclass(frozen=True)
class Sealed:
    """What the cookie opens to: the API key, the session id and when it ends."""

    api_key: str
    session_id: str
    expires_at: float


class Sessions:
    """Seals and opens session cookies and makes their CSRF tokens, under the keyring's
    console keys (a key rotation ends every session: everyone logs in again)."""

    def __init__(self, keyring: Keyring) -> None:
        self._aead = AESGCM(keyring.purpose_key(CONSOLE_SESSION))
        self._csrf_key = keyring.purpose_key(CONSOLE_CSRF)

    def seal(self, api_key: str, *, now: float | None = None) -> tuple[str, Sealed]:
        """A new session for ``api_key``: the cookie value and what it holds."""
        sealed = Sealed(
            api_key=api_key,
            session_id=secrets.token_hex(16),
            expires_at=(time.time() if now is None else now) + SESSION_S,
        )
        plain = json.dumps(
            {"k": sealed.api_key, "s": sealed.session_id, "e": sealed.expires_at}
        ).encode()
        nonce = secrets.token_bytes(_NONCE)
        blob = nonce + self._aead.encrypt(nonce, plain, _AAD)
        return base64.urlsafe_b64encode(blob).decode().rstrip("="), sealed

    def open(self, cookie: str | None, *, now: float | None = None) -> Sealed | None:
        """What a session cookie holds, or ``None`` when it is missing, altered, sealed
        under another key, or over."""
        if not cookie or len(cookie) > 4096:
            return None
        try:
            blob = base64.urlsafe_b64decode(cookie + "=" * (-len(cookie) % 4))
            plain = self._aead.decrypt(blob[:_NONCE], blob[_NONCE:], _AAD)
            fields = json.loads(plain)
            sealed = Sealed(
                api_key=str(fields["k"]),
                session_id=str(fields["s"]),
                expires_at=float(fields["e"]),
            )
        except (ValueError, KeyError, TypeError, InvalidTag):
            return None
        if sealed.expires_at <= (time.time() if now is None else now):
            return None
        return sealed

    def csrf_token(self, session_id: str) -> str:
        """The CSRF token of a session (or, prefixed ``login:``, of a login form)."""
        return hmac.new(self._csrf_key, session_id.encode(), sha256).hexdigest()

    def login_token(self, login_nonce: str) -> str:
        return self.csrf_token(f"login:{login_nonce}")


def tokens_match(sent: str | None, expected: str | None) -> bool:
    """Constant-time comparison of a sent token with the expected one (both present)."""
    return bool(sent) and bool(expected) and hmac.compare_digest(str(sent), str(expected))
