"""One frozen settings object; every field is also a ``TETHER_*`` environment variable.

``Settings()`` reads the environment; keyword arguments override it. A malformed value
raises :class:`~tether.errors.ConfigError` naming the variable, before anything is opened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from tether.errors import ConfigError, InvalidInput
from tether.redaction import redact, url_password, url_secrets
from tether.validation import check_text

DEFAULT_URL = "sqlite:///./tether.db"
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_UNENCODED = re.compile(r"[/#?@]|%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class DatabaseUrl:
    """A parsed ``TETHER_URL``: which backend, and how to reach it."""

    backend: Literal["sqlite", "postgres"]
    raw: str
    sqlite_path: Path | None = None

    @property
    def display(self) -> str:
        """The URL with any password replaced, safe to print and log."""
        if self.backend == "sqlite":
            return self.raw
        return redact(self.raw, url_secrets(self.raw))


def parse_database_url(url: str) -> DatabaseUrl:
    """Parse ``sqlite:///relative.db``, ``sqlite:////abs.db`` or ``postgresql://…``.

    Raises:
        ConfigError: the URL names no supported backend or no database.
    """
    url = url.strip()
    try:
        check_text("TETHER_URL", url, max_chars=4096)
    except InvalidInput as exc:
        raise ConfigError(exc.message) from None
    if url.startswith("sqlite://"):
        rest = url[len("sqlite://") :]
        if not rest.startswith("/") or len(rest) < 2:
            raise ConfigError(
                f"TETHER_URL {url!r} has no file path: use sqlite:///relative/path.db "
                "or sqlite:////absolute/path.db"
            )
        path_text = rest[1:]
        if path_text == ":memory:" or "?" in path_text:
            raise ConfigError(
                f"TETHER_URL {url!r}: in-memory databases and query options are not "
                "supported; give a file path"
            )
        return DatabaseUrl("sqlite", url, Path(path_text))
    if url.startswith(("postgresql://", "postgres://")):
        password = url_password(url)
        if password is not None and _UNENCODED.search(password):
            raise ConfigError(
                "TETHER_URL: the password holds a character that must be percent-encoded "
                "(/ # ? @ or a % not followed by two hex digits); write / as %2F, # as %23, "
                "? as %3F, @ as %40 and % as %25"
            )
        try:
            parts = urlsplit(url)
            _ = parts.port
        except ValueError:
            port = urlsplit(url).netloc.rpartition("@")[2].rpartition(":")[2]
            raise ConfigError(
                f"TETHER_URL is not a valid PostgreSQL URL: the port {port!r} is not a "
                "number; use postgresql://user:password@host:5432/dbname"
            ) from None
        if not parts.path.strip("/"):
            raise ConfigError(
                "TETHER_URL names no PostgreSQL database: use postgresql://user@host:5432/dbname"
            )
        return DatabaseUrl("postgres", url)
    shown = url if "@" not in url else url.rsplit("@", 1)[-1]
    raise ConfigError(
        f"TETHER_URL {shown!r} is not supported: use sqlite:///path.db (the default is "
        f"{DEFAULT_URL}) or postgresql://user@host:5432/dbname"
    )


class Settings(BaseSettings):
    """Every knob Tether reads. Frozen: build a new one to change a value."""

    model_config = SettingsConfigDict(env_prefix="TETHER_", frozen=True, extra="forbid")

    url: str = Field(DEFAULT_URL, description="Database URL: sqlite:///file.db or postgresql://…")
    secret_key: SecretStr | None = Field(
        None,
        description=(
            "Master key (at least 16 bytes): every key Tether uses derives from it (see "
            "docs/architecture.md, Keys). Unset: the key file is used."
        ),
    )
    key_file: Path | None = Field(
        None,
        description=(
            "File holding the master key (hex, one key per line, the current key first, "
            "mode 0600). Default on SQLite: <database>.key, created by `tether migrate`. "
            "PostgreSQL needs this or TETHER_SECRET_KEY."
        ),
    )
    retired_keys: SecretStr | None = Field(
        None,
        description=(
            "Comma-separated earlier master keys, used only to check what they signed "
            "after a rotation."
        ),
    )
    tenant: str | None = Field(None, description="Default tenant for commands.")
    principal: str | None = Field(None, description="Principal the CLI acts as.")
    sqlite_busy_timeout_ms: int = Field(5000, ge=0, description="SQLite busy_timeout.")
    sqlite_synchronous: Literal["NORMAL", "FULL"] = Field(
        "FULL", description="SQLite synchronous mode (WAL). FULL survives power loss."
    )
    pg_pool_min_size: int = Field(1, ge=0, description="PostgreSQL pool: connections kept open.")
    pg_pool_max_size: int = Field(10, ge=1, description="PostgreSQL pool: most connections.")
    pg_connect_timeout_s: float = Field(5.0, gt=0, description="PostgreSQL connect timeout.")
    embedder: Literal["default", "minilm-int8", "minilm-float", "none"] = Field(
        "default",
        description=(
            "Memory recall embedder: default (= minilm-int8, when installed: all-MiniLM-L6-v2 "
            "on int8 kernels), minilm-float (the same model in float32: slower, other "
            "vectors) or none (lexical only)."
        ),
    )
    procedures_dir: Path | None = Field(
        None,
        description=(
            "Directory of skill and policy YAML files that workers publish, when the files "
            "change, for the tenants in TETHER_PROCEDURES_TENANTS (see docs/procedures.md)."
        ),
    )
    procedures_tenants: str | None = Field(
        None,
        description=(
            "Comma-separated tenants a worker's procedures directory applies to; a directory "
            "without tenants is refused."
        ),
    )
    housekeeping_interval_s: float = Field(
        3600.0,
        gt=0,
        description=(
            "Seconds between a tenant's housekeeping passes (memory and thread retention, "
            "the working-memory purge, run retention), run by the workers."
        ),
    )
    webhook_expiring_within_s: float = Field(
        3600.0,
        gt=0,
        description="Notify approval.expiring once an open approval expires within this.",
    )
    server_max_body_bytes: int = Field(
        1_048_576,
        ge=1024,
        description=(
            "Largest request body `tether serve` accepts, in bytes; a larger one is refused "
            "with 413 (request_too_large) before it is read."
        ),
    )
    summarizer_url: str | None = Field(
        None,
        description=(
            "Base URL of an OpenAI-compatible chat-completions endpoint for thread "
            "summaries (e.g. https://api.example.com/v1); unset: the offline extractive one."
        ),
    )
    summarizer_key: SecretStr | None = Field(
        None, description="API key sent as a Bearer token to TETHER_SUMMARIZER_URL."
    )
    summarizer_model: str = Field(
        "gpt-4o-mini", description="Model name sent to TETHER_SUMMARIZER_URL."
    )
    summarizer_timeout_s: float = Field(
        30.0, gt=0, description="Timeout of one call to TETHER_SUMMARIZER_URL, in seconds."
    )
    redis_url: SecretStr | None = Field(
        None,
        description=(
            "Redis for working memory (redis://host:6379/0, rediss://…, unix://…); unset: "
            "working memory lives in the main database. Needs the redis extra."
        ),
    )
    redis_prefix: str = Field(
        "tether:", description="Prefix of every Redis key Tether writes (working memory)."
    )

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        parse_database_url(value)
        return value

    @field_validator("redis_url")
    @classmethod
    def _check_redis_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        url = value.get_secret_value().strip()
        if not url.startswith(_REDIS_SCHEMES):
            raise ValueError("use redis://host:6379/0, rediss://host:6380/0 or unix:///path")
        try:
            _ = urlsplit(url).port
        except ValueError:
            raise ValueError("the port is not a number: use redis://host:6379/0") from None
        return value

    @field_validator("sqlite_synchronous", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @property
    def database(self) -> DatabaseUrl:
        return parse_database_url(self.url)


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment plus ``overrides`` (``None`` values ignored).

    Raises:
        ConfigError: a value is malformed; the message names the ``TETHER_*`` variable.
    """
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        return Settings(**given)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            field = ".".join(str(part) for part in error["loc"]) or "settings"
            message = str(error["msg"]).removeprefix("Value error, ")
            problems.append(f"TETHER_{field.upper()}: {message}")
        raise ConfigError("invalid settings: " + "; ".join(problems)) from None
    except ConfigError:
        raise
