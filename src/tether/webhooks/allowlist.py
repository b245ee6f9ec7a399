"""The per-tenant allowlist of webhook URLs: prefixes an administrator approved."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

from tether.errors import InvalidInput

_DEFAULT_PORTS = {"http": 80, "https": 443}


def parse_url(url: str, what: str = "webhook URL") -> SplitResult:
    """``url`` split, if it is an absolute http(s) URL without credentials or fragment.

    Raises:
        InvalidInput: anything else.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it validates the port
    except ValueError:
        raise InvalidInput(f"{what} is not a valid URL") from None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise InvalidInput(f"{what} must be an absolute http:// or https:// URL")
    if parts.username is not None or parts.password is not None:
        raise InvalidInput(f"{what} must not carry credentials; the signature authenticates")
    if parts.fragment:
        raise InvalidInput(f"{what} must not have a #fragment")
    if len(url) > 2000:
        raise InvalidInput(f"{what} is over 2000 characters")
    return parts


def _origin(parts: SplitResult) -> tuple[str, str, int]:
    port = parts.port or _DEFAULT_PORTS[parts.scheme]
    return parts.scheme, (parts.hostname or "").lower(), port


def allowed(url: str, prefixes: list[str]) -> bool:
    """Whether ``url`` is under one of ``prefixes``: same scheme, host and port, and a
    path that equals the prefix's or continues it after a ``/``."""
    target = urlsplit(url)
    for prefix in prefixes:
        base = urlsplit(prefix)
        if _origin(base) != _origin(target):
            continue
        path = base.path or "/"
        if target.path == path or target.path.startswith(path.rstrip("/") + "/"):
            return True
    return False
