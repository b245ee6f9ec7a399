"""The corpus behind the PII detection test: planted positives and near misses.

Positives are Faker values (fixed seeds, several locales) and tokens built to their
providers' published formats, each planted in a short sentence in the locale's language,
so the test knows exactly where the PII is. Near misses are the digits and strings that
fill ordinary text and look like PII to a careless detector: order numbers, versions,
dates, non-Luhn digit runs, hashes, UUIDs, IBANs with a wrong checksum, prose about
passwords and tokens. Everything is generated from fixed seeds, so the corpus (and the
printed scores) only change when Faker's data does.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from faker import Faker

from tether.memory.pii import iban_valid, luhn_valid

SEED = 20240601
# Dates are drawn between fixed instants, never relative to today, so the corpus is stable.
EARLIEST = datetime(2014, 1, 1, tzinfo=UTC)
LATEST = datetime(2026, 1, 1, tzinfo=UTC)
LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL")
PHONE_LOCALES = (*LOCALES, "pt_BR", "pl_PL", "en_AU", "de_CH", "ja_JP", "en_CA")
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"


@dataclass(frozen=True)
class Case:
    """A sentence with one planted value at ``text[start:end]`` of one of ``kinds``."""

    text: str
    kinds: frozenset[str]
    start: int
    end: int


def plant(template: str, value: str, *kinds: str) -> Case:
    start = template.index("{}")
    return Case(template.replace("{}", value, 1), frozenset(kinds), start, start + len(value))


_LANG = {"en_US": "en", "en_GB": "en", "en_AU": "en", "en_CA": "en", "ja_JP": "en"}


def _lang(locale: str) -> str:
    return _LANG.get(locale, locale[:2])


PHONE_TEMPLATES = {
    "en": [
        "Call me at {} after 6pm.",
        "My phone number is {}.",
        "Mobile: {}",
        "Text {} when you land.",
    ],
    "de": ["Rufen Sie mich unter {} an.", "Telefon: {}", "Meine Handynummer ist {}."],
    "fr": ["Appelez-moi au {} demain.", "Téléphone : {}", "Mon portable : {}"],
    "es": ["Llámame al {} por la tarde.", "Teléfono: {}", "Mi móvil es el {}."],
    "it": ["Chiamami al {} domani.", "Telefono: {}", "Il mio cellulare è {}."],
    "nl": ["Bel me op {} na vijf uur.", "Telefoon: {}", "Mijn mobiel: {}"],
    "pt": ["Ligue para {} amanhã.", "Telefone: {}"],
    "pl": ["Mój numer telefonu to {}.", "Tel. {}"],
}
# No cue word: the detector finds these only by shape (+CC, 00, trunk 0, NANP), so the
# numbers are redrawn until they start with "+", "(" or "0". A bare "3420837783" with no
# cue is undetectable by design (see the module docstring of tether.memory.pii).
BARE_PHONE_TEMPLATES = ["{name}, {}", "{name} ({})", "{} - {name}"]
EMAIL_TEMPLATES = {
    "en": ["Send the report to {} by Friday.", "Contact: {}", "cc {} on the reply"],
    "de": ["Schreiben Sie an {}, bitte.", "E-Mail: {}"],
    "fr": ["Écrivez-moi à {} svp.", "Courriel : {}"],
    "es": ["Mi correo es {}.", "Escríbeme a {}"],
    "it": ["La mia email è {}.", "Scrivimi a {}"],
    "nl": ["Mail naar {} voor vragen.", "E-mail: {}"],
}
CARD_TEMPLATES = {
    "en": ["Charge my card {} please.", "Card number: {}"],
    "de": ["Meine Kreditkarte: {}", "Karte {} belasten"],
    "fr": ["Numéro de carte : {}", "Payez avec la carte {}."],
    "es": ["Tarjeta: {}", "Cargue la tarjeta {}, gracias."],
    "it": ["Carta di credito {}", "Usa la carta {}."],
    "nl": ["Creditcard {}", "Betaal met kaart {}."],
}
IBAN_TEMPLATES = {
    "en": ["Please wire it to {}.", "IBAN: {}"],
    "de": ["Überweisung an {} bis Montag.", "IBAN {}"],
    "fr": ["Virement sur le compte {} svp.", "IBAN : {}"],
    "es": ["Transferencia a {}.", "Cuenta {}"],
    "it": ["Bonifico su {} entro lunedì.", "IBAN: {}"],
    "nl": ["Maak het over naar {}.", "Rekening {}"],
}
IP_TEMPLATES = {
    "en": ["Login from {} was blocked.", "The request came from {} at noon."],
    "de": ["Die Anfrage kam von {}.", "Zugriff von {} gesperrt."],
    "fr": ["Connexion depuis {} refusée.", "Adresse IP : {}"],
    "es": ["Acceso desde {} bloqueado.", "IP del cliente: {}"],
    "it": ["Accesso da {} bloccato.", "Indirizzo IP {}"],
    "nl": ["Inlog vanaf {} geblokkeerd.", "IP-adres: {}"],
}
PASSWORD_TEMPLATES = {
    "en": ["password: {}", "my password is {}", "pwd={}", "DB_PASSWORD={}", "passwd {}"],
    "de": ["Passwort: {}", "Das Passwort lautet {}", "Kennwort: {}"],
    "fr": ["mot de passe : {}", "Mon mot de passe est {}"],
    "es": ["contraseña: {}", "La contraseña es {}"],
    "it": ["password: {}", "La password è {}"],
    "nl": ["wachtwoord: {}", "Het wachtwoord is {}"],
}


@functools.cache
def _faker_pool() -> dict[str, Faker]:
    """One Faker per locale: building one scans Faker's provider packages, which is slow."""
    return {locale: Faker(locale) for locale in PHONE_LOCALES}


def _fakers(seed: int = SEED) -> dict[str, Faker]:
    """The Fakers, each reseeded, so every caller draws the same values every run."""
    fakers = _faker_pool()
    for index, locale in enumerate(PHONE_LOCALES):
        fakers[locale].seed_instance(seed + index)
    return fakers


def _group(value: str, size: int = 4) -> str:
    return " ".join(value[index : index + size] for index in range(0, len(value), size))


def _card_layout(number: str) -> str:
    if len(number) == 15 and number[:2] in ("34", "37"):
        return f"{number[:4]} {number[4:10]} {number[10:]}"
    return _group(number)


def faker_positives() -> list[Case]:
    fakers = _fakers()
    rng = random.Random(SEED)
    cases: list[Case] = []
    for locale in PHONE_LOCALES:
        fake = fakers[locale]
        templates = PHONE_TEMPLATES[_lang(locale)]
        for index in range(8):
            cases.append(plant(templates[index % len(templates)], fake.phone_number(), "phone"))
    for locale in ("en_US", "en_GB", "fr_FR", "de_DE", "nl_NL"):
        fake = fakers[locale]
        for template in BARE_PHONE_TEMPLATES:
            number = fake.phone_number()
            while not (number.startswith(("+", "(", "0")) or locale == "en_US"):
                number = fake.phone_number()
            cases.append(plant(template.replace("{name}", fake.name()), number, "phone"))
    # Faker's Maestro numbers have 12 digits, which the detector does not report.
    card_types = ["visa16", "mastercard", "amex", "discover", "jcb16", "jcb15", "diners"]
    for index, locale in enumerate(LOCALES):
        fake, lang = fakers[locale], _lang(locale)
        for round_ in range(7):
            templates = EMAIL_TEMPLATES[lang]
            email = (fake.email, fake.free_email, fake.company_email)[round_ % 3]()
            cases.append(plant(templates[round_ % len(templates)], email, "email"))
            number = fake.credit_card_number(card_types[(index + round_) % len(card_types)])
            shown = _card_layout(number) if round_ % 2 else number
            cases.append(plant(CARD_TEMPLATES[lang][round_ % 2], shown, "card"))
            iban = fake.iban()
            cases.append(
                plant(
                    IBAN_TEMPLATES[lang][round_ % 2], _group(iban) if round_ % 2 else iban, "iban"
                )
            )
            address = (fake.ipv4_public, fake.ipv4_private, fake.ipv6)[round_ % 3]()
            cases.append(plant(IP_TEMPLATES[lang][round_ % 2], address, "ip_address"))
        for template in PASSWORD_TEMPLATES[lang] * 2:
            cases.append(plant(template, fake.password(length=rng.randint(8, 16)), "password"))
    us = fakers["en_US"]
    for index in range(21):
        ssn = us.ssn()
        template = ("My SSN is {}.", "Social security number: {}", "SSN {} is on file.")[index % 3]
        shown = ssn.replace("-", " " if index % 7 == 3 else "-")
        cases.append(plant(template, shown, "ssn"))
    for index in range(6):
        password = "".join(rng.choice(ALNUM) for _ in range(rng.randint(10, 20)))
        user = us.user_name()
        url = f"postgres://{user}:{{}}@db{index}.internal:5432/app"
        cases.append(plant(f"Connect with {url} today", password, "password"))
    return cases


def _token(rng: random.Random, alphabet: str, size: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(rng: random.Random, fake: Faker) -> str:
    header = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    claims = {"sub": fake.uuid4(), "name": fake.name(), "iat": rng.randint(10**9, 2 * 10**9)}
    parts = [json.dumps(header).encode(), json.dumps(claims).encode(), rng.randbytes(32)]
    return ".".join(_b64url(part) for part in parts)


def _pem(rng: random.Random) -> str:
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    body = base64.b64encode(rng.randbytes(rng.randint(120, 400))).decode()
    lines = "\n".join(body[index : index + 64] for index in range(0, len(body), 64))
    return f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----"


TOKEN_SENTENCES = ["Here is the key: {} - rotate it soon.", "use {} for the deploy", "token={}"]


def token_positives() -> list[Case]:
    """Tokens in their providers' published formats (and a few published examples)."""
    rng = random.Random(SEED)
    fake = _fakers(SEED + 100)["en_US"]
    hexdigits = "0123456789abcdef"
    base64_chars = ALNUM + "/+"
    makers: dict[str, Callable[[], str]] = {
        "aws_access_key": lambda: (
            rng.choice(["AKIA", "ASIA"]) + _token(rng, string.ascii_uppercase + string.digits, 16)
        ),
        "github_token": lambda: (
            rng.choice(["ghp_", "gho_", "ghs_", "ghu_", "ghr_"]) + _token(rng, ALNUM, 36)
        ),
        "gitlab_token": lambda: "glpat-" + _token(rng, URLSAFE, 20),
        "slack_token": lambda: (
            f"xox{rng.choice('bpa')}-{_token(rng, string.digits, 12)}-"
            f"{_token(rng, string.digits, 13)}-{_token(rng, ALNUM, 24)}"
        ),
        "stripe_key": lambda: (
            rng.choice(["sk_live_", "rk_live_", "sk_test_"]) + _token(rng, ALNUM, 24)
        ),
        "openai_key": lambda: rng.choice(["sk-", "sk-proj-"]) + _token(rng, ALNUM, 48),
        "anthropic_key": lambda: "sk-ant-api03-" + _token(rng, URLSAFE, 93) + "AA",
        "google_api_key": lambda: "AIza" + _token(rng, URLSAFE, 35),
        "npm_token": lambda: "npm_" + _token(rng, ALNUM, 36),
        "pypi_token": lambda: "pypi-AgEIcHlwaS5vcmc" + _token(rng, URLSAFE, 64),
        "huggingface_token": lambda: "hf_" + _token(rng, ALNUM, 34),
        "sendgrid_key": lambda: f"SG.{_token(rng, URLSAFE, 22)}.{_token(rng, URLSAFE, 43)}",
        "jwt": lambda: _jwt(rng, fake),
    }
    cases: list[Case] = []
    for kind, make in makers.items():
        for index in range(6):
            cases.append(plant(TOKEN_SENTENCES[index % 3], make(), kind))
    published = [
        ("AWS_ACCESS_KEY_ID={}", "AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
        (
            "aws_secret_access_key = {}",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_key",
        ),
        ("stripe.api_key = '{}'", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
        (
            "Authorization: Bearer {}",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4g"
            "RG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
            "jwt",
        ),
    ]
    cases += [plant(template, value, kind) for template, value, kind in published]
    for index in range(6):
        secret = _token(rng, base64_chars, 40)
        template = (
            "AWS secret key: {}",
            "aws_secret_access_key={}",
            "export AWS_SECRET_ACCESS_KEY={}",
        )
        cases.append(plant(template[index % 3], secret, "aws_secret_key"))
        pat = f"github_pat_{_token(rng, ALNUM, 22)}_{_token(rng, ALNUM, 59)}"
        cases.append(plant("GH_TOKEN={} in CI", pat, "github_token"))
        upper = string.ascii_uppercase + string.digits
        hook = f"https://hooks.slack.com/services/T{_token(rng, upper, 8)}"
        hook += (
            f"/B{_token(rng, string.ascii_uppercase + string.digits, 8)}/{_token(rng, ALNUM, 24)}"
        )
        cases.append(plant("Post alerts to {} please", hook, "slack_webhook"))
        opaque = _token(rng, ALNUM + "-._~", rng.randint(24, 48))
        cases.append(
            plant(
                "curl -H 'Authorization: Bearer {}' https://api.example.com", opaque, "bearer_token"
            )
        )
        credentials = base64.b64encode(f"{fake.user_name()}:{fake.password()}".encode()).decode()
        cases.append(plant("Authorization: Basic {}", credentials, "basic_auth"))
        cases.append(plant("Key for the old box:\n{}\nDo not share.", _pem(rng), "private_key"))
        generic = _token(rng, hexdigits, 32) if index % 2 else _token(rng, ALNUM, 40)
        template2 = ("api_key = '{}'", "client_secret: {}", "X-API-Key: {}")[index % 3]
        cases.append(plant(template2, generic, "generic_secret"))
    return cases


@functools.cache
def positives() -> tuple[Case, ...]:
    return (*faker_positives(), *token_positives())


# --- near misses ------------------------------------------------------------------------


def _break_luhn(number: str) -> str:
    last = (int(number[-1]) + 1) % 10
    broken = number[:-1] + str(last)
    if luhn_valid(broken):  # pragma: no cover - one step always breaks it
        raise AssertionError(broken)
    return broken


def _break_iban(iban: str) -> str:
    check = int(iban[2:4])
    broken = f"{iban[:2]}{(check + 1) % 97 or 2:02d}{iban[4:]}"
    if iban_valid(broken):  # pragma: no cover - a different check pair always fails
        raise AssertionError(broken)
    return broken


@functools.cache
def near_misses() -> tuple[str, ...]:
    rng = random.Random(SEED + 1)
    fakers = _fakers()
    fake = fakers["en_US"]
    texts: list[str] = []

    def digits(size: int) -> str:
        return str(rng.randint(1, 9)) + "".join(rng.choice(string.digits) for _ in range(size - 1))

    order_templates = [
        "Order #{} has shipped.",
        "Your order no. {} is ready for pickup.",
        "Bestellnummer {} wurde versandt.",
        "Commande n° {} expédiée.",
        "Pedido {} enviado hoy.",
        "Ordine n. {} spedito.",
        "Bestelling {} is verzonden.",
        "Invoice {} is overdue.",
        "Ticket #{} was closed.",
        "Tracking number {} is in transit.",
    ]
    for index in range(40):
        number = digits(rng.choice([6, 8, 9, 10, 11, 12]))
        if index % 5 == 4:
            number = "0" + number[1:]
        texts.append(order_templates[index % len(order_templates)].format(number))
    for _ in range(10):
        texts.append(f"Order {digits(3)}-{digits(7)}-{digits(7)} was delivered.")
        texts.append(f"See INV-{rng.randint(2019, 2025)}-{digits(6)} for details.")
        texts.append(
            f"Tracking 1Z{_token(rng, string.ascii_uppercase + string.digits, 16)} shipped."
        )

    def octet() -> int:
        return rng.randint(0, 255)

    for index in range(30):
        a, b, c, d = rng.randint(1, 30), rng.randint(0, 20), rng.randint(0, 99), octet()
        texts.append(
            [
                f"Upgraded to v{a}.{b}.{c} yesterday.",
                f"Running version {a}.{b}.{c}.{d} in production.",
                f"Release {a}.{b}.{c}.{d} fixes the crash.",
                f"User-Agent: Mozilla/5.0 Chrome/{rng.randint(90, 130)}.0.{c}.{d} Safari/537.36",
                f"pip install numpy=={a}.{b}.{c}",
                f"Windows build 10.0.{rng.randint(10000, 22631)}.{rng.randint(1, 4000)} is out.",
                f"firmware {a}.{b}.{c}.{d} is installed",
                f"node v{a}.{b}.{c}, python 3.{b}.{c}",
                f"the kernel {a}.{b}.{c}-{d}-generic booted",
                f"bump to {a}.{b}.{c}.{d}-beta",
            ][index % 10]
        )
    for index in range(40):
        moment = fake.date_time_between(start_date=EARLIEST, end_date=LATEST, tzinfo=UTC)
        texts.append(
            [
                f"Created at {moment:%Y-%m-%dT%H:%M:%S}Z",
                f"Fälligkeit: {moment:%d.%m.%Y}",
                f"Due {moment:%m/%d/%Y}",
                f"Le {moment:%d/%m/%Y %H:%M} au plus tard",
                f"batch {moment:%Y%m%d}",
                f"epoch {int(moment.timestamp())}",
                f"ts={int(moment.timestamp() * 1000)}",
                f"logged {moment:%Y-%m-%d %H:%M:%S}.{rng.randint(0, 999999):06d}",
                f"Date: {moment:%a, %d %b %Y %H:%M:%S} +0000",
                f"am {moment:%d.%m.%Y um %H:%M} Uhr",
            ][index % 10]
        )
    card_types = ["visa16", "mastercard", "amex", "discover", "jcb16", "diners", "visa19"]
    for index in range(40):
        number = _break_luhn(fake.credit_card_number(card_types[index % len(card_types)]))
        shown = _card_layout(number) if index % 2 else number
        texts.append(
            ["Number {} was declined.", "Reference {} attached", "{} is not valid"][
                index % 3
            ].format(shown)
        )
    for index in range(40):
        texts.append(
            [
                f"md5 {fake.md5()}",
                f"sha1: {fake.sha1()}",
                f"sha256 {fake.sha256()}",
                f"commit {fake.sha1()[:7]} fixed it",
                f"image@sha256:{fake.sha256()}",
                f'ETag: "{fake.md5()}"',
                f"merged {fake.sha1()[:12]} into main",
                f"checksum {fake.sha256()[:40]}",
            ][index % 8]
        )
    for index in range(30):
        uuid = fake.uuid4()
        texts.append(
            [
                f"run {uuid} finished",
                f"GET /api/runs/{uuid}/steps",
                f"Request-Id: {uuid.upper()}",
                f"case_id={uuid}",
                f"{uuid}",
            ][index % 5]
        )
    for index, locale in enumerate(LOCALES * 5):
        iban = _break_iban(fakers[locale].iban())
        texts.append(
            ["IBAN: {}", "Please wire it to {}."][index % 2].format(
                _group(iban) if index % 3 else iban
            )
        )
    for index, locale in enumerate(LOCALES * 3):
        local = fakers[locale]
        texts.append(f"{local.user_agent()}")
        texts.append(f"EAN {local.ean13()}" if index % 2 else f"{local.ean13()} in stock")
        texts.append(f"ISBN {local.isbn13()}")
        texts.append(
            [
                local.iso8601(end_datetime=LATEST),
                local.uri(),
                local.mac_address(),
                local.swift(),
                local.vin(),
            ][index % 5]
        )
    texts += [
        "999.10.10.10 is not an address",
        "256.1.1.1 overflows",
        "sections 1.2.3.4.5 and 2.1",
        "OID 1.3.6.1.4.1.311",
        "MAC 00:1A:2B:3C:4D:5E",
        "at 10:30:00 sharp",
        "std::vector<int> v;",
        "crate::module::Type",
        "ratio 3:2:1",
        "score 12.5.2024.1",
        "000-12-3456 is not issued",
        "666-12-3456 is reserved",
        "900-12-3456 is an ITIN range",
        "123-00-4567 has a zero group",
        "123-45-0000 has a zero serial",
    ]
    texts += [
        "Forgot your password? Click here.",
        "password: ********",
        "password: <redacted>",
        "password: [REDACTED]",
        "Password must be at least 12 characters long.",
        "password=${DB_PASSWORD}",
        "password = os.environ['DB_PASSWORD']",
        "def login(username: str, password: str) -> None:",
        "The password field is required.",
        "Use a password manager.",
        "Passwort vergessen?",
        "Mot de passe oublié ?",
        "¿Olvidaste tu contraseña?",
        "Hai dimenticato la password?",
        "Wachtwoord vergeten?",
        "password: {{ vault_db_password }}",
        "password_reset_url: https://example.com/reset",
        "Your password is incorrect.",
        "the password is too short",
        "Boarding pass: 12B",
        "pwd /home/alice",
        "sk-learn compatible estimator",
        "the bearer of this letter",
        "Authorization: Bearer <token>",
        "Authorization: Bearer $TOKEN",
        "Bearer token expired, please log in again",
        "a basic understanding of SQL",
        "ghp_ prefix marks a GitHub token",
        "AKIA is the prefix of an access key",
        "JWTs start with eyJ",
        "api_key: YOUR_API_KEY",
        "token: null",
        "secret: see vault",
        "-----BEGIN CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----",
    ]
    texts += [
        "Total: €1.234.567,89",
        "ISBN 978-3-16-148410-0",
        "75008 Paris",
        "Coordinates 48.8566, 2.3522",
        "Room 1204, floor 12",
        "flight LH 400",
        "Error 0x80070005",
        "HTTP 404 after 3.5 s",
        "listening on port 8080",
        "resolution 1920x1080",
        "population 8 336 817",
        "scores 36 38 40 42",
        "1.5e-10 tolerance",
        "PT1H30M duration",
        "@alice_smith on GitHub",
        "retina icon@2x.png",
        "user@localhost",
        "git@github.com:org/repo.git",
        "npm i @scope/pkg@1.2.3",
        "example.com is a domain",
        "Ticket 0612345678 resolved",
        "Kundennummer 0301234567",
        "Case 0171234567 closed",
        "SKU 00012345678905",
        "Account 12345678 frozen",
    ]
    return tuple(texts)
