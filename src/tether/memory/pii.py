"""PII and secret detection for memory writes: find it, say what it is, redact it.

The write policy calls :func:`detect` on every proposed memory and decides, per kind,
whether to redact or reject; :func:`redact` swaps each finding for a placeholder so the rest
of the sentence stays useful ("call me on [PHONE] after five").

Kinds (stable names, matched on by policies):

- personal data: ``email``, ``phone``, ``ssn`` (US), ``card`` (Luhn-checked, known issuer
  prefixes), ``iban`` (ISO 13616 mod-97 with per-country lengths), ``ip_address`` (IPv4
  and IPv6);
- secrets: ``private_key`` (PEM blocks), ``jwt``, ``aws_access_key``, ``aws_secret_key``
  (only next to an AWS or secret-key cue), ``github_token``, ``gitlab_token``,
  ``slack_token``, ``slack_webhook``, ``stripe_key``, ``openai_key``, ``anthropic_key``,
  ``google_api_key``, ``npm_token``, ``pypi_token``, ``huggingface_token``,
  ``sendgrid_key``, ``bearer_token``, ``basic_auth``, ``generic_secret`` (a long value
  assigned to a key such as ``api_key`` or ``client_secret``), ``password`` (the value of
  a password form in several languages, or the password of a URL).

Detection is tuned for precision on the digits that fill ordinary text: order numbers,
versions, dates, hashes, UUIDs and barcodes are not reported. The price: a phone number
with neither an international prefix, a national trunk ``0``, a North American shape nor a
phone word nearby ("call", "Tel.", "Handy", "portable", ...) is not found, while a bare
ten-digit number starting with ``0`` is taken for one; a four-part version with valid
octets and no cue ("libfoo 1.2.3.4") reads as an IPv4 address; 12-digit Maestro cards,
13-digit cards that are also valid EAN-13 barcodes, non-ASCII digits and IBANs with a
lower-case country code are missed. Findings carry the matched text; their ``repr``
leaves it out so a logged finding never leaks what it found.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from tether.errors import InvalidInput

PII_KINDS: tuple[str, ...] = ("email", "iban", "card", "ssn", "ip_address", "phone")
SECRET_KINDS: tuple[str, ...] = (
    "private_key", "jwt", "aws_access_key", "github_token", "gitlab_token", "slack_webhook",
    "slack_token", "stripe_key", "anthropic_key", "openai_key", "google_api_key", "npm_token",
    "pypi_token", "huggingface_token", "sendgrid_key", "aws_secret_key", "basic_auth",
    "bearer_token", "generic_secret", "password",
)  # fmt: skip
#: Every kind, most specific first: on overlapping findings the earlier kind wins.
KINDS: tuple[str, ...] = SECRET_KINDS + PII_KINDS
# Text shaped like an IBAN whose checksum fails: it hides the digit kinds inside it (a
# Luhn-valid run of its digits is not a card) and is never reported itself.
_NOT_PII = "_not_pii"
_PRIORITY = {kind: rank for rank, kind in enumerate((*SECRET_KINDS, _NOT_PII, *PII_KINDS))}


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


# --- checksums ------------------------------------------------------------------------


def _words(spaced: str) -> frozenset[str]:
    return frozenset(spaced.split())


# ISO 13616 registry (SWIFT IBAN registry): country code and IBAN length.
_IBAN_LENGTHS = {
    entry[:2]: int(entry[2:])
    for entry in _words(
        "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 "
        "DE22 DJ27 DK18 DO28 EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 "
        "GT28 HR21 HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 "
        "LV21 LY25 MC27 MD24 ME22 MK19 MN20 MR27 MT31 MU30 NI28 NL18 NO15 OM23 PK24 PL28 "
        "PS29 PT25 QA29 RO24 RS22 RU33 SA24 SC31 SD18 SE24 SI19 SK24 SM27 SO23 ST25 SV28 "
        "TL23 TN24 TR26 UA29 VA22 VG24 XK20 YE30"
    )
}
_IBAN_LETTERS = str.maketrans({chr(65 + value): str(10 + value) for value in range(26)})
_LUHN_DOUBLED = (0, 2, 4, 6, 8, 1, 3, 5, 7, 9)
_IBAN_SHAPE = re.compile(r"[A-Z]{2}[0-9]{2}[A-Z0-9]+")


def luhn_valid(number: str) -> bool:
    """Whether ``number`` (digits, optionally grouped by spaces or dashes) passes Luhn."""
    digits = number.replace(" ", "").replace("-", "")
    if len(digits) < 2 or not digits.isascii() or not digits.isdigit():
        return False
    total = sum(map(int, digits[-1::-2])) + sum(_LUHN_DOUBLED[int(char)] for char in digits[-2::-2])
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """Whether ``iban`` is a valid IBAN: known country, its exact length, mod-97 == 1.

    Spaces are ignored and letters may be lower case, as people write them.
    """
    compact = iban.replace(" ", "").upper()
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact.isascii():
        return False
    if not _IBAN_SHAPE.fullmatch(compact):
        return False
    return int((compact[4:] + compact[:4]).translate(_IBAN_LETTERS)) % 97 == 1


# --- context --------------------------------------------------------------------------

# A number right after one of these words is a phone number whatever its shape; after one
# of the "other" words (or a "#") it is an order, a ticket, a version... and never a phone.
_PHONE_CUES = _words(
    "phone phones telephone tel tél tlf mob mobile cell cellphone call calling text sms "
    "whatsapp fax dial reach contact hotline handy mobil rufnummer rufen ruf durchwahl "
    "téléphone portable joindre joignable fixe teléfono telefono móvil movil contacto "
    "celular cellulare contatto contatti mobiel bel bellen belt telefone ligue ligar "
    "komórka"
)
_PHONE_STEMS = ("telefon", "anruf", "erreichbar", "appel", "llam", "chiam", "ring", "phone")
_OTHER_CUES = _words(
    "order orders invoice ref reference ticket tracking case id sku serial version ver "
    "build release isbn iban bic account acct konto po item part batch lot zip postcode "
    "plz commande facture pedido factura ordine fattura bestelling factuur dossier "
    "expediente pratica kundennummer kundennr shipment parcel colis transaction txn "
    "receipt quittung ean gtin upc barcode"
)
_OTHER_STEMS = ("bestell", "rechnung", "auftrag", "sendung")
_SSN_CUES = _words("ssn ss social soc sec tin itin taxpayer")
_VERSION_CUES = _words(
    "v ver version versions release rel build firmware fw kernel update updated upgrade "
    "upgraded patch sdk api driver bios os app rv"
)
_CUE_WORD = re.compile(r"#|[^\W\d_]+")
_DATE_INSIDE = re.compile(
    r"(?<!\d)(?:\d{1,2}[./-]\d{1,2}[./-](?:19|20)\d\d|(?:19|20)\d\d[./-]\d{1,2}[./-]"
    r"\d{1,2})(?!\d)"
)


def _window(text: str, start: int, width: int) -> str:
    window = text[max(0, start - width) : start]
    return window[window.rfind("\n") + 1 :]


def _cue_words(text: str, start: int) -> list[str]:
    return _CUE_WORD.findall(_window(text, start, 40).lower())


def _number_context(text: str, start: int) -> str | None:
    """``"phone"`` or ``"other"`` after the nearest cue word before ``start``, else None."""
    for word in reversed(_cue_words(text, start)):
        if word in _PHONE_CUES or word.startswith(_PHONE_STEMS):
            return "phone"
        if word == "#" or word in _OTHER_CUES or word.startswith(_OTHER_STEMS):
            return "other"
    return None


def _after_version_cue(text: str, start: int) -> bool:
    """Whether a dotted number at ``start`` follows "version", "v", "==", "Chrome/"..."""
    tail = _window(text, start, 24)
    if tail.endswith(("==", "~=", ">=", "<=", "^", "~")):
        return True
    if tail.endswith("/") and tail[-2:-1].isalnum():
        return True
    stripped = tail.rstrip(" \t:.#-")
    position = len(stripped)
    while position and stripped[position - 1].isalpha():
        position -= 1
    return stripped[position:].lower() in _VERSION_CUES


# --- finders --------------------------------------------------------------------------

_Out = list[tuple[str, int, int]]

# Cheap test for a token prefix, anchored on the token's rarest character.
_TOKEN_HINT = re.compile(
    r"_(?:(?<=gh[pousr]_)|(?<=_pat_)|(?<=k_live_)|(?<=k_test_)|(?<=whsec_)|(?<=npm_)|"
    r"(?<=hf_))|-(?:(?<=xox[a-z]-)|(?<=sk-)|(?<=pypi-)|(?<=-----)|(?<=gl[a-z][a-z]-)|"
    r"(?<=gl[a-z]{3}-)|(?<=gl[a-z]{4}-)|(?<=gl[a-z]{5}-))|J(?<=eyJ)|\.(?<=SG\.)|"
    r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|PKA|ROA|Iza)|\.(?<=hooks\.)"
)
_TOKENS = re.compile(
    r"(?P<private_key>-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END"
    r"[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:\s*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:[^\n]*))*))"
    r"|(?P<slack_webhook>https://hooks\.slack\.com/(?:services|workflows|triggers)/[\w/-]+)"
    r"|(?<![A-Za-z0-9_-])(?:"
    r"(?P<jwt>eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*)"
    r"|(?P<aws_access_key>(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)"
    r"[A-Z0-9]{16})"
    r"|(?P<github_token>gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,255})"
    r"|(?P<gitlab_token>gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|oas)-[A-Za-z0-9_-]{20,})"
    r"|(?P<slack_token>xox[abposre]-[A-Za-z0-9-]{10,}|xoxe\.xox[bp]-[A-Za-z0-9-]{10,})"
    r"|(?P<stripe_key>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,})"
    r"|(?P<anthropic_key>sk-ant-[a-z0-9]{2,10}-[A-Za-z0-9_-]{20,})"
    r"|(?P<openai_key>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})"
    r"|(?P<google_api_key>AIza[A-Za-z0-9_-]{35})"
    r"|(?P<npm_token>npm_[A-Za-z0-9]{36})"
    r"|(?P<pypi_token>pypi-AgE[A-Za-z0-9_-]{50,})"
    r"|(?P<huggingface_token>hf_[A-Za-z0-9]{30,40})"
    r"|(?P<sendgrid_key>SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64})"
    r")(?![A-Za-z0-9_-])"
)
_HAS_DIGIT = re.compile(r"[0-9]")


def _find_tokens(text: str, out: _Out) -> None:
    for match in _TOKENS.finditer(text):
        kind = match.lastgroup
        if kind == "openai_key" and not _HAS_DIGIT.search(match.group(), 3):
            continue
        if kind is not None:
            out.append((kind, match.start(), match.end()))


_EMAIL_DOMAIN = re.compile(r"@(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,24}(?![\w-])")
_NOT_EMAIL_TLDS = _words("png jpg jpeg gif svg webp css js ts py json tgz")


def _email_local_start(text: str, at: int) -> int | None:
    """Where the local part before the ``@`` at ``at`` starts, or None if there is none."""
    start = at
    while start and (text[start - 1].isalnum() or text[start - 1] in "._%+-"):
        start -= 1
    while start < at and text[start] == ".":
        start += 1
    return start if 0 < at - start <= 64 else None


def _find_emails(text: str, out: _Out) -> None:
    for match in _EMAIL_DOMAIN.finditer(text):
        start = _email_local_start(text, match.start())
        if start is None or match.group().rsplit(".", 1)[1].lower() in _NOT_EMAIL_TLDS:
            continue
        if text.startswith("git@", start) and text.startswith(":", match.end()):
            continue
        out.append(("email", start, match.end()))


_IBAN_START = re.compile(r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z][0-9]{2}")


def _find_ibans(text: str, out: _Out) -> None:
    """IBANs, compact or in groups of four; a wrong checksum marks the text as not PII."""
    for match in _IBAN_START.finditer(text):
        length = _IBAN_LENGTHS.get(match.group()[:2])
        if length is None:
            continue
        position, count, size = match.start(), 0, len(text)
        while position < size and count < length:
            char = text[position]
            if char.isascii() and char.isalnum():
                count += 1
            elif not (char == " " and count % 4 == 0):
                break
            position += 1
        if count != length or (position < size and text[position].isalnum()):
            continue
        kind = "iban" if iban_valid(text[match.start() : position]) else _NOT_PII
        out.append((kind, match.start(), position))


# A run of digits and phone separators: where every digit kind (card, SSN, IPv4, phone)
# starts. Each is then matched anchored at the run's start.
_NUMBER_RUN = re.compile(
    r"[+(0-9](?<![\w.-][+(0-9])(?:(?<=\+)\(?[0-9]|(?<=\()[0-9]|(?<=[0-9]))(?:[ .\-/()]{0,3}[0-9])*"
    r"(?:[ ]?(?:x|ext\.?|extension|Durchwahl)[ ]?[0-9]{1,6})?(?![\w@]|[.,/-][0-9])"
)
_CARD = re.compile(r"(?<![\w+./-])[0-9](?:[ -]?[0-9]){11,18}(?![\w-]|[.,/][0-9])")
_CARD_SEPARATOR = re.compile(r"[ -]")
_SSN = re.compile(
    r"(?<![\w-])(?!000|666|9[0-9][0-9])[0-9]{3}([- ]?)(?!00)[0-9]{2}\1(?!0000)[0-9]{4}(?![\w-])"
)
_IPV4 = re.compile(r"(?<![\w.-])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?!\.?\w|-[A-Za-z])")
_PHONE_NOT_AFTER = frozenset("+#@$€£¥%&*/,=")
_PHONE_EXTENSION = re.compile(r"[ ]?(?:x|ext\.?|extension|Durchwahl)[ ]?[0-9]+$")
_DECIMAL_START = re.compile(r"\(?0[.,]")
_NANP = re.compile(r"(?:\+?1[ .-]?)?(?:\([0-9]{3}\)[ .-]?|[0-9]{3}[ .-])[0-9]{3}[ .-][0-9]{4}")


def _card_issuer_ok(digits: str) -> bool:
    size, first = len(digits), digits[0]
    if first == "4":
        return size in (13, 16, 19)
    if first == "3":
        return digits[1] in "0456789" and size >= 14
    if first == "2":
        if size == 15:
            return digits[:4] == "2131"
        return (size == 16 and 2221 <= int(digits[:4]) <= 2720) or "2200" <= digits[:4] <= "2204"
    return first in "56" or (size == 15 and digits[:4] == "1800")


def _ean13_valid(digits: str) -> bool:
    """Whether ``digits`` is a product barcode (EAN-13/GTIN-13): not a card, not a phone."""
    if len(digits) != 13:
        return False
    weighted = sum(map(int, digits[0:12:2])) + 3 * sum(map(int, digits[1:12:2]))
    return (10 - weighted % 10) % 10 == int(digits[12])


def _card_at(text: str, position: int) -> tuple[str, int, int] | None:
    match = _CARD.match(text, position)
    if match is None:
        return None
    candidate = match.group()
    groups = _CARD_SEPARATOR.split(candidate)
    digits = "".join(groups)
    if not (13 <= len(digits) <= 19 and _card_issuer_ok(digits) and luhn_valid(digits)):
        return None
    if _ean13_valid(digits):
        return None
    if len(groups) > 1:
        if len(set(candidate) - set("0123456789")) != 1 or len(groups[0]) != 4:
            return None
        if any(not 3 <= len(group) <= 6 for group in groups[1:-1]):
            return None
    elif _number_context(text, position) == "other":
        return None
    return ("card", position, match.end())


def _ssn_at(text: str, position: int) -> tuple[str, int, int] | None:
    match = _SSN.match(text, position)
    if match is None:
        return None
    cued = not _SSN_CUES.isdisjoint(_cue_words(text, position))
    if not cued and (match.group(1) != "-" or _number_context(text, position) == "other"):
        return None
    return ("ssn", position, match.end())


def _ipv4_at(text: str, position: int) -> tuple[str, int, int] | None:
    match = _IPV4.match(text, position)
    if match is None:
        return None
    octets = match.group().split(".")
    if any(int(octet) > 255 or (octet[0] == "0" and len(octet) > 1) for octet in octets):
        return None
    if octets in (["0", "0", "0", "0"], ["255", "255", "255", "255"]):
        return None
    if _after_version_cue(text, position):
        return None
    return ("ip_address", position, match.end())


def _phone_ok(text: str, start: int, number: str) -> bool:
    """Whether a run of digits is a phone number: by its shape, or by a cue word before it.

    Without a cue, only shapes that ordinary numbers rarely take count: an international
    prefix (``+`` or ``00``), a national trunk ``0`` with separators or ten or eleven
    digits, or the North American ``(555) 123-4567`` layouts.
    """
    digits = "".join(filter(str.isdigit, number))
    longest = 16 if "(0)" in number.replace(" ", "") else 15
    if not 7 <= len(digits) <= longest or _DECIMAL_START.match(number):
        return False
    if not number[-2].isdigit() or _DATE_INSIDE.search(number):
        return False
    if number.startswith("+"):
        return len(digits) >= 8 and digits[0] != "0"
    context = _number_context(text, start)
    if context == "other" or (context is None and number.isdigit() and _ean13_valid(digits)):
        return False
    if digits.startswith("00") and digits[2] != "0":
        return len(digits) >= 10
    if _NANP.fullmatch(number):
        return True
    trunk = digits[0] == "0" and digits[1] != "0" and 9 <= len(digits) <= 12
    if trunk and (not number.isdigit() or len(digits) in (10, 11)):
        return True
    return context == "phone"


def _find_numbers(text: str, out: _Out) -> None:
    """Cards, SSNs, IPv4 addresses and phone numbers, all starting where a number does."""
    for run in _NUMBER_RUN.finditer(text):
        start, end = run.span()
        number = run.group()
        if len(number) < 7:
            continue
        if number[0].isdigit():
            found = [_ipv4_at(text, start), _ssn_at(text, start)]
            if len(number) >= 13:
                found.append(_card_at(text, start))
            out += [finding for finding in found if finding is not None]
        if start and text[start - 1] in _PHONE_NOT_AFTER:
            continue
        if number.startswith("(") and ")" not in number:
            start, number = start + 1, number[1:]
        extension = _PHONE_EXTENSION.search(number)
        main = number[: extension.start()] if extension else number
        if _phone_ok(text, start, main):
            out.append(("phone", start, end))


_IPV6 = re.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f]{0,4})"
    r"(?:%[0-9A-Za-z_.]*[0-9A-Za-z_])?(?![\w:]|\.\w)"
)


def _find_ipv6(text: str, out: _Out) -> None:
    for match in _IPV6.finditer(text):
        candidate = match.group()
        address = candidate.split("%", 1)[0]
        if "::" not in address and address.count(":") + ("." in address) < 7:
            continue
        if not _HAS_DIGIT.search(address):
            continue
        try:
            parsed = ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        if not (parsed.is_unspecified or parsed.is_loopback):
            out.append(("ip_address", match.start(), match.end()))


# --- secrets announced by their context -------------------------------------------------

# Cheap tests on the lowered text for the key words the detectors below need.
_PASSWORD_HINT = re.compile(
    r"p(?:ass|w|arola)|kennwort|c(?:ontrase|lave)|wachtwoord|s(?:enha|alasana)|h(?:as[łl]o|eslo)"
    r"|l[öo]senord|adgangskode|jelsz|mdp|://|-u[ =]|--user"
)
_KEY_HINT = re.compile(r"b(?:earer|asic)|authori|token|secret|key|a(?:ws|mazon)")
_PASSWORD = re.compile(
    r"(?i)(?<![a-z0-9])(?:(?P<strong>pgpassword|password|passwd|passphrase|passcode|"
    r"passwort|kennwort|mot de passe|contrase[ñn]a|wachtwoord|senha|has[łl]o|l[öo]senord|"
    r"adgangskode|salasana|heslo|jelsz[óo]|parola)|(?P<pass>pass)|pwd|pw|mdp|clave)(?![\w-])"
    r"(?P<sep>[\"']?[ \t]*(?::|=>|=|->)[ \t]*"
    r"|[ \t]+(?:is|was|ist|lautet|war|est|était|es|era|è|é|är|er|jest)(?:[ \t]*:)?[ \t]+"
    r"|[ \t]+)"
    r"(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`<>]{1,200})"
)
_URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<value>[^\s/@]+)@[\w.[\]-]")
_CLI_PASSWORD = re.compile(r"(?<!\S)(?:-u|--user)[ =][\"']?[^\s:\"'@]+:(?P<value>[^\s\"']+)")
_NOT_PASSWORDS = _words(
    "null none nil true false required optional empty blank missing unset redacted hidden "
    "masked incorrect wrong invalid correct weak strong expired reset changed updated set "
    "saved stored protected field manager hint policy prompt str string int bytes bool any "
    "text varchar secretstr the a an your my our their this that not too very must should "
    "will has have can cannot may and or of for to in on with by please see n/a na tbd "
    "todo sent same below above here there unknown ok yes no vergessen oublié olvidada "
    "dimenticata vergeten ändern"
)
# Values that name a password rather than state one: code, templates, masks, env vars.
_CODE_REFERENCE = re.compile(
    r"(?i)[a-z_]\w{2,}(?:\.[a-z_]\w*)*[(\[](?:.*[)\]])?|(?:self|this|args|opts|options|config|"
    r"settings|cfg|conf|params|request|req|env|os|process|secrets)\.\S*|\$\{.*|\$\(.*|"
    r"\$[A-Z_][A-Z0-9_]*|\{\{.*|%\(.*|<[^>]*>|\[[^\]]*\]|\{[^}]*\}|[*•x#._-]+|"
    r"\w*(?:password|passwd|secret)\w*[._]\w*|\w+[._]\w*(?:password|passwd|secret)\w*"
)
_PROSE_AFTER = re.compile(r"[ \t]+[^\W\d_]{2,}")


def _trim_value(value: str) -> str:
    """Drop the sentence punctuation that follows an unquoted value."""
    while value[-1:] in (".", ",", ";", ":") or (value[-1:] == ")" and "(" not in value):
        value = value[:-1]
    return value


def _password_value(text: str, match: re.Match[str]) -> tuple[int, int] | None:
    """The span of the password in a password form, or None when the form is prose."""
    start, end = match.span("value")
    value = match.group("value")
    if value[0] in "\"'`":
        start, end, value = start + 1, end - 1, value[1:-1]
    else:
        value = _trim_value(value)
        end = start + len(value)
    if len(value) < 3 or value.lower().rstrip("?!") in _NOT_PASSWORDS:
        return None
    if _CODE_REFERENCE.fullmatch(value):
        return None
    sep = match.group("sep")
    if match.group("pass") is not None and "=" not in sep:
        return None
    if ":" in sep or "=" in sep or ">" in sep:
        return None if value.isalpha() and _PROSE_AFTER.match(text, end) else (start, end)
    if match.group("strong") is None:
        return None
    if sep.strip():
        return None if value.isalpha() and _PROSE_AFTER.match(text, end) else (start, end)
    if len(value) < 6 or value.rstrip("?!").isalpha() or value.isdigit():
        return None
    if value.isalnum() and not _HAS_DIGIT.search(value):
        return None
    return None if value[0] in "/~." else (start, end)


def _find_passwords(text: str, out: _Out) -> None:
    for match in _PASSWORD.finditer(text):
        span = _password_value(text, match)
        if span is not None:
            out.append(("password", *span))
    for pattern in (_URL_PASSWORD, _CLI_PASSWORD):
        for match in pattern.finditer(text):
            value = match.group("value")
            if value.lower() not in _NOT_PASSWORDS and not _CODE_REFERENCE.fullmatch(value):
                out.append(("password", *match.span("value")))


_TOKEN_CHARS = r"[A-Za-z0-9\-._~+/]"
_BEARER = re.compile(
    rf"(?i)(?:\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:bearer|token)[ \t]+)?"
    rf"|\bbearer[ \t]+)(?P<value>{_TOKEN_CHARS}{{8,}}=*)"
)
_BASIC = re.compile(r"(?i)\bbasic[ \t]+(?P<value>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])")
_GENERIC_SECRET = re.compile(
    r"(?i)(?<![a-z0-9])(?:api[_.-]?key|apikey|api[_-]?secret|app[_-]?secret|"
    r"client[_-]?secret|secret[_-]?key|secret|access[_-]?token|auth[_-]?token|"
    r"refresh[_-]?token|api[_-]?token|private[_-]?token|session[_-]?token|token|"
    r"access[_-]?key(?:[_-]?id)?|signing[_-]?key|encryption[_-]?key)(?![\w-])"
    r"[\"']?[ \t]*(?::|=|=>|[ \t]is)[ \t]*[\"']?(?P<value>[^\s\"'`<>,;&]{12,})"
)
_VERSION_LIKE = re.compile(r"v?[0-9]+(?:\.[0-9]+)+(?:[-+.][A-Za-z0-9.]+)?")
_AWS_CUE = re.compile(r"(?i)aws|amazon|secret[ _-]?(?:access[ _-]?)?key")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _looks_random(value: str) -> bool:
    return bool(_HAS_DIGIT.search(value)) and any(char.isalpha() for char in value)


def _find_keyed_secrets(text: str, lowered: str, out: _Out) -> None:
    """Bearer and Basic credentials, ``api_key = ...`` values, AWS secret keys."""
    if "bearer" in lowered or "authori" in lowered:
        for match in _BEARER.finditer(text):
            value = match.group("value")
            if _looks_random(value) and (len(value) >= 16 or match.group()[0] in "Aa"):
                out.append(("bearer_token", *match.span("value")))
    if "basic" in lowered:
        for match in _BASIC.finditer(text):
            try:
                decoded = base64.b64decode(match.group("value"), validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                continue
            if ":" in decoded and decoded.isprintable():
                out.append(("basic_auth", *match.span("value")))
    if "key" in lowered or "token" in lowered or "secret" in lowered:
        for match in _GENERIC_SECRET.finditer(text):
            start = match.start("value")
            value = _trim_value(match.group("value"))
            if not _looks_random(value) or _CODE_REFERENCE.fullmatch(value):
                continue
            if not _VERSION_LIKE.fullmatch(value):
                out.append(("generic_secret", start, start + len(value)))
    cue = _AWS_CUE.search(text)
    if cue is not None:
        for match in _AWS_SECRET.finditer(text, cue.start()):
            value = match.group()
            if not (value.isupper() or value.islower()) and _looks_random(value):
                out.append(("aws_secret_key", match.start(), match.end()))


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
    candidates: _Out = []
    if _TOKEN_HINT.search(text):
        _find_tokens(text, candidates)
    if "@" in text:
        _find_emails(text, candidates)
    if _HAS_DIGIT.search(text):
        _find_ibans(text, candidates)
        _find_numbers(text, candidates)
        if "::" in text or text.count(":") >= 6:
            _find_ipv6(text, candidates)
    lowered = text.lower()
    if _PASSWORD_HINT.search(lowered):
        _find_passwords(text, candidates)
    if _KEY_HINT.search(lowered):
        _find_keyed_secrets(text, lowered, candidates)
    if not candidates:
        return []
    candidates.sort(key=lambda item: (_PRIORITY[item[0]], item[1] - item[2], item[1]))
    kept: _Out = []
    for kind, start, end in candidates:
        if start < end and all(end <= other[1] or other[2] <= start for other in kept):
            kept.append((kind, start, end))
    kept.sort(key=lambda item: item[1])
    return [
        Finding(kind, start, end, text[start:end]) for kind, start, end in kept if kind != _NOT_PII
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
