"""The console's session cookie and CSRF tokens, without a server: the key never in clear,
any change refused, sessions that end, tokens bound to their session and key; and the
console's static side: every template escapes, none marks text safe or names another
host, and the vendored htmx is the file the registry published."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from pathlib import Path

from tether.keys import Keyring
from tether.server.console.render import STATIC, TEMPLATES, make_environment
from tether.server.console.session import SESSION_S, Sessions, tokens_match

KEY = "tk~acme~0123456789abcdef~" + "ab" * 32
HTMX_SHA256 = "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"
"""dist/htmx.min.js of htmx.org 2.0.11 from the npm registry (`npm pack htmx.org@2`)."""


def sessions() -> Sessions:
    return Sessions(Keyring(secrets.token_bytes(32)))


def test_the_cookie_holds_the_key_only_sealed() -> None:
    made = sessions()
    cookie, sealed = made.seal(KEY, now=1000.0)
    raw = base64.urlsafe_b64decode(cookie + "=" * (-len(cookie) % 4))
    assert b"tk~" not in raw and b"ab" * 32 not in raw and "acme" not in cookie
    opened = made.open(cookie, now=1001.0)
    assert opened == sealed and opened.api_key == KEY
    assert made.seal(KEY, now=1000.0)[0] != cookie  # a fresh nonce and session id each time


def test_an_altered_foreign_or_expired_cookie_opens_nothing() -> None:
    made = sessions()
    cookie, _ = made.seal(KEY, now=1000.0)
    flipped = cookie[:20] + ("A" if cookie[20] != "A" else "B") + cookie[21:]
    assert made.open(flipped, now=1001.0) is None
    assert sessions().open(cookie, now=1001.0) is None
    assert made.open(cookie, now=1000.0 + SESSION_S) is None
    for junk in (None, "", "not base64!", "A" * 5000, base64.urlsafe_b64encode(b"x" * 40).decode()):
        assert made.open(junk) is None


def test_csrf_tokens_are_bound_to_their_session_and_key() -> None:
    made = sessions()
    _, first = made.seal(KEY)
    _, second = made.seal(KEY)
    token = made.csrf_token(first.session_id)
    assert tokens_match(token, made.csrf_token(first.session_id))
    assert not tokens_match(token, made.csrf_token(second.session_id))
    assert not tokens_match(token, sessions().csrf_token(first.session_id))
    assert not tokens_match(made.login_token(first.session_id), token)
    assert not tokens_match(None, token) and not tokens_match("", "")


def test_every_template_escapes_and_none_marks_text_safe_or_links_off_the_server() -> None:
    env = make_environment()
    assert env.autoescape is True
    hostile = "<script>alert(1)</script>"
    page = env.from_string("{{ value }} {{ value | pretty }} {{ value | literal }}").render(
        value=hostile
    )
    assert "<script>" not in page and "&lt;script&gt;" in page
    for template in TEMPLATES.glob("*.html"):
        text = template.read_text(encoding="utf-8")
        assert "|safe" not in text.replace(" ", ""), template.name
        assert "Markup(" not in text and "autoescape false" not in text, template.name
        assert not re.search(r"(?:https?:)?//[a-z0-9]", text, re.IGNORECASE), template.name
        assert "<script>" not in text and " style=" not in text and "<style" not in text, (
            template.name
        )


def test_the_vendored_htmx_is_the_published_file_with_its_license() -> None:
    htmx = STATIC / "htmx.min.js"
    assert hashlib.sha256(htmx.read_bytes()).hexdigest() == HTMX_SHA256
    assert "Zero-Clause BSD" in (STATIC / "htmx.LICENSE").read_text(encoding="utf-8")
    assert not re.search(rb"https?://", htmx.read_bytes())
    css = (STATIC / "console.css").read_text(encoding="utf-8")
    assert "url(" not in css and "@import" not in css
    assert Path(STATIC / "favicon.svg").read_text(encoding="utf-8").startswith("<svg")
