"""The second PII corpus: the shapes an earlier detector missed (a password a few words
after its keyword, numbers in parentheses, a label word further back, Azure account keys,
spaced "api secret" values, npm tokens, recovery codes) and the kinds it lacked (postal
addresses, dates of birth, passports, national ids, health terms), with near misses for
each. Written by hand, in several languages; street names and people are invented.
"""

from __future__ import annotations

import random
import string

from faker import Faker

from tests.unit.pii_cases import LOCALES, SEED, Case, plant

_RNG = random.Random(20261124)


def _token(alphabet: str, size: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(size))


def _mixed(size: int) -> str:
    """Letters with at least two digits: what a made-up password looks like."""
    core = list(_token(string.ascii_lowercase, size - 2) + _token(string.digits, 2))
    _RNG.shuffle(core)
    return "".join(core)


ADDRESSES = [
    ("She moved to {} last spring.", "221B Baker Street"),
    ("Send the documents to {}, Springfield.", "742 Evergreen Terrace"),
    ("Our office is at {}, Suite 300.", "1600 Amphitheatre Parkway"),
    ("The claimant lives at {} in Leeds.", "14 Hawthorn Close"),
    ("Deliver to {}, Boston MA.", "88 Harbor View"),
    ("He rents a flat at {}.", "3 Kensington Gardens"),
    ("Mail goes to {}, Austin.", "5120 Mesa Ridge Drive"),
    ("Die Kundin wohnt in der {} in Köln.", "Lindenstraße 42"),
    ("Bitte an {}, 10115 Berlin schicken.", "Invalidenstr. 117"),
    ("Er ist in die {} gezogen.", "Schillerallee 8a"),
    ("Neue Anschrift: {}, München.", "Am Rosengarten Weg 3"),
    ("Le client habite au {}, Paris.", "12 rue de la Paix"),
    ("Envoyez le courrier au {}, Lyon.", "8, boulevard des Brotteaux"),
    ("Elle a déménagé au {}.", "27 avenue Victor Hugo"),
    ("El cliente vive en {}, Madrid.", "Calle Mayor 15"),
    ("Mándalo a {}, Sevilla.", "Avenida de la Constitución 24"),
    ("Su piso está en {}.", "Paseo de Gracia 92"),
    ("Il cliente abita in {}, Milano.", "Via Giuseppe Verdi 12"),
    ("Spedire a {}, Roma.", "Piazza Navona 45"),
    ("La sede è in {}.", "Corso Vittorio Emanuele 210"),
    ("O cliente mora na {}, Lisboa.", "Rua Augusta 100"),
    ("Enviar para {}, Porto.", "Avenida dos Aliados, 59"),
    ("De klant woont op {} in Amsterdam.", "Keizersgracht 123"),
    ("Stuur het naar {}, Utrecht.", "Oudegracht 56"),
    ("Het nieuwe adres is {}.", "Stationsplein 9"),
    ("Zij verhuisde naar {}.", "Wilhelminalaan 17b"),
]

BIRTH_DATES = [
    ("The claimant was born on {}.", "12 March 1985"),
    ("DOB: {}", "1985-03-12"),
    ("Date of birth {} per the form.", "03/12/1985"),
    ("Her birthday is {}.", "July 4, 1992"),
    ("Geboren am {} in Hamburg.", "7. Mai 1979"),
    ("Geburtsdatum: {}", "14.02.1990"),
    ("Né le {} à Lyon.", "3 juin 1988"),
    ("Date de naissance : {}", "21/09/1975"),
    ("Nacido el {} en Valencia.", "5 de octubre de 1983"),
    ("Fecha de nacimiento: {}", "30/01/2001"),
    ("Nato il {} a Torino.", "18 agosto 1969"),
    ("Data di nascita {}", "02/11/1996"),
    ("Nascida em {} no Porto.", "9 de dezembro de 1987"),
    ("Geboortedatum: {}", "11-04-1993"),
    ("d.o.b. {}", "1970-01-23"),
    ("born {} according to the passport", "Feb 29, 1996"),
]

PASSPORTS = [
    ("Passport number {} expires next year.", "C01X00T47"),
    ("His passport: {}", "533401982"),
    ("Reisepass Nr. {}", "C4J7R2K9M"),
    ("Numéro de passeport {}", "18AV34567"),
    ("Pasaporte {} caducado", "PAB123456"),
    ("passaporto n. {}", "YA1234567"),
    ("Passaporte {}", "CB123456"),
    ("paspoortnummer {}", "NW8KL4R27"),
    ("Her passport no. is {}.", "GB5738291"),
    ("passport {} on file", "X83650192"),
]

NATIONAL_IDS = [
    ("My NI number is {}.", "QQ 12 34 56 C"),
    ("National insurance: {}", "AB123456D"),
    ("DNI {}", "12345678Z"),
    ("NIE del cliente: {}", "X1234567L"),
    ("Codice fiscale {}", "RSSMRA85T10A562S"),
    ("CPF {}", "529.982.247-25"),
    ("BSN: {}", "111222333"),
    ("Burgerservicenummer {}", "123456782"),
    ("Steuer-ID {}", "86095742719"),
    ("numéro de sécurité sociale {}", "1 85 03 75 116 238 91"),
    ("national id {}", "A12B34567"),
    ("Personalausweis {}", "T22000129"),
    ("PESEL {}", "44051401359"),
]

HEALTH = [
    ("The claimant was diagnosed with {} in 2019.", "diabetes"),
    ("She is {} and due in May.", "pregnant"),
    ("He takes medication for {}.", "depression"),
    ("Treatment: {} twice a week.", "dialysis"),
    ("Der Kunde hat {}.", "Krebs"),
    ("Sie ist {}.", "schwanger"),
    ("Il souffre d'{}.", "asthme"),
    ("Elle est {} de six mois.", "enceinte"),
    ("Tiene {} tipo 2.", "diabetes"),
    ("Ha la {}.", "depressione"),
    ("Ele faz {}.", "quimioterapia"),
    ("Hij heeft {}.", "kanker"),
    ("The patient has {} and uses a wheelchair.", "multiple sclerosis"),
    ("Her son has {}.", "autism"),
    ("He was treated for {} last year.", "HIV"),
]

SECRET_SHAPES = [
    ("the passphrase for the vault is {}", _mixed(14), "password"),
    ("pw is {}", "walrus857", "password"),
    ("my password for the bank portal is {}", _mixed(11), "password"),
    ("Passwort für das WLAN ist {}", _mixed(10), "password"),
    ("le mot de passe du wifi est {}", _mixed(12), "password"),
    ("la contraseña del router es {}", _mixed(9), "password"),
    ("pwd for staging: {}", _mixed(12), "password"),
    ("wachtwoord van de mail is {}", _mixed(10), "password"),
    (
        "DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey={};EndpointSuffix=core",
        _token(string.ascii_letters + string.digits + "+/", 86) + "==",
        "generic_secret",
    ),
    ("AccountKey={}", _token(string.ascii_letters + string.digits, 86) + "==", "generic_secret"),
    ("api secret {}", _token("0123456789abcdef", 64), "generic_secret"),
    ("client secret is {}", _token(string.ascii_letters + string.digits, 40), "generic_secret"),
    ("app key {}", _token(string.ascii_letters + string.digits, 32), "generic_secret"),
    (
        "//registry.npmjs.org/:_authToken={}",
        "npm_" + _token(string.ascii_letters, 20) + _token(string.digits, 16),
        "npm_token",
    ),
    (
        "//registry.npmjs.org/:_authToken={}",
        "3f2a1b4c-5d6e-7f80-9a1b-2c3d4e5f6a7b",
        "npm_token",
    ),
    (
        "publish with npm token {}",
        "npm_" + _token(string.ascii_letters + string.digits, 36),
        "npm_token",
    ),
    ("Recovery codes: {} (keep them safe)", "4f8k2-9xm3p", "recovery_code"),
    ("GitHub backup codes: {}", "7q2wd-kk81z", "recovery_code"),
    ("2FA recovery code {}", "83920174", "recovery_code"),
    ("Wiederherstellungscodes: {}", "a8d2-k29f-0pq3", "recovery_code"),
    ("codes de secours : {}", "5813-7702", "recovery_code"),
]

NUMBER_SHAPES = [
    ("SSN ({})", "123-45-6789", "ssn"),
    ("card on file ({})", "4111 1111 1111 1111", "card"),
    ("server ({}) is down", "192.168.14.20", "ip_address"),
    ("the card used in the transaction was {}", "5555 5555 5555 4444", "card"),
    ("for this case, call me on {}", "020 7946 0958", "phone"),
    ("transaction disputed; reach her at {}", "+44 20 7946 0958", "phone"),
    ("case owner phone {}", "06 12 34 56 78", "phone"),
    ("(card {})", "4012888888881881", "card"),
    ("order was paid with {}", "3782 822463 10005", "card"),
]


def positives() -> list[Case]:
    cases = []
    for kind, table in (
        ("address", ADDRESSES),
        ("date_of_birth", BIRTH_DATES),
        ("passport", PASSPORTS),
        ("national_id", NATIONAL_IDS),
        ("health", HEALTH),
    ):
        cases += [plant(template, value, kind) for template, value in table]
    cases += [plant(template, value, kind) for template, value, kind in SECRET_SHAPES]
    cases += [plant(template, value, kind) for template, value, kind in NUMBER_SHAPES]
    return cases + faker_addresses()


def faker_addresses() -> list[Case]:
    """Faker's postal addresses, three per locale (fixed seed)."""
    cases = []
    for locale in (*LOCALES, "pt_PT"):
        fake = Faker(locale)
        fake.seed_instance(SEED)
        for _ in range(3):
            cases.append(plant("Ship to {}", fake.address().replace("\n", ", "), "address"))
    return cases


def near_misses() -> tuple[str, ...]:
    return (
        "The meeting moved to the second floor, room 12.",
        "We shipped 3 Main features in the spring release.",
        "Spring 2024 release notes",
        "Version 4 Drive integration is done",
        "The Great Depression changed banking.",
        "Take the 5 train to 42nd Street station.",
        "Chapter 12 covers the French revolution.",
        "The claimant was born in Leeds.",
        "Born to run, released 1975.",
        "Invoice dated 12 March 2024 is overdue.",
        "Geboren in Hamburg, aufgewachsen in Bremen.",
        "The passport office opens at nine.",
        "Passport photos must be recent.",
        "Apply for a national insurance number online.",
        "The DNI office is closed on Mondays.",
        "The codice fiscale is required for contracts.",
        "Our health plan covers dental care.",
        "He runs a diabetes awareness charity.",
        "Password must contain a digit and a letter.",
        "The password field is required.",
        "Reset your password from the account page.",
        "pw is required for this command",
        "password for the portal is stored in the vault",
        "The passphrase is at least six words long.",
        "api secret rotation happens every 90 days",
        "client secret is configured in the dashboard",
        "AccountKey is read from the environment",
        "npm token rotation is scheduled for March",
        "Recovery codes are shown once after setup.",
        "Backup codes can be regenerated at any time.",
        "The backup ran at 02:00 and copied 5120 files.",
        "case 20231114 closed",
        "Case 0171234567 closed",
        "Ticket 0612345678 resolved",
        "transaction id 4111111111111111",
        "order no. 4111111111111111",
        "(see section 12.4.1)",
        "(version 1.2.3.4)",
        "(ISBN 978-3-16-148410-0)",
        "Meet me at the Plaza at 6.",
        "Via email, 3 people replied.",
        "The bakery on Main Street sells rye bread.",
        "The Rua Augusta arch is in Lisbon.",
        "Keizersgracht is a canal in Amsterdam.",
        "Hauptstraße ist gesperrt.",
        "NATO summit in July",
        "Room 1204, floor 12",
        "Error code 80070005 after the update",
        "The printer prints 1200 pages per hour.",
        "BSN and DNI are national identifiers.",
        "Her first 5k run was in 2019.",
        "Gate B12 closes at 10:40.",
        "The ID card reader is broken.",
        "Pregnancy and parental leave policy: see HR page.",
    )
