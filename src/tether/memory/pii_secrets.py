"""Finders of secrets in text: tokens known by their prefix, private keys, passwords,
credentials in ``Authorization`` headers, and long values assigned to secret-named keys.

Each ``find_*`` appends ``(kind, start, end)`` candidates to a list; overlaps and the
order of kinds are settled by :func:`tether.memory.pii.detect`, the entry point callers use.
The ``*_HINT`` patterns are the cheap tests ``detect`` runs before a finder.
"""

from __future__ import annotations

import base64
import binascii
import re

from tether.memory.pii_personal import HAS_DIGIT, Out, words

# --- tokens known by their prefix -----------------------------------------------------

# Cheap test for a token prefix, anchored on the token's rarest character.
TOKEN_HINT = re.compile(
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


def find_tokens(text: str, out: Out) -> None:
    for match in _TOKENS.finditer(text):
        kind = match.lastgroup
        if kind == "openai_key" and not HAS_DIGIT.search(match.group(), 3):
            continue
        if kind is not None:
            out.append((kind, match.start(), match.end()))


# --- secrets announced by their context -------------------------------------------------

# Cheap tests on the lowered text for the key words the detectors below need.
PASSWORD_HINT = re.compile(
    r"p(?:ass|w|arola)|kennwort|c(?:ontrase|lave)|wachtwoord|s(?:enha|alasana)|h(?:as[łl]o|eslo)"
    r"|l[öo]senord|adgangskode|jelsz|mdp|://|-u[ =]|--user"
)
RECOVERY_HINT = re.compile(
    r"recover|backup|rescue|emergency|2fa|mfa|factor|secours|recupera|herstel"
)
KEY_HINT = re.compile(r"b(?:earer|asic)|authori|token|secret|key|a(?:ws|mazon)|sig")
_PASSWORD = re.compile(
    r"(?i)(?<![a-z0-9])(?:(?P<strong>pgpassword|password|passwd|passphrase|passcode|"
    r"passwort|kennwort|mot de passe|contrase[ñn]a|wachtwoord|senha|has[łl]o|l[öo]senord|"
    r"adgangskode|salasana|heslo|jelsz[óo]|parola)|(?P<pass>pass)|pwd|pw|mdp|clave)(?![\w-])"
    r"(?P<sep>[\"']?[ \t]*(?::|=>|=|->)[ \t]*"
    r"|[ \t]+(?:is|was|ist|lautet|war|est|était|es|era|è|é|är|er|jest)(?:[ \t]*:)?[ \t]+"
    r"|[ \t]+)"
    r"(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`<>]{1,200})"
)
# A password named first and given a few words later: "the passphrase for the vault is
# fq57...", "pw is walrus857". Only values that look made up (letters and digits) count.
_PASSWORD_LATER = re.compile(
    r"(?i)(?<![a-z0-9])(?:password|passwd|passphrase|passcode|passwort|kennwort|"
    r"mot de passe|contrase[ñn]a|wachtwoord|senha|pwd|pw|mdp)(?![\w-])"
    r"(?:[ \t]+[^\s:=\"'`]{1,24}){0,5}?"
    r"[ \t]*(?:[ \t](?:is|was|ist|lautet|war|est|était|es|era|è|é|är|er|jest)|:)[ \t]+"
    r"(?P<value>[^\s\"'`<>]{6,80})"
)
_URL_PASSWORD = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@]+:(?P<value>[^\s/@]+)@[\w.[\]-]")
_CLI_PASSWORD = re.compile(r"(?<!\S)(?:-u|--user)[ =][\"']?[^\s:\"'@]+:(?P<value>[^\s\"']+)")
_NOT_PASSWORDS = words(
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
    if value.isalnum() and not HAS_DIGIT.search(value):
        return None
    return None if value[0] in "/~." else (start, end)


def _made_up(value: str) -> bool:
    """Letters and digits mixed (``walrus857``, ``fq57bpowlyhsiy``): not a word, not a
    number, not a date or a version."""
    if len(value) < 6 or value.lower() in _NOT_PASSWORDS or _VERSION_LIKE.fullmatch(value):
        return False
    return bool(HAS_DIGIT.search(value)) and sum(char.isalpha() for char in value) >= 2


def find_passwords(text: str, out: Out) -> None:
    for match in _PASSWORD.finditer(text):
        span = _password_value(text, match)
        if span is not None:
            out.append(("password", *span))
    for match in _PASSWORD_LATER.finditer(text):
        start = match.start("value")
        value = _trim_value(match.group("value"))
        if _made_up(value) and not _CODE_REFERENCE.fullmatch(value):
            out.append(("password", start, start + len(value)))
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
    r"access[_-]?key(?:[_-]?id)?|signing[_-]?key|encryption[_-]?key|account[_-]?key|"
    r"shared[_-]?access[_-]?key|sharedaccesssignature|sig)(?![\w-])"
    r"[\"']?[ \t]*(?::|=|=>|[ \t]is)[ \t]*[\"']?(?P<value>[^\s\"'`<>,;&]{12,})"
)
# A secret-named key followed by its value after plain spaces: "api secret 9f86d0...".
_SPACED_SECRET = re.compile(
    r"(?i)(?<![a-z0-9])(?:api|app|client|secret|access|auth|signing|encryption|private|"
    r"account|webhook)[ _-]?(?:secret|key|token)(?:[ \t]+(?:is|was|=|:))?[ \t]+"
    r"(?P<value>[A-Za-z0-9+/_\-]{24,}={0,2})(?![\w+/=-])"
)
_NPM_AUTH = re.compile(r"(?i)_authToken[ \t]*=[ \t]*(?P<value>[^\s\"'`]{12,})")
_RECOVERY_CUE = re.compile(
    r"(?i)\b(?:recovery|backup|rescue|emergency|2fa|mfa|two[- ]factor|wiederherstellungs|"
    r"backup-|codes? de (?:secours|recuperaci[óo]n|recupera[çc][ãa]o)|codici di recupero|"
    r"herstelcodes?)"
)
_RECOVERY_CODE = re.compile(
    r"(?<![\w-])(?:[A-Za-z0-9]{4,6}-[A-Za-z0-9]{4,6}(?:-[A-Za-z0-9]{4,6})*|[0-9]{8,10}|"
    r"[a-z0-9]{10})(?![\w-])"
)
_VERSION_LIKE = re.compile(r"v?[0-9]+(?:\.[0-9]+)+(?:[-+.][A-Za-z0-9.]+)?")
_AWS_CUE = re.compile(r"(?i)aws|amazon|secret[ _-]?(?:access[ _-]?)?key")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _looks_random(value: str) -> bool:
    return bool(HAS_DIGIT.search(value)) and any(char.isalpha() for char in value)


def find_keyed_secrets(text: str, lowered: str, out: Out) -> None:
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
    if "key" in lowered or "token" in lowered or "secret" in lowered or "sig" in lowered:
        for match in _GENERIC_SECRET.finditer(text):
            start = match.start("value")
            value = _trim_value(match.group("value"))
            if not _looks_random(value) or _CODE_REFERENCE.fullmatch(value):
                continue
            if not _VERSION_LIKE.fullmatch(value):
                out.append(("generic_secret", start, start + len(value)))
    for match in _SPACED_SECRET.finditer(text):
        value = match.group("value")
        if _looks_random(value) and not _VERSION_LIKE.fullmatch(value):
            out.append(("generic_secret", *match.span("value")))
    if "authtoken" in lowered:
        for match in _NPM_AUTH.finditer(text):
            value = _trim_value(match.group("value"))
            if _looks_random(value) and not _CODE_REFERENCE.fullmatch(value):
                start = match.start("value")
                out.append(("npm_token", start, start + len(value)))
    cue = _AWS_CUE.search(text)
    if cue is not None:
        for match in _AWS_SECRET.finditer(text, cue.start()):
            value = match.group()
            if not (value.isupper() or value.islower()) and _looks_random(value):
                out.append(("aws_secret_key", match.start(), match.end()))


def find_recovery_codes(text: str, out: Out) -> None:
    """Codes listed after a recovery or backup cue (within the same line): each code that
    holds a digit is a ``recovery_code``."""
    for cue in _RECOVERY_CUE.finditer(text):
        line_end = text.find("\n", cue.end())
        end = len(text) if line_end < 0 else line_end
        if not re.search(r"(?i)codes?|c[óo]digos?|codici|schl[üu]ssel", text[cue.start() : end]):
            continue
        for match in _RECOVERY_CODE.finditer(text, cue.end(), min(end, cue.end() + 400)):
            if HAS_DIGIT.search(match.group()) and not _VERSION_LIKE.fullmatch(match.group()):
                out.append(("recovery_code", match.start(), match.end()))
