"""PII and secret detection for memory writes: find it, say what it is, redact it.

The write policy calls :func:`detect` on every proposed memory and decides, per kind,
whether to redact or reject; :func:`redact` swaps each finding for a placeholder so the rest
of the sentence stays useful ("call me on [PHONE] after five").

Kinds (stable names, matched on by policies):

- personal data: ``email``, ``phone``, ``ssn`` (US), ``card`` (Luhn-checked, known issuer
  prefixes), ``iban`` (ISO 13616 mod-97 with per-country lengths), ``ip_address`` (IPv4
  and IPv6), ``address`` (street and number in seven languages' conventions),
  ``date_of_birth`` (a date after a birth cue), ``passport`` and ``national_id`` (after a
  cue word, or checked shapes: UK NINO, Spanish DNI/NIE, codice fiscale, CPF), ``health``
  (diagnoses, conditions, pregnancy, treatments: special-category data);
- secrets: ``private_key`` (PEM blocks), ``jwt``, ``aws_access_key``, ``aws_secret_key``
  (only next to an AWS or secret-key cue), ``github_token``, ``gitlab_token``,
  ``slack_token``, ``slack_webhook``, ``stripe_key``, ``openai_key``, ``anthropic_key``,
  ``google_api_key``, ``npm_token``, ``pypi_token``, ``huggingface_token``,
  ``sendgrid_key``, ``bearer_token``, ``basic_auth``, ``recovery_code`` (codes listed
  after a recovery or backup-code cue), ``generic_secret`` (a long value assigned to a key
  such as ``api_key``, ``client_secret`` or Azure's ``AccountKey``, or following "api
  secret" after a space), ``password`` (the value of a password form in several
  languages, a made-up value a few words after the keyword, or the password of a URL).

Detection is tuned for precision on the digits that fill ordinary text: order numbers,
versions, dates, hashes, UUIDs and barcodes are not reported. The price: a phone number
with neither an international prefix, a national trunk ``0``, a North American shape nor a
phone word nearby ("call", "Tel.", "Handy", "portable", ...) is not found, while a bare
ten-digit number starting with ``0`` is taken for one; a four-part version with valid
octets and no cue ("libfoo 1.2.3.4") reads as an IPv4 address; 12-digit Maestro cards,
13-digit cards that are also valid EAN-13 barcodes, non-ASCII digits and IBANs with a
lower-case country code are missed. Findings carry the matched text; their ``repr``
leaves it out so a logged finding never leaks what it found.

This module is the entry point (kinds, :func:`detect`, :func:`redact`); the finders live
in :mod:`tether.memory.pii_personal`, :mod:`tether.memory.pii_identity` and
:mod:`tether.memory.pii_secrets`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tether.errors import InvalidInput
from tether.memory.pii_identity import (
    find_addresses,
    find_birth_dates,
    find_documents,
    find_health,
)
from tether.memory.pii_personal import (
    HAS_DIGIT,
    NOT_PII,
    Out,
    find_emails,
    find_ibans,
    find_ipv6,
    find_numbers,
    iban_valid,
    luhn_valid,
)
from tether.memory.pii_secrets import (
    KEY_HINT,
    PASSWORD_HINT,
    RECOVERY_HINT,
    TOKEN_HINT,
    find_keyed_secrets,
    find_passwords,
    find_recovery_codes,
    find_tokens,
)

__all__ = [
    "KINDS",
    "PII_KINDS",
    "SECRET_KINDS",
    "Finding",
    "detect",
    "iban_valid",
    "luhn_valid",
    "placeholder",
    "redact",
]

PII_KINDS: tuple[str, ...] = (
    "email", "iban", "card", "ssn", "national_id", "passport", "date_of_birth", "ip_address",
    "phone", "address", "health",
)  # fmt: skip
SECRET_KINDS: tuple[str, ...] = (
    "private_key", "jwt", "aws_access_key", "github_token", "gitlab_token", "slack_webhook",
    "slack_token", "stripe_key", "anthropic_key", "openai_key", "google_api_key", "npm_token",
    "pypi_token", "huggingface_token", "sendgrid_key", "aws_secret_key", "basic_auth",
    "bearer_token", "recovery_code", "generic_secret", "password",
)  # fmt: skip
#: Every kind, most specific first: on overlapping findings the earlier kind wins.
KINDS: tuple[str, ...] = SECRET_KINDS + PII_KINDS
_PRIORITY = {kind: rank for rank, kind in enumerate((*SECRET_KINDS, NOT_PII, *PII_KINDS))}


@dataclass(frozen=True, slots=True)
class Finding:
    """One piece of PII or one secret: its kind and where it is (``text[start:end]``)."""

    kind: str
    start: int
    end: int
    text: str = field(repr=False)

    @property
    def is_secret(self) -> bool:
        return self.kind in SECRET_KINDS

    @property
    def placeholder(self) -> str:
        return placeholder(self.kind)


def placeholder(kind: str) -> str:
    """The redaction mark for ``kind``: ``[EMAIL]`` for personal data, ``[SECRET:jwt]``."""
    if kind in SECRET_KINDS:
        return f"[SECRET:{kind}]"
    return f"[{kind.upper()}]"


# --- the public entry points ----------------------------------------------------------


def detect(text: str) -> list[Finding]:
    """Find PII and secrets in ``text``.

    Returns non-overlapping findings sorted by start. Where two candidates overlap, the
    more specific kind wins (the order of :data:`KINDS`), then the longer one: a JWT in a
    ``Bearer`` header is a ``jwt``, a GitHub token given as a password is a
    ``github_token``. Each family of detectors runs only when a cheap test (a digit, an
    ``@``, a token prefix, a key word) says it might find something, so plain prose costs
    a few string scans.
    """
    candidates: Out = []
    if TOKEN_HINT.search(text):
        find_tokens(text, candidates)
    if "@" in text:
        find_emails(text, candidates)
    if HAS_DIGIT.search(text):
        find_ibans(text, candidates)
        find_numbers(text, candidates)
        find_addresses(text, candidates)
        find_birth_dates(text, candidates)
        find_documents(text, candidates)
        if "::" in text or text.count(":") >= 6:
            find_ipv6(text, candidates)
    lowered = text.lower()
    if PASSWORD_HINT.search(lowered):
        find_passwords(text, candidates)
    if KEY_HINT.search(lowered):
        find_keyed_secrets(text, lowered, candidates)
    if RECOVERY_HINT.search(lowered):
        find_recovery_codes(text, candidates)
    find_health(text, candidates)
    if not candidates:
        return []
    candidates.sort(key=lambda item: (_PRIORITY[item[0]], item[1] - item[2], item[1]))
    kept: Out = []
    for kind, start, end in candidates:
        if start < end and all(end <= other[1] or other[2] <= start for other in kept):
            kept.append((kind, start, end))
    kept.sort(key=lambda item: item[1])
    return [
        Finding(kind, start, end, text[start:end]) for kind, start, end in kept if kind != NOT_PII
    ]


def redact(text: str, findings: Sequence[Finding] | None = None) -> str:
    """Replace each finding in ``text`` with its placeholder; the rest is kept verbatim.

    ``findings`` defaults to :func:`detect` on ``text``; pass a filtered list to redact only
    some kinds. Findings must belong to ``text`` and must not overlap.
    """
    if findings is None:
        findings = detect(text)
    ordered = sorted(findings, key=lambda finding: finding.start)
    parts: list[str] = []
    position = 0
    for finding in ordered:
        if finding.start < position or text[finding.start : finding.end] != finding.text:
            raise InvalidInput(
                f"cannot redact a {finding.kind} finding at {finding.start}..{finding.end}: "
                "it overlaps another finding or is not in this text; pass findings from "
                "detect() on the same text"
            )
        parts += (text[position : finding.start], placeholder(finding.kind))
        position = finding.end
    parts.append(text[position:])
    return "".join(parts)
