from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit import pii_cases, pii_shapes
from tether.errors import InvalidInput
from tether.memory.pii import (
    KINDS,
    PII_KINDS,
    SECRET_KINDS,
    Finding,
    detect,
    iban_valid,
    luhn_valid,
    placeholder,
    redact,
)

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0"
    "IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
GITHUB = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq9\nAbCdEf==\n-----END RSA PRIVATE KEY-----"
)


def _score(positives: list[pii_cases.Case], near_misses: tuple[str, ...]) -> dict[str, list[int]]:
    """Per kind: [planted, found, correct findings, all findings of that kind]."""
    table: dict[str, list[int]] = {kind: [0, 0, 0, 0] for kind in KINDS}
    for case in positives:
        for kind in case.kinds:
            table[kind][0] += 1
        hit = False
        for finding in detect(case.text):
            table[finding.kind][3] += 1
            overlaps = finding.start < case.end and case.start < finding.end
            if overlaps and finding.kind in case.kinds:
                table[finding.kind][2] += 1
                hit = True
            else:
                print(f"  false {finding.kind} {finding.text!r} in {case.text!r}")
        if hit:
            for kind in case.kinds:
                table[kind][1] += 1
        else:
            print(f"  missed {sorted(case.kinds)}: {case.text!r}")
    for text in near_misses:
        for finding in detect(text):
            table[finding.kind][3] += 1
            print(f"  false {finding.kind} {finding.text!r} in {text!r}")
    return table


def test_corpus_recall_and_precision_per_kind() -> None:
    """Faker PII in seven locales, published token formats, hand-written shapes and kinds
    (``pii_shapes``), and near misses that look alike: recall and precision per kind."""
    positives = [*pii_cases.positives(), *pii_shapes.positives()]
    near_misses = pii_cases.near_misses() + pii_shapes.near_misses()
    assert len(positives) >= 400
    assert len(near_misses) >= 350
    table = _score(positives, near_misses)
    planted = sum(row[0] for row in table.values())
    found = sum(row[1] for row in table.values())
    correct = sum(row[2] for row in table.values())
    reported = sum(row[3] for row in table.values())
    print(
        f"PII detection: recall {found / planted:.3f}, precision {correct / reported:.3f} over "
        f"{len(positives)} positives and {len(near_misses)} near misses"
    )
    for kind, (count, hits, right, total) in sorted(table.items()):
        precision = right / total if total else 1.0
        print(f"  {kind:<18} recall {hits / count:.3f} ({hits}/{count})  precision "
              f"{precision:.3f} ({right}/{total})")  # fmt: skip
    for kind, (count, hits, right, total) in table.items():
        assert count and hits / count >= 0.99, kind
        assert (right / total if total else 1.0) >= 0.97, kind


def test_corpus_covers_every_kind() -> None:
    cases = [*pii_cases.positives(), *pii_shapes.positives()]
    planted = set().union(*(case.kinds for case in cases))
    assert planted == set(KINDS)


def spans(text: str) -> list[tuple[str, str]]:
    return [(finding.kind, finding.text) for finding in detect(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mail anna.berg+news@example.co.uk today.", [("email", "anna.berg+news@example.co.uk")]),
        ("mailto:jo@example.org", [("email", "jo@example.org")]),
        ("Call +44 20 7946 0958 now", [("phone", "+44 20 7946 0958")]),
        ("Fax +33 (0)1 23 45 67 89", [("phone", "+33 (0)1 23 45 67 89")]),
        ("Ring (591)341-7776x123 later", [("phone", "(591)341-7776x123")]),
        ("Bureau : 01 23 45 67 89", [("phone", "01 23 45 67 89")]),
        ("Handy 0151 23456789", [("phone", "0151 23456789")]),
        ("Chiamami al 3420837783", [("phone", "3420837783")]),
        ("Tel: 0049 30 1234567", [("phone", "0049 30 1234567")]),
        ("SSN 078-05-1120 on file", [("ssn", "078-05-1120")]),
        ("social security number 078 05 1120", [("ssn", "078 05 1120")]),
        ("Card 4111 1111 1111 1111, exp 12/26", [("card", "4111 1111 1111 1111")]),
        ("Amex 3782 822463 10005 ok", [("card", "3782 822463 10005")]),
        ("pay with 5555555555554444.", [("card", "5555555555554444")]),
        ("IBAN DE89 3704 0044 0532 0130 00 please", [("iban", "DE89 3704 0044 0532 0130 00")]),
        ("to GB82WEST12345698765432.", [("iban", "GB82WEST12345698765432")]),
        ("from 192.168.1.20:8080", [("ip_address", "192.168.1.20")]),
        ("via http://10.0.0.5/admin", [("ip_address", "10.0.0.5")]),
        ("host 2001:db8::8a2e:370:7334 is up", [("ip_address", "2001:db8::8a2e:370:7334")]),
        ("link fe80::1%eth0.", [("ip_address", "fe80::1%eth0")]),
        ("mapped ::ffff:192.0.2.128 here", [("ip_address", "::ffff:192.0.2.128")]),
        ("id AKIAIOSFODNN7EXAMPLE", [("aws_access_key", "AKIAIOSFODNN7EXAMPLE")]),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            [("aws_secret_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")],
        ),
        (f"GH_TOKEN={GITHUB}", [("github_token", GITHUB)]),
        ("glpat-xY3_zW9-aB7cD5eF1gH2 leaked", [("gitlab_token", "glpat-xY3_zW9-aB7cD5eF1gH2")]),
        (
            "SLACK xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            [("slack_token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx")],
        ),
        (
            "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            [("stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc")],
        ),
        (
            "OPENAI_API_KEY=sk-proj-Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7",
            [("openai_key", "sk-proj-Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7")],
        ),
        (
            "key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
            [("google_api_key", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q")],
        ),
        (f"token: {JWT}", [("jwt", JWT)]),
        (
            "Authorization: Bearer 9f8e7d6c5b4a39281706abc",
            [("bearer_token", "9f8e7d6c5b4a39281706abc")],
        ),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", [("basic_auth", "dXNlcjpwYXNzd29yZA==")]),
        (
            "client_secret: 8d7f6e5a4b3c2d1e0f9a8b7c",
            [("generic_secret", "8d7f6e5a4b3c2d1e0f9a8b7c")],
        ),
        (f"key:\n{PEM}\nend", [("private_key", PEM)]),
        ("password: hunter2", [("password", "hunter2")]),
        ('{"password": "c0rrect horse"}', [("password", "c0rrect horse")]),
        ("my password is Tr0ub4dor&3.", [("password", "Tr0ub4dor&3")]),
        ("pwd=abc123", [("password", "abc123")]),
        ("passwd S3cr3t!x", [("password", "S3cr3t!x")]),
        ("Passwort: g(9UcTHvNH", [("password", "g(9UcTHvNH")]),
        ("Das Passwort lautet Kuchen42", [("password", "Kuchen42")]),
        ("mot de passe : 7&ODpn+@@R", [("password", "7&ODpn+@@R")]),
        ("La contraseña es Sol2024", [("password", "Sol2024")]),
        ("Het wachtwoord is geheim99", [("password", "geheim99")]),
        ("PGPASSWORD=pa55word psql", [("password", "pa55word")]),
        ("postgres://app:s3cretPw@db.internal:5432/app", [("password", "s3cretPw")]),
    ],
)
def test_detect_finds_exact_spans(text: str, expected: list[tuple[str, str]]) -> None:
    assert spans(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Order #4829103746 shipped on 2024-03-15",
        "order number 102-4837261-9938172",
        "Bestellnummer 0612345678",
        "Running version 10.0.1.4 since Monday",
        "User-Agent: Chrome/120.0.0.0 Safari/537.36",
        "pip install numpy==1.26.4.1",
        "v1.2.3.4 and 1.2.3",
        "Build 10.0.19041.1234 released",
        "run 550e8400-e29b-41d4-a716-446655440000 finished",
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "commit 4f2a9c1 fixed it",
        "Card 4111 1111 1111 1112 declined",
        "IBAN DE89 3704 0044 0532 0130 01",
        "IT13 M528 6914 0451 3573 7732 385",
        "999.10.10.10 and 256.1.1.1",
        "MAC 00:1A:2B:3C:4D:5E at 10:30:00",
        "std::vector<int> and crate::module",
        "000-12-3456 and 666-12-3456",
        "Due 15.03.2024 14:30",
        "load 0.15 0.12 0.09",
        "epoch 1710498122 ms 1710498122123",
        "Forgot your password? Click here.",
        "password: ********",
        "password=${DB_PASSWORD}",
        "password = os.environ['DB_PASSWORD']",
        "def login(username: str, password: str) -> None:",
        "Your password is incorrect.",
        "Passwort vergessen?",
        "Boarding pass: 12B",
        "the bearer of this letter",
        "Authorization: Bearer <token>",
        "sk-learn compatible estimator",
        "retina icon@2x.png",
        "git@github.com:org/repo.git",
        "-----BEGIN PUBLIC KEY-----",
    ],
)
def test_near_misses_are_not_reported(text: str) -> None:
    assert detect(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Call me on +49 30 901820 or mail jo@example.org, thanks!",
            "Call me on [PHONE] or mail [EMAIL], thanks!",
        ),
        ("password: hunter2 (do not share)", "password: [SECRET:password] (do not share)"),
        (f"Authorization: Bearer {JWT}", "Authorization: Bearer [SECRET:jwt]"),
        (f"export GH_TOKEN={GITHUB}", "export GH_TOKEN=[SECRET:github_token]"),
        (
            "Refund 4111-1111-1111-1111 to DE89370400440532013000.",
            "Refund [CARD] to [IBAN].",
        ),
        ("SSN 078-05-1120, IP 203.0.113.9", "SSN [SSN], IP [IP_ADDRESS]"),
        ("Nothing to see on v2.14.3.", "Nothing to see on v2.14.3."),
    ],
)
def test_redact_keeps_the_sentence_readable(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redact_accepts_a_filtered_list() -> None:
    text = "jo@example.org, password: hunter2"
    secrets = [finding for finding in detect(text) if finding.is_secret]
    assert redact(text, secrets) == "jo@example.org, password: [SECRET:password]"


@pytest.mark.parametrize(
    "findings",
    [
        [Finding("email", 0, 5, "hello"), Finding("phone", 3, 8, "lo wo")],
        [Finding("email", 0, 5, "other")],
    ],
)
def test_redact_refuses_findings_that_do_not_fit_the_text(findings: list[Finding]) -> None:
    with pytest.raises(InvalidInput):
        redact("hello world", findings)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"Authorization: Bearer {JWT}", "jwt"),
        (f"password: {GITHUB}", "github_token"),
        ("api_key = 'AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'", "google_api_key"),
        ("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
        ("postgres://app:s3cretPw@db.example.com/app", "password"),
        ("IBAN DE89370400440532013000", "iban"),
    ],
)
def test_the_more_specific_kind_wins_an_overlap(text: str, kind: str) -> None:
    assert [finding.kind for finding in detect(text)] == [kind]


@pytest.mark.parametrize(
    ("number", "valid"),
    [
        ("4111111111111111", True),
        ("4111 1111 1111 1111", True),
        ("4111-1111-1111-1111", True),
        ("378282246310005", True),
        ("79927398713", True),
        ("4111111111111112", False),
        ("79927398710", False),
        ("", False),
        ("7", False),
        ("4111x111", False),
        ("٤١١١١١١١١١١١١١١١", False),
    ],
)
def test_luhn_valid(number: str, valid: bool) -> None:
    assert luhn_valid(number) is valid


@pytest.mark.parametrize(
    ("iban", "valid"),
    [
        ("DE89370400440532013000", True),
        ("DE89 3704 0044 0532 0130 00", True),
        ("de89 3704 0044 0532 0130 00", True),
        ("GB82WEST12345698765432", True),
        ("FR1420041010050500013M02606", True),
        ("NO9386011117947", True),
        ("MT84MALT011000012345MTLCAST001S", True),
        ("DE89370400440532013001", False),
        ("DE8937040044053201300", False),
        ("GB82WEST1234569876543", False),
        ("XX89370400440532013000", False),
        ("DE8937040044053201300X", False),
        ("", False),
    ],
)
def test_iban_valid(iban: str, valid: bool) -> None:
    assert iban_valid(iban) is valid


def test_placeholders_name_the_kind() -> None:
    assert placeholder("email") == "[EMAIL]"
    assert placeholder("ip_address") == "[IP_ADDRESS]"
    assert placeholder("github_token") == "[SECRET:github_token]"
    assert set(PII_KINDS).isdisjoint(SECRET_KINDS)


def test_a_finding_never_shows_its_text_in_repr() -> None:
    (finding,) = detect("password: hunter2")
    assert "hunter2" not in repr(finding)
    assert finding == Finding("password", 10, 17, "hunter2")


@given(
    st.lists(
        st.sampled_from(
            [
                "call +44 20 7946 0958",
                "jo@example.org",
                "password: hunter2",
                GITHUB,
                "4111 1111 1111 1111",
                "10.0.0.1",
                " ",
                ", ",
                "order 12",
                "v1.2",
            ]
        )
        | st.text(max_size=12),
        max_size=8,
    )
)
def test_findings_are_sorted_disjoint_and_exact(parts: list[str]) -> None:
    text = "".join(parts)
    findings = detect(text)
    for finding in findings:
        assert finding.kind in KINDS
        assert text[finding.start : finding.end] == finding.text
    for first, second in itertools.pairwise(findings):
        assert first.end <= second.start
    expected, position = "", 0
    for finding in findings:
        expected += text[position : finding.start] + finding.placeholder
        position = finding.end
    assert redact(text) == expected + text[position:]
