"""Finders of personal data in text: e-mail addresses, IBANs, card numbers, US SSNs, IP
addresses and phone numbers, with the checksums and the cue words that tell them from
the other numbers of ordinary text.

Each ``find_*`` appends ``(kind, start, end)`` candidates to a list; overlaps and the
order of kinds are settled by :func:`tether.memory.pii.detect`, the entry point callers use.
"""

from __future__ import annotations

import ipaddress
import re

Out = list[tuple[str, int, int]]
"""Candidates as ``(kind, start, end)``; every finder appends to one such list."""

NOT_PII = "_not_pii"
"""Text shaped like an IBAN whose checksum fails: it hides the digit kinds inside it (a
Luhn-valid run of its digits is not a card) and is never reported itself."""

HAS_DIGIT = re.compile(r"[0-9]")


def words(spaced: str) -> frozenset[str]:
    """The words of a space-separated list, as a set: how the cue tables are written."""
    return frozenset(spaced.split())


# --- checksums ------------------------------------------------------------------------


# ISO 13616 registry (SWIFT IBAN registry): country code and IBAN length.
_IBAN_LENGTHS = {
    entry[:2]: int(entry[2:])
    for entry in words(
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
_PHONE_CUES = words(
    "phone phones telephone tel tél tlf mob mobile cell cellphone call calling text sms "
    "whatsapp fax dial reach contact hotline handy mobil rufnummer rufen ruf durchwahl "
    "téléphone portable joindre joignable fixe teléfono telefono móvil movil contacto "
    "celular cellulare contatto contatti mobiel bel bellen belt telefone ligue ligar "
    "komórka"
)
_PHONE_STEMS = ("telefon", "anruf", "erreichbar", "appel", "llam", "chiam", "ring", "phone")
_OTHER_CUES = words(
    "order orders invoice ref reference ticket tracking case id sku serial version ver "
    "build release isbn iban bic account acct konto po item part batch lot zip postcode "
    "plz commande facture pedido factura ordine fattura bestelling factuur dossier "
    "expediente pratica kundennummer kundennr shipment parcel colis transaction txn "
    "receipt quittung ean gtin upc barcode"
)
_OTHER_STEMS = ("bestell", "rechnung", "auftrag", "sendung")
_SSN_CUES = words("ssn ss social soc sec tin itin taxpayer")
_VERSION_CUES = words(
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


_LABEL_FILLERS = words("no nr number num nummer numero numéro n nº id ref")


def _number_context(text: str, start: int) -> str | None:
    """``"phone"`` after the nearest phone cue before ``start``; ``"other"`` when the
    number is labelled as an order, a case, a ticket... (the label right before it, or
    before "no"/"number"/"#"); else None. A label further back ("the card used in the
    transaction was ...") says nothing about this number."""
    cues = _cue_words(text, start)
    labelled = True
    for word in reversed(cues):
        if word in _PHONE_CUES or word.startswith(_PHONE_STEMS):
            return "phone"
        other = word == "#" or word in _OTHER_CUES or word.startswith(_OTHER_STEMS)
        if other and labelled:
            return "other"
        labelled = labelled and (word == "#" or word in _LABEL_FILLERS)
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

_EMAIL_DOMAIN = re.compile(r"@(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,24}(?![\w-])")
_NOT_EMAIL_TLDS = words("png jpg jpeg gif svg webp css js ts py json tgz")


def _email_local_start(text: str, at: int) -> int | None:
    """Where the local part before the ``@`` at ``at`` starts, or None if there is none."""
    start = at
    while start and (text[start - 1].isalnum() or text[start - 1] in "._%+-"):
        start -= 1
    while start < at and text[start] == ".":
        start += 1
    return start if 0 < at - start <= 64 else None


def find_emails(text: str, out: Out) -> None:
    for match in _EMAIL_DOMAIN.finditer(text):
        start = _email_local_start(text, match.start())
        if start is None or match.group().rsplit(".", 1)[1].lower() in _NOT_EMAIL_TLDS:
            continue
        if text.startswith("git@", start) and text.startswith(":", match.end()):
            continue
        out.append(("email", start, match.end()))


_IBAN_START = re.compile(r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z][0-9]{2}")


def find_ibans(text: str, out: Out) -> None:
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
        kind = "iban" if iban_valid(text[match.start() : position]) else NOT_PII
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


def find_numbers(text: str, out: Out) -> None:
    """Cards, SSNs, IPv4 addresses and phone numbers, all starting where a number does."""
    for run in _NUMBER_RUN.finditer(text):
        start, end = run.span()
        number = run.group()
        if len(number) < 7:
            continue
        digits_at = start + 1 if number[0] == "(" and number[1:2].isdigit() else start
        if text[digits_at].isdigit():
            found = [_ipv4_at(text, digits_at), _ssn_at(text, digits_at)]
            if end - digits_at >= 13:
                found.append(_card_at(text, digits_at))
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


def find_ipv6(text: str, out: Out) -> None:
    for match in _IPV6.finditer(text):
        candidate = match.group()
        address = candidate.split("%", 1)[0]
        if "::" not in address and address.count(":") + ("." in address) < 7:
            continue
        if not HAS_DIGIT.search(address):
            continue
        try:
            parsed = ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        if not (parsed.is_unspecified or parsed.is_loopback):
            out.append(("ip_address", match.start(), match.end()))
