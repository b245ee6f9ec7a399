from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from tether.config import DEFAULT_URL, Settings, load_settings, parse_database_url
from tether.errors import ConfigError

# One environment value per settings field, and the value it must produce.
ENVIRONMENT_SAMPLES: dict[str, tuple[str, object]] = {
    "url": ("postgresql://tether@db.example:5433/prod", "postgresql://tether@db.example:5433/prod"),
    "secret_key": ("k3y-material", "k3y-material"),
    "key_file": ("/srv/tether.key", Path("/srv/tether.key")),
    "retired_keys": ("old-k3y", "old-k3y"),
    "tenant": ("acme", "acme"),
    "embedder": ("none", "none"),
    "principal": ("alice", "alice"),
    "sqlite_busy_timeout_ms": ("1234", 1234),
    "sqlite_synchronous": ("normal", "NORMAL"),
    "pg_pool_min_size": ("3", 3),
    "pg_pool_max_size": ("7", 7),
    "pg_connect_timeout_s": ("2.5", 2.5),
    "procedures_dir": ("/srv/procedures", Path("/srv/procedures")),
    "procedures_tenants": ("acme,globex", "acme,globex"),
    "redis_url": (
        "redis://:pw@cache.example:6379/2",
        SecretStr("redis://:pw@cache.example:6379/2"),
    ),
    "redis_prefix": ("acme-tether:", "acme-tether:"),
    "housekeeping_interval_s": ("900", 900.0),
    "webhook_expiring_within_s": ("1800", 1800.0),
    "server_max_body_bytes": ("65536", 65536),
    "summarizer_url": ("https://llm.example/v1", "https://llm.example/v1"),
    "summarizer_key": ("sk-sample", SecretStr("sk-sample")),
    "summarizer_model": ("small-model", "small-model"),
    "summarizer_timeout_s": ("12.5", 12.5),
}


def test_every_field_has_an_environment_sample() -> None:
    assert set(ENVIRONMENT_SAMPLES) == set(Settings.model_fields)


@pytest.mark.parametrize("field", sorted(ENVIRONMENT_SAMPLES))
def test_every_field_is_settable_through_its_tether_variable(
    field: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, expected = ENVIRONMENT_SAMPLES[field]
    monkeypatch.setenv(f"TETHER_{field.upper()}", text)

    value = getattr(load_settings(), field)

    if field in {"secret_key", "retired_keys"}:
        value = value.get_secret_value()
    assert value == expected


def test_defaults_use_the_local_sqlite_file() -> None:
    settings = load_settings()

    assert settings.url == DEFAULT_URL
    assert settings.database.backend == "sqlite"
    assert settings.database.sqlite_path == Path("./tether.db")
    assert settings.secret_key is None


def test_keyword_overrides_beat_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_TENANT", "from-env")
    monkeypatch.setenv("TETHER_URL", "sqlite:///env.db")

    settings = load_settings(tenant="from-kwarg", url=None)

    assert settings.tenant == "from-kwarg"
    assert settings.url == "sqlite:///env.db"


def test_settings_are_frozen() -> None:
    settings = load_settings(tenant="acme")

    with pytest.raises(ValidationError):
        settings.tenant = "globex"  # type: ignore[misc]
    assert settings.tenant == "acme"


def test_secret_key_is_hidden_when_settings_are_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_SECRET_KEY", "k3y-material")

    settings = load_settings()

    assert "k3y-material" not in repr(settings)
    assert "k3y-material" not in str(settings)


@pytest.mark.parametrize(
    ("url", "hint"),
    [
        ("mysql://x", "postgresql://user@host:5432/dbname"),
        ("sqlite://", "sqlite:///relative/path.db"),
        ("sqlite:///", "sqlite:///relative/path.db"),
        ("sqlite:///:memory:", "give a file path"),
        ("sqlite:///./tether.db?mode=ro", "give a file path"),
        ("postgresql://host:notaport/db", "notaport"),
        ("postgresql://host/", "names no PostgreSQL database"),
        ("postgresql://host", "names no PostgreSQL database"),
        ("", "is not supported"),
    ],
)
def test_malformed_url_raises_config_error_with_a_hint(url: str, hint: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_database_url(url)

    assert "TETHER_URL" in caught.value.message
    assert hint in caught.value.message
    assert caught.value.code == "invalid_config"
    assert caught.value.exit_code == 3


@pytest.mark.parametrize(
    "url", ["mysql://x", "sqlite://", "postgresql://host:notaport/db", "postgresql://host/"]
)
def test_malformed_tether_url_variable_is_refused_by_load_settings(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_URL", url)

    with pytest.raises(ConfigError) as caught:
        load_settings()

    assert "TETHER_URL" in str(caught.value)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TETHER_SQLITE_BUSY_TIMEOUT_MS", "soon"),
        ("TETHER_SQLITE_BUSY_TIMEOUT_MS", "-1"),
        ("TETHER_SQLITE_SYNCHRONOUS", "OFF"),
        ("TETHER_PG_POOL_MAX_SIZE", "0"),
        ("TETHER_PG_CONNECT_TIMEOUT_S", "0"),
    ],
)
def test_malformed_variable_is_named_in_the_error(
    variable: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, value)

    with pytest.raises(ConfigError) as caught:
        load_settings()

    assert variable in str(caught.value)


def test_unknown_setting_is_refused() -> None:
    with pytest.raises(ConfigError, match="TETHER_COLOUR"):
        load_settings(colour="blue")


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://tether:s3cret@db.example:5432/prod",
        "postgres://tether:s3cret@db.example/prod",
    ],
)
def test_password_is_redacted_in_display(url: str) -> None:
    display = parse_database_url(url).display

    assert "s3cret" not in display
    assert "tether:***@db.example" in display
    assert display.endswith("/prod")


def test_password_given_as_query_parameter_is_redacted_in_display() -> None:
    # libpq also takes the password as a URL parameter (postgresql://u@h/db?password=…).
    display = parse_database_url("postgresql://tether@db.example/prod?password=s3cret").display

    assert "s3cret" not in display


def test_url_without_password_is_displayed_unchanged() -> None:
    url = "postgresql://tether@db.example:5432/prod"

    assert parse_database_url(url).display == url


@pytest.mark.parametrize(
    "url",
    [
        "mysql://root:s3cret@db.example/prod",
        "postgresql://tether:s3cret@db.example:notaport/prod",
        "postgresql://tether:s3cret@db.example/",
    ],
)
def test_config_errors_do_not_echo_the_password(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_database_url(url)

    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///relative/tether.db", Path("relative/tether.db")),
        ("sqlite:////abs/tether.db", Path("/abs/tether.db")),
    ],
)
def test_sqlite_urls_name_relative_and_absolute_files(url: str, path: Path) -> None:
    parsed = parse_database_url(url)

    assert parsed.backend == "sqlite"
    assert parsed.sqlite_path == path
