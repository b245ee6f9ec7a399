"""Tether's keys: one master key, a key per purpose derived from it, kept out of the database.

The master key comes from ``TETHER_SECRET_KEY`` or from a key file (``TETHER_KEY_FILE``;
on SQLite, ``<database>.key`` next to the database by default, which ``tether migrate``
creates with mode 0600 when no key is configured). Each use gets its own key, derived
from the master with HKDF-SHA256 (RFC 5869) and a purpose label, so no two uses share key
material and a key leaked for one purpose does not open another:

- ``audit-chain``: the HMAC that chains each tenant's audit trail;
- ``pg-tenant-context``: the signature that proves to PostgreSQL which tenant a
  transaction belongs to (the only derived key the database holds, where only its owner
  can read it);
- ``api-key-hash``: the HMAC under which API keys of the HTTP API are stored (the
  database holds only that hash; a key made under a master that is now retired still
  verifies while the retired master is kept);
- ``console-session``: the AES-GCM key that seals the operator console's session cookie
  (the API key it carries is never in clear); ``console-csrf``: the HMAC of the console's
  per-session CSRF tokens;
- later purposes (encryption of stored data) derive their own.

Data-subject hashes use the master key itself: that is the key they were made with
before keys were derived, so existing hashes keep matching.

Rotation: the key file holds one key per line, the current key first; lines after it are
retired keys, still used to check what they signed (audit entries carry the id of the key
that signed them) but never to sign. ``TETHER_RETIRED_KEYS`` lists retired keys when the
master comes from ``TETHER_SECRET_KEY``.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tether.config import Settings
from tether.errors import ConfigError

AUDIT_CHAIN = "audit-chain"
TENANT_CONTEXT = "pg-tenant-context"
API_KEY_HASH = "api-key-hash"
CONSOLE_SESSION = "console-session"
CONSOLE_CSRF = "console-csrf"
_SALT = b"tether keys v1"
_KEY_BYTES = 32


@functools.lru_cache(maxsize=64)
def derive(master: bytes, purpose: str) -> bytes:
    """HKDF-SHA256 (extract with a fixed salt, then one expand block) of ``master``.

    Remembered per (master, purpose): every audit entry needs the chain key and the key
    id, and a process holds only a few masters."""
    prk = hmac.new(_SALT, master, hashlib.sha256).digest()
    return hmac.new(prk, purpose.encode() + b"\x01", hashlib.sha256).digest()


@functools.lru_cache(maxsize=16)
def key_id(master: bytes) -> str:
    """A short public name of a master key (not secret: a hash of a derived value)."""
    return hashlib.sha256(derive(master, "key-id")).hexdigest()[:12]


def hmac_pads(key: bytes) -> tuple[bytes, bytes]:
    """The inner and outer padded keys of HMAC-SHA256, as PostgreSQL's ``sha256`` uses them.

    ``HMAC(k, m) = sha256(outer || sha256(inner || m))``: storing the pads lets the
    database compute the HMAC with built-in functions only.
    """
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    key = key.ljust(64, b"\x00")
    return bytes(b ^ 0x36 for b in key), bytes(b ^ 0x5C for b in key)


@dataclass(frozen=True)
class Keyring:
    """The master key in use, the retired ones, and where they came from."""

    master: bytes = field(repr=False)
    retired: tuple[bytes, ...] = field(default=(), repr=False)
    source: str = ""

    def __post_init__(self) -> None:
        if len(self.master) < 16:
            raise ConfigError(
                f"the key from {self.source or 'settings'} is too short: use at least 16 "
                "bytes (e.g. the 64 hex digits of `python -c 'import secrets; "
                "print(secrets.token_hex(32))'`)"
            )

    @property
    def current_id(self) -> str:
        return key_id(self.master)

    def purpose_key(self, purpose: str) -> bytes:
        return derive(self.master, purpose)

    def purpose_key_by_id(self, purpose: str, kid: str) -> bytes | None:
        """The derived key of the master (current or retired) named ``kid``, if held."""
        for master in (self.master, *self.retired):
            if key_id(master) == kid:
                return derive(master, purpose)
        return None

    @property
    def subject_key(self) -> bytes:
        return self.master


def _parse_keys(text: str, source: str) -> list[bytes]:
    keys = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            keys.append(bytes.fromhex(line))
        except ValueError:
            raise ConfigError(
                f"{source} line {number} is not a hex key: write one key per line, "
                "64 hex digits, the current key first"
            ) from None
    if not keys:
        raise ConfigError(f"{source} holds no key: write the key as 64 hex digits")
    return keys


def read_key_file(path: Path) -> Keyring:
    """Read a key file, refusing one that other users could read."""
    try:
        info = path.stat()
        text = path.read_text("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the key file {path}: {exc.strerror}") from None
    if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"the key file {path} can be read by other users; restrict it: chmod 600 {path}"
        )
    keys = _parse_keys(text, f"the key file {path}")
    return Keyring(keys[0], tuple(keys[1:]), source=f"key file {path}")


def create_key_file(path: Path, key: bytes) -> bool:
    """Write ``key`` to a new file of mode 0600; ``False`` if the file already exists.

    The key is written and synced under a temporary name first and then linked into
    place, so a concurrent reader sees either no file or the whole key.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(
                "# Tether master key: keep it secret and back it up apart from the database.\n"
            )
            handle.write(key.hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False
        return True
    finally:
        temporary.unlink(missing_ok=True)


def keyring_from_secret(secret: str, retired: Sequence[str] = ()) -> Keyring:
    """The keyring of ``TETHER_SECRET_KEY`` (its bytes, as given) and retired keys."""
    return Keyring(
        secret.encode(),
        tuple(value.encode() for value in retired),
        source="TETHER_SECRET_KEY",
    )


def key_file_path(settings: Settings) -> Path | None:
    """``TETHER_KEY_FILE``, else (SQLite only) ``<database>.key`` beside the database."""
    if settings.key_file is not None:
        return settings.key_file
    database = settings.database
    if database.backend == "sqlite" and database.sqlite_path is not None:
        return database.sqlite_path.with_name(database.sqlite_path.name + ".key")
    return None


def load_keyring(settings: Settings, *, create: bool = False, seed: bytes | None = None) -> Keyring:
    """The keyring ``settings`` name: ``TETHER_SECRET_KEY``, else the key file.

    Args:
        create: when no key is configured and the key file does not exist yet, create it
            (``tether migrate`` only), with ``seed`` as its key if given (the key an older
            database kept for itself), else a new random one.

    Raises:
        ConfigError: no key is configured (PostgreSQL needs one), or the key file is
            missing, unreadable, readable by others or malformed.
    """
    retired = [
        part.strip()
        for part in (
            settings.retired_keys.get_secret_value() if settings.retired_keys else ""
        ).split(",")
        if part.strip()
    ]
    if settings.secret_key is not None:
        return keyring_from_secret(settings.secret_key.get_secret_value(), retired)
    path = key_file_path(settings)
    if path is None:
        raise ConfigError(
            "PostgreSQL needs a master key: set TETHER_SECRET_KEY, or TETHER_KEY_FILE to a "
            "file holding one (64 hex digits, mode 0600); `tether migrate` creates the file "
            "if it does not exist yet. Keep the key out of the database and back it up."
        )
    if not path.exists():
        if not create:
            raise ConfigError(
                f"the key file {path} is missing. If this database was used before, restore "
                "the file from a backup: without it the audit trail's newer entries cannot "
                "be checked or extended. For a new database run `tether migrate`, which "
                "creates it."
            )
        create_key_file(path, seed if seed is not None else os.urandom(_KEY_BYTES))
    keyring = read_key_file(path)
    if retired:
        keyring = Keyring(
            keyring.master,
            keyring.retired + tuple(v.encode() for v in retired),
            source=keyring.source,
        )
    return keyring
