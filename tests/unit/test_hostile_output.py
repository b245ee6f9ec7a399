"""Careful output and linear-time policy patterns, without a database.

Secrets never leave through an error or a log line, stored text is printed as it is
(never obeyed as markup), and an admin's policy pattern cannot hang a worker.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from pydantic import BaseModel

from tether.cli._common import PlainConsole
from tether.config import parse_database_url
from tether.errors import ConfigError, InvalidInput, ProcedureInvalid
from tether.procedures import EffectFacts, Outcome, evaluate, load_dir
from tether.redaction import describe_exception, get_logger, redact, url_secrets
from tether.runs.models import Risk
from tether.validation import MAX_DEPTH, check_value

SPECIAL = "/#?%@"
PASSWORDS = [f"Xy7{char}kQ9pLm2" for char in SPECIAL] + ["p@ss/w#rd?%x", "Xy7%2FkQ9pLm2"]


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_password_with_special_characters_is_never_displayed(password: str) -> None:
    url = f"postgresql://app:{password}@db.example:5432/tether"
    secrets = url_secrets(url)
    driver_texts = [
        url,
        f"invalid dsn: {url}",
        f'invalid integer value "{password.split(SPECIAL[0])[0]}" for connection option',
        f'missing "=" after "{password}@db.example:5432/tether" in connection info string',
        f"host=db.example password={password} dbname=tether",
    ]
    for text in driver_texts:
        shown = redact(text, secrets)
        assert password not in shown
        assert "kQ9pLm2" not in shown
    try:
        shown_url = parse_database_url(url).display
    except ConfigError as exc:
        shown_url = exc.message
    assert password not in shown_url and "kQ9pLm2" not in shown_url


def test_an_unencoded_special_character_is_refused_without_echoing_the_password() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_database_url("postgresql://app:Xy7/kQ9pLm2@db.example/tether")
    assert "percent-encoded" in caught.value.message
    assert "Xy7" not in caught.value.message and "kQ9pLm2" not in caught.value.message


def test_a_percent_encoded_password_is_masked_in_the_display_url() -> None:
    url = parse_database_url("postgresql://app:Xy7%2FkQ9pLm2@db.example:5432/tether")
    assert url.display == "postgresql://app:***@db.example:5432/tether"


def test_stored_exception_text_passes_the_secret_detector() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    error = RuntimeError(
        f"POST failed: Authorization: Bearer {token}; db postgresql://svc:S3cr3t/x@h/db"
    )
    text = describe_exception(error)
    assert text.startswith("RuntimeError: POST failed")
    assert token not in text and "S3cr3t" not in text


def test_log_lines_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    log = get_logger("tether.test-redaction")
    with caplog.at_level(logging.INFO, logger="tether.test-redaction"):
        log.info("connecting to %s", "postgresql://app:Xy7#kQ9pLm2@db/x")
    assert "kQ9pLm2" not in caplog.text and "Xy7" not in caplog.text
    assert "postgresql://app:***@db/x" in caplog.text


def test_an_api_keys_secret_is_masked_wherever_it_shows_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "0123456789abcdef" * 4
    key = f"tk~acme~89ab01cd23ef4567~{secret}"
    masked = "tk~acme~89ab01cd23ef4567~***"
    assert redact(f"refused Bearer {key}, retrying") == f"refused Bearer {masked}, retrying"
    assert secret not in describe_exception(RuntimeError(f"--api-key={key}"))
    log = get_logger("tether.test-redaction")
    with caplog.at_level(logging.INFO, logger="tether.test-redaction"):
        log.info("client key %s", key)
    assert secret not in caplog.text and masked in caplog.text


@pytest.mark.parametrize(
    "text",
    [
        "[/bold] closing first",
        "rationale [/] here",
        "10 EUR [conceal]and 9000 EUR to x[/conceal]",
        "String should match pattern '^{0,99}$'",
        ":smile: [link=http://x]y[/link]",
    ],
)
def test_the_cli_console_prints_markup_like_text_verbatim(text: str) -> None:
    out = io.StringIO()
    PlainConsole(file=out, width=200).print(text)
    assert out.getvalue() == text + "\n"


def test_the_cli_console_shows_terminal_escapes_instead_of_sending_them() -> None:
    out = io.StringIO()
    PlainConsole(file=out, width=200).print("a\x1b[2Jb")
    assert out.getvalue() == "a\\x1b[2Jb\n"


EVIL = r"([a-z0-9]+[.-]?)+@partner\.example"
POLICY = """
kind: policy
name: partner-mail
description: mail to partners needs approval
severity: hard
action: require_approval
match:
  effects: ["mail.send"]
  conditions: [{{field: to, op: matches, value: '{pattern}'}}]
"""


def test_a_catastrophic_pattern_runs_in_linear_time(tmp_path: Path) -> None:
    (tmp_path / "partner.yaml").write_text(POLICY.format(pattern=EVIL))
    found = load_dir(tmp_path)
    hostile = EffectFacts(name="mail.send", request={"to": "a" * 50_000 + "!"})
    assert evaluate(found.version, found.policies, hostile).outcome is Outcome.ALLOW
    partner = EffectFacts(name="mail.send", request={"to": "ann.lee@partner.example"})
    assert evaluate(found.version, found.policies, partner).outcome is Outcome.REQUIRE_APPROVAL


@pytest.mark.parametrize("pattern", [r"(?=a)b", r"(a)\1x", r"a{2000}"])
def test_a_pattern_the_linear_engine_cannot_run_is_refused_naming_file_and_field(
    tmp_path: Path, pattern: str
) -> None:
    (tmp_path / "partner.yaml").write_text(POLICY.format(pattern=pattern))
    with pytest.raises(ProcedureInvalid) as caught:
        load_dir(tmp_path)
    assert "partner.yaml: field match.conditions.0" in caught.value.message
    assert "RE2" in caught.value.message


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"a": [1, 2, {"b": "x\udcff"}]}, "value.a[2].b"),
        ({"n": 10**19}, "value.n"),
        ({"f": float("-inf")}, "value.f"),
        ({1: "x"}, "int key"),
        ("a\x00", "NUL"),
    ],
)
def test_the_value_walk_names_the_field(value: object, fragment: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_value("value", value)
    assert fragment in caught.value.message


class Inbox(BaseModel):
    items: list[dict[str, object]]


def test_a_big_state_is_accepted_and_a_bad_value_deep_inside_is_named() -> None:
    items: list[dict[str, object]] = [
        {"id": i, "text": f"item é {i}", "score": i / 3, "tags": ["a", None, True]}
        for i in range(1000)
    ]
    check_value("state", Inbox(items=items))
    check_value("state", {"deep": [[[{"k": "v"}]]] * 10, "e": Risk.LOW, "t": ("x", 1.5)})

    items[987]["tags"] = ["a", {"note": "lone \udc80 surrogate"}]
    with pytest.raises(InvalidInput) as caught:
        check_value("state", Inbox(items=items))
    assert caught.value.message.startswith("state.items[987].tags[1].note is not valid text")

    items[987]["tags"] = []
    items[999]["score"] = float("nan")
    with pytest.raises(InvalidInput, match=r"^state\.items\[999\]\.score is nan"):
        check_value("state", Inbox(items=items))

    nested: object = "x"
    for _ in range(MAX_DEPTH + 1):
        nested = [nested]
    with pytest.raises(InvalidInput, match=f"nested more than {MAX_DEPTH} levels"):
        check_value("state", {"ok": list(range(1000)), "deep": nested})


ALIAS_BOMB = "a: &a ['x','x','x','x','x','x','x','x','x']\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (ALIAS_BOMB, "aliases are not allowed"),
        ("kind: " + "[" * 5000, "nested"),
        ('kind: skill\nname: s\ndescription: "a\\0b"\nsteps: [x]\n', "NUL"),
        (
            "kind: skill\nname: s\ndescription: d\nsteps: [x]\nn: 99999999999999999999999\n",
            "64 bits",
        ),
    ],
    ids=["alias bomb", "deep nesting", "nul", "huge int"],
)
def test_a_hostile_procedure_file_is_refused_naming_the_file(
    tmp_path: Path, text: str, detail: str
) -> None:
    (tmp_path / "hostile.yaml").write_text(text)
    with pytest.raises(ProcedureInvalid) as caught:
        load_dir(tmp_path)
    assert caught.value.message.startswith("hostile.yaml: ")
    assert detail in caught.value.message
