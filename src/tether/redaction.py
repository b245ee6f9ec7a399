"""One place that scrubs secrets from text before it is shown, logged or stored.

:func:`redact` is used by every error path and log line: it hides the credentials of any
connection string in the text (``scheme://user:password@host``, ``password=…``), whatever
characters the password holds (``/ # ? % @`` included), and the secret of any API key
(``tk~<tenant>~<key id>~***``), and removes every known secret passed in (the configured
URL's password, decoded and encoded, and the pieces a URL parser would split it into).
:func:`describe_exception` is what the run engine stores for a failed node or effect: the
exception text with credentials, secrets and personal data found by the memory detector
(:mod:`tether.memory.pii`) replaced by placeholders.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import quote, unquote

from tether.memory.pii import redact as redact_findings

MASK = "***"
_URL_CREDENTIALS = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@'\"]*:)(?P<password>[^\s'\"]*)@"
)
_KEY_VALUE_PASSWORD = re.compile(
    r"(?i)(?P<head>\b(?:password|passwd|pwd)\s*=\s*)(?P<password>'(?:[^'\\]|\\.)*'|[^\s&'\"]+)"
)
_API_KEY_SECRET = re.compile(r"(?P<head>\btk~[^\s~]{1,100}~[0-9a-f]{16}~)[0-9a-f]{64}(?![0-9a-f])")
"""An API key's secret (``tk~<tenant>~<key id>~<secret>``, :mod:`tether.apikeys`): the
public part before it is kept, so the key can still be recognised."""
_SPLITTERS = re.compile(r"[/#?%@:;&=]")
_MIN_PIECE = 3


def url_password(url: str) -> str | None:
    """The password of a connection URL, read the way a careful person would.

    The user part ends at the *last* ``@`` before the host, so a password holding ``/``,
    ``#``, ``?`` or ``@`` is read whole (a URL parser would cut it short).
    """
    _, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return None
    userinfo = rest.rpartition("@")[0]
    _, colon, password = userinfo.partition(":")
    return password if colon else None


def url_secrets(url: str | None) -> list[str]:
    """Every form in which the password of ``url`` may show up in a driver's message."""
    if not url:
        return []
    found = []
    password = url_password(url)
    if password:
        found.append(password)
    found += [match.group("password").strip("'") for match in _KEY_VALUE_PASSWORD.finditer(url)]
    return secret_forms(found)


def secret_forms(secrets: Iterable[str]) -> list[str]:
    """Each secret, decoded, encoded and cut at URL delimiters: longest first."""
    forms: set[str] = set()
    for secret in secrets:
        if not secret:
            continue
        for form in (secret, unquote(secret), quote(secret, safe=""), quote(unquote(secret))):
            forms.add(form)
            forms.update(piece for piece in _SPLITTERS.split(form) if len(piece) >= _MIN_PIECE)
    return sorted((form for form in forms if form), key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with connection-string credentials, API keys' secrets and every given
    secret masked."""
    for secret in secret_forms(secrets):
        text = text.replace(secret, MASK)
    text = _API_KEY_SECRET.sub(lambda m: m.group("head") + MASK, text)
    text = _URL_CREDENTIALS.sub(lambda m: m.group("head") + MASK + "@", text)
    return _KEY_VALUE_PASSWORD.sub(lambda m: m.group("head") + MASK, text)


def clean_text(text: str) -> str:
    """``text`` made storable: lone surrogates and NUL characters replaced."""
    text = text.replace("\x00", "\\x00")
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def describe_exception(exc: BaseException, *, limit: int = 2000) -> str:
    """``Type: message`` of an exception, safe to store in a journal, event or run.

    Credentials, secrets and personal data are replaced by placeholders, so a viewer of
    the run never reads what an effect's exception happened to carry.
    """
    text = clean_text(redact(f"{type(exc).__name__}: {exc}"))
    return redact_findings(text)[:limit]


class RedactingFilter(logging.Filter):
    """Formats each record once and masks credentials and secrets in the result."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        record.msg = redact_findings(redact(message))
        record.args = None
        return True


def get_logger(name: str) -> logging.Logger:
    """The logger ``name`` with :class:`RedactingFilter` on it (added once)."""
    logger = logging.getLogger(name)
    if not any(isinstance(item, RedactingFilter) for item in logger.filters):
        logger.addFilter(RedactingFilter())
    return logger
