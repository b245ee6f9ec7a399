"""Finders of who a person is and where they live: postal addresses, dates of birth,
passport and national id numbers, and health terms (special-category data).

Each ``find_*`` appends ``(kind, start, end)`` candidates to a list; overlaps and the
order of kinds are settled by :func:`tether.memory.pii.detect`. Dates, document numbers
and national ids count only next to a cue word ("born", "passport", "BSN", ...) or, for
the national ids whose shape carries a check (UK NINO, Spanish DNI/NIE, Italian codice
fiscale, Brazilian CPF), by that check. Every pattern is bounded (no nested unbounded
repetition), so hostile input costs linear time.
"""

from __future__ import annotations

import re

from tether.memory.pii_personal import Out

# --- postal addresses -----------------------------------------------------------------

_NAME = r"[A-ZÀ-Ý][\w'\u2019.-]{0,30}"
_STREET_EN = (
    r"(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Lane|Ln\.?|Boulevard|Blvd\.?|Drive|Dr\.?|"
    r"Court|Ct\.?|Way|Place|Pl\.?|Terrace|Ter\.?|Close|Crescent|Square|Sq\.?|Parkway|"
    r"Pkwy\.?|Highway|Hwy\.?|Row|Mews|Grove|Gardens|Hill|Heights|Trail|Circle|Cir\.?|Alley|"
    r"Walk|Green|Meadows?|Pines|Creek|Ridge|Loop|Pike|Plaza|Stream|Mountains?|Spur|Trace|"
    r"Burgs?|Crossing|Estates?|Harbou?r|Villas?|Park|Wharf|Embankment|Parade|Rise|View|"
    # the rest of the USPS street suffixes (Publication 28) and British ones
    r"Island|Isle|Passage|Ford|Port|Haven|Fort|Glen|Valley|Vista|Village|Junction|Ville|"
    r"Lodge|Mill|Mission|Motorway|Oval|Pass|Path|Plains?|Prairie|Ranch|Rapids|Route|"
    r"Shoals?|Shores?|Springs?|Station|Summit|Turnpike|Union|Wells?|Keys?|Knolls?|Lakes?|"
    r"Landing|Lock|Manor|Bay|Bend|Bluffs?|Branch|Bridge|Brooks?|Bypass|Canyon|Cape|"
    r"Causeway|Center|Centre|Cliffs?|Common|Corners?|Coves?|Crest|Curve|Dale|Divide|"
    r"Expressway|Falls|Ferry|Fields?|Flats?|Forest|Forge|Forks?|Freeway|Gateway|Hollow|"
    r"Inlet|Neck|Orchard|Run|Skyway|Track|Underpass|Viaduct|Gate|Yard|Wynd|Chase|Grange)"
)
_ADDRESS = re.compile(
    # 221B Baker Street, 1600 Pennsylvania Avenue NW
    rf"(?<![\w-])[0-9]{{1,5}}[A-Za-z]?,?[ \t]+(?:{_NAME}[ \t]+){{1,4}}{_STREET_EN}(?![\w])"
    # Hauptstraße 12, Keizersgracht 123, Am Markt 5 is not covered (no street word)
    r"|(?<![\w-])[A-ZÄÖÜ][\wäöüß'-]{1,30}(?:(?i:stra(?:ß|ss)e|str\.|weg|gasse|allee|platz|damm|"
    r"ufer|straat|laan|gracht|plein|kade|singel|dijk|steeg|boulevard|hof)|-Ring)[ \t]+[0-9]{1,4}"
    r"[a-zA-Z]?(?![\w])"
    r"|(?<![\w-])(?:[A-ZÄÖÜ][\wäöüß-]{1,30}[ \t]){1,2}(?:Straße|Strasse|Str\.|Weg|Gasse|Allee|"
    r"Platz|Damm)[ \t]+[0-9]{1,4}[a-zA-Z]?(?![\w])"
    # 12 rue de la Paix, 5 bis avenue Foch
    r"|(?<![\w-])[0-9]{1,4}(?:[ \t]?(?:bis|ter))?,?[ \t]+(?:rue|avenue|av\.|boulevard|bd|"
    r"chemin|allée|place|impasse|quai|route|cours)[ \t]+(?:[\w'\u2019-]{1,30}[ \t]+){0,4}?"
    r"[A-ZÀ-Ý][\w'\u2019-]{1,30}"
    # Calle Mayor 5, Via Roma 10, Rua Augusta 100, Avenida da Liberdade, 245
    r"|(?<![\w-])(?:Calle|C/|Avenida|Avda\.|Av\.?|Paseo|Plaza|Camino|Carrer|Callejón|Cuesta|"
    r"Ronda|Urbanización|Travesía|Glorieta|Rambla|Carretera|Via|Viale|Piazza|Piazzale|Corso|"
    r"Vicolo|Largo|Contrada|Rotonda|Stretto|Strada|Borgo|Lungomare|Rua|Travessa|Praça|"
    r"Estrada|Alameda|Beco|Calçada|Rotunda)[ \t]+(?:[\w'\u2019-]{1,30}[ \t]+){0,4}?"
    r"[A-ZÀ-Ý][\w'\u2019-]{1,30},?[ \t]+(?:n[º°o]\.?[ \t]*)?[0-9]{1,4}[a-zA-Z]?(?![\w])"
)


def find_addresses(text: str, out: Out) -> None:
    out += [("address", match.start(), match.end()) for match in _ADDRESS.finditer(text)]


# --- dates of birth -------------------------------------------------------------------

_BIRTH_CUE = re.compile(
    r"(?i)\b(?:born|birth|birthday|dob|d\.o\.b\.?|geboren|geburtsdatum|geburtstag|geb\.|"
    r"née?|naissance|nacid[oa]|nacimiento|cumpleaños|nat[oa]|nascita|nascid[oa]|"
    r"nascimento|aniversário|geboortedatum|verjaardag)(?![\w])"
)
_MONTHS = (
    r"(?:jan(?:uary|vier|uar|eiro)?|feb(?:ruary|ruar)?|febbraio|fév(?:rier)?|fevereiro|"
    r"mar(?:ch|s|zo|ço)?|mär(?:z)?|maart|apr(?:il|ile)?|avr(?:il)?|abr(?:il)?|may|mai|mayo|"
    r"maggio|maio|mei|jun(?:e|i|io|ho)?|juin|giugno|jul(?:y|i|io|ho)?|juil(?:let)?|luglio|"
    r"aug(?:ust|ustus)?|ago(?:sto)?|août|sep(?:t(?:ember|embre)?)?|set(?:tembre|embro)?|"
    r"oct(?:ober|obre|ubre)?|okt(?:ober)?|ott(?:obre)?|out(?:ubro)?|nov(?:ember|embre|"
    r"iembre|embro)?|dec(?:ember)?|dez(?:ember|embro)?|déc(?:embre)?|dic(?:iembre|embre)?)"
)
_DATE = re.compile(
    r"(?<![\w])(?:[0-9]{1,2}[./-][0-9]{1,2}[./-](?:19|20)?[0-9]{2}|(?:19|20)[0-9]{2}[./-]"
    r"[0-9]{1,2}[./-][0-9]{1,2}"
    rf"|[0-9]{{1,2}}(?:st|nd|rd|th|er|º)?\.?[ \t]+(?:de[ \t]+)?{_MONTHS}\.?,?[ \t]+(?:de[ \t]+)?"
    r"(?:19|20)[0-9]{2}"
    rf"|{_MONTHS}\.?[ \t]+[0-9]{{1,2}}(?:st|nd|rd|th)?,?[ \t]+(?:19|20)[0-9]{{2}})(?![\w])",
    re.IGNORECASE,
)


def find_birth_dates(text: str, out: Out) -> None:
    """A date within 40 characters after a birth cue ("born on", "DOB:", "geboren am")."""
    for cue in _BIRTH_CUE.finditer(text):
        match = _DATE.search(text, cue.end(), min(len(text), cue.end() + 40))
        if match is not None:
            out.append(("date_of_birth", match.start(), match.end()))


# --- passports and national ids -------------------------------------------------------

_PASSPORT_CUE = re.compile(
    r"(?i)\b(?:passport|reisepass|pass-?nr|passnummer|passeport|pasaporte|passaporto|"
    r"passaporte|paspoort)\w{0,8}(?![\w])"
)
_NATIONAL_CUE = re.compile(
    r"(?i)(?<![\w])(?:national (?:id|identity|insurance)|ni number|nino|id card|identity card|"
    r"personalausweis|ausweis(?:nummer)?|steuer-?id|steueridentifikationsnummer|"
    r"sozialversicherungsnummer|carte d'identité|numéro de sécurité sociale|nir|insee|"
    r"dni|nif|documento nacional|codice fiscale|carta d'identità|cpf|cartão de cidadão|"
    r"bsn|burgerservicenummer|sofinummer|pesel|personnummer|aadhaar|citizen id|"
    r"identiteitskaart|id-kaart)(?![\w])"
)
_DOCUMENT_NUMBER = re.compile(
    r"(?<![\w-])(?=[A-Z0-9 .-]*[0-9])[A-Z0-9](?:[ .-]?[A-Z0-9]){5,17}(?![\w-])"
)
_NINO = re.compile(
    r"(?<![\w])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z][ ]?[0-9]{2}[ ]?"
    r"[0-9]{2}[ ]?[0-9]{2}[ ]?[A-D](?![\w])"
)
_DNI = re.compile(r"(?<![\w-])(?P<prefix>[XYZ]?)(?P<number>[0-9]{7,8})-?(?P<letter>[A-Z])(?![\w])")
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_CODICE_FISCALE = re.compile(r"(?<![\w])[A-Z]{6}[0-9LMNPQRSTUV]{2}[A-EHLMPR-T][0-9LMNPQRSTUV]{2}"
                             r"[A-Z][0-9LMNPQRSTUV]{3}[A-Z](?![\w])")  # fmt: skip
_CPF = re.compile(r"(?<![\w.-])[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}(?![\w-])")


def _dni_valid(match: re.Match[str]) -> bool:
    prefix = "XYZ".index(match.group("prefix")) if match.group("prefix") else None
    digits = match.group("number")
    if prefix is not None:
        if len(digits) != 7:
            return False
        digits = f"{prefix}{digits}"
    elif len(digits) != 8:
        return False
    return _DNI_LETTERS[int(digits) % 23] == match.group("letter")


def _cpf_valid(number: str) -> bool:
    digits = [int(char) for char in number if char.isdigit()]
    if len(set(digits)) == 1:
        return False
    for size in (9, 10):
        total = sum(d * w for d, w in zip(digits[:size], range(size + 1, 1, -1), strict=True))
        if (total * 10 % 11) % 10 != digits[size]:
            return False
    return True


def _numbers_after(text: str, cue: re.Match[str], kind: str, out: Out) -> None:
    match = _DOCUMENT_NUMBER.search(text, cue.end(), min(len(text), cue.end() + 40))
    if match is None:
        return
    between = text[cue.end() : match.start()]
    if len(between.split()) <= 4 and "\n" not in between:
        out.append((kind, match.start(), match.end()))


def find_documents(text: str, out: Out) -> None:
    """Passport and national id numbers: after a cue word, or by a checked shape."""
    for cue in _PASSPORT_CUE.finditer(text):
        _numbers_after(text, cue, "passport", out)
    for cue in _NATIONAL_CUE.finditer(text):
        _numbers_after(text, cue, "national_id", out)
    out += [("national_id", m.start(), m.end()) for m in _NINO.finditer(text)]
    out += [("national_id", m.start(), m.end()) for m in _DNI.finditer(text) if _dni_valid(m)]
    out += [("national_id", m.start(), m.end()) for m in _CODICE_FISCALE.finditer(text)]
    out += [
        ("national_id", m.start(), m.end()) for m in _CPF.finditer(text) if _cpf_valid(m.group())
    ]


# --- health ---------------------------------------------------------------------------

_HEALTH = re.compile(
    r"(?i)(?<![\w])(?:diabet(?:es|ic|e|ico|ica|isch|ique)|cancer|cáncer|câncer|cancro|krebs|"
    r"kanker|tumou?r|tumeur|leuka?emia|leukämie|hiv|hepatitis|hépatite|epatite|"
    r"tuberculos[ie]s?|asthma|asma|asthme|epileps(?:y|ie)|epilessia|epilepsia|"
    r"(?:clinical |major |postpartum )?depression|depressi(?:ve|on|e)|dépression|depresión|"
    r"depressione|depressão|depressie|anxiety disorder|angststörung|bipolar|bipolaire|"
    r"schizophreni[ae]|schizofrenia|esquizofrenia|adhd|tdah|autism|autisme|autismo|autismus|"
    r"dementia|demenz|démence|demencia|demenza|alzheimer'?s?|parkinson'?s?|multiple sclerosis|"
    r"chemotherap(?:y|ie)|chimiothérapie|quimioterapia|chemioterapia|dialysis|dialyse|"
    r"diálisis|dialisi|pregnant|pregnancy|schwanger(?:schaft)?|enceinte|grossesse|"
    r"embarazada|embarazo|incinta|gravidanza|grávida|gravidez|zwanger(?:schap)?|"
    r"miscarriage|fehlgeburt|fausse couche|aborto|abortion|antidepressants?|"
    r"antidepressiva|insulin[ae]?|methadone|rehab|eating disorder|anorexia|bulimia|"
    r"diagnostiziert|diagnostiqué|diagnosticad[oa]|diagnosticat[oa]|"
    r"gediagnosticeerd|diagnosed with [\w'-]+|diagnosis of [\w'-]+|diagnóstico|mental illness|"
    r"psychiatric|psychiatrisch|psychiatrique|psiquiátric[oa]|psichiatric[oa]|"
    r"disabilit(?:y|ies)|behinderung|discapacidad|disabilità|deficiência)(?![\w])"
)
_NOT_HEALTH_BEFORE = re.compile(r"(?i)(?:great|economic|tropical|the long)\s+$")
# A condition named as a cause, a programme or a policy is about no one in particular.
_NOT_HEALTH_AFTER = re.compile(
    r"(?i)^(?:\s+\w+){0,3}?\s+(?:awareness|research|charit\w*|foundation|association|society|"
    r"prevention|policy|policies|leave|insurance|campaign|ward|clinic)\b"
)


def find_health(text: str, out: Out) -> None:
    for match in _HEALTH.finditer(text):
        if _NOT_HEALTH_BEFORE.search(text[max(0, match.start() - 12) : match.start()]):
            continue
        if _NOT_HEALTH_AFTER.match(text[match.end() : match.end() + 60]):
            continue
        out.append(("health", match.start(), match.end()))
