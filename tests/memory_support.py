"""Helpers for the governed-memory suites: tenants with the same people, a test embedder
whose vectors are recognisable on disk, and raw page access on PostgreSQL.

The isolation and erasure tests play the attacker (or the forensic examiner) on the raw
database, so these helpers read what Tether wrote without going through Tether.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from tests.support import PostgresServer, RawConnection, TestDatabase
from tether import FakeClock, Tether
from tether.memory.embeddings import HashingEmbedder
from tether.memory.models import (
    MemoryKind,
    MemoryProposal,
    MemoryRecord,
    MemoryStatus,
    PolicyDecision,
    Scope,
    Sensitivity,
    SourceType,
)
from tether.principals import Principal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PEOPLE = {
    "alice": ["admin"],
    "olga": ["operator"],
    "sam": ["approver"],
    "agent": ["agent"],
    "u-1": ["viewer"],
    "u-2": ["viewer"],
}
"""Every tenant of these suites has principals with exactly these ids."""

MEMORY_TABLES = ("memories", "memory_subjects", "memory_vectors", "memory_decisions")
"""The tables erasure must leave without a byte of the subject's memories."""


def create_tenant(app: Tether, tenant_id: str) -> dict[str, Principal]:
    """A tenant with the shared cast of :data:`PEOPLE`, by principal id."""
    app.tenants.create(tenant_id, admin="alice")
    admin = app.tenants.principal(tenant_id, "alice")
    for principal_id, roles in PEOPLE.items():
        if principal_id != "alice":
            app.tenants.grant(admin, principal_id, roles)
    return {principal_id: app.tenants.principal(tenant_id, principal_id) for principal_id in PEOPLE}


def propose(
    app: Tether,
    principal: Principal,
    text: str,
    scope: Scope,
    scope_id: str,
    **fields: Any,
) -> PolicyDecision:
    """Propose a memory; a person (``human`` source) states it unless ``fields`` say otherwise."""
    values: dict[str, Any] = {
        "text": text,
        "scope": scope,
        "scope_id": scope_id,
        "source_type": SourceType.HUMAN,
        "confidence": 0.9,
        "kind": MemoryKind.FACT,
    }
    values.update(fields)
    return app.memory.propose(principal, MemoryProposal(**values))


@contextmanager
def opened(backend: TestDatabase, embedder: str) -> Iterator[Tether]:
    """An application on ``backend`` with the hashing test embedder (``"hashing"``) or
    none (``"none"``: lexical recall only), on a fake clock."""
    hashing = HashingEmbedder() if embedder == "hashing" else None
    settings = backend.settings() if hashing else backend.settings(embedder="none")
    with Tether.open(settings, clock=FakeClock(), embedder=hashing) as app:
        yield app


def stored_record(**fields: Any) -> MemoryRecord:
    """An active fact of user u-1 as storage holds it, made directly (not by the policy);
    ``fields`` replace any of its values."""
    now = FakeClock().now()
    values: dict[str, Any] = {
        "tenant_id": "acme",
        "memory_id": "0195a3b2-0000-7000-8000-00000000000a",
        "scope": Scope.USER,
        "scope_id": "u-1",
        "subjects": [],
        "kind": MemoryKind.FACT,
        "fact_key": None,
        "text": "The claimant owns a cargo bike",
        "tags": [],
        "source_type": SourceType.USER_MESSAGE,
        "source_ref": None,
        "source_version": None,
        "created_by": "assistant",
        "approved_by": None,
        "confidence": 0.8,
        "sensitivity": Sensitivity.INTERNAL,
        "valid_from": now,
        "valid_to": None,
        "created_at": now,
        "updated_at": now,
        "expires_at": None,
        "supersedes": None,
        "superseded_by": None,
        "superseded_at": None,
        "access_count": 0,
        "last_access": None,
        "status": MemoryStatus.ACTIVE,
        "purge_after": None,
    }
    return MemoryRecord(**(values | fields))


def scope_key(scope: Scope, scope_id: str) -> str:
    return f"{scope.value}:{scope_id}"


class DenseTestEmbedder:
    """Deterministic dense unit vectors, seeded by a digest of the text. Tests only.

    Unlike :class:`~tether.memory.embeddings.HashingEmbedder`, whose vectors are mostly
    zeros (so any slice of one looks like a slice of another), every 16 bytes of these
    vectors are practically unique: finding a slice of one in a raw file means that very
    vector is still there.
    """

    def __init__(self, dim: int = 64) -> None:
        self._dim = dim

    @property
    def id(self) -> str:
        return f"dense-test-v1-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            vector = np.random.default_rng(seed).standard_normal(self._dim)
            out[row] = (vector / np.linalg.norm(vector)).astype(np.float32)
        return out


def fragments(blob: bytes, size: int = 32) -> list[bytes]:
    """``blob`` cut into ``size``-byte pieces: a stored blob may be split across pages,
    so a raw search looks for each piece, not for the whole."""
    return [blob[start : start + size] for start in range(0, len(blob) - size + 1, size)]


def found_in(data: bytes, needles: Iterable[bytes]) -> list[bytes]:
    return [needle for needle in needles if needle in data]


# -- PostgreSQL ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RelationPages:
    """The raw main-fork pages of one relation, as read through ``pageinspect``."""

    relation: str
    table: str
    kind: str
    pages: list[bytes]

    def holding(self, needle: bytes) -> list[int]:
        return [number for number, page in enumerate(self.pages) if needle in page]


def memory_relations(raw: RawConnection, *, indexes: bool) -> list[tuple[str, str, str]]:
    """(relation, its table, kind) for the memory tables and their TOAST tables, and with
    ``indexes`` the indexes of both."""
    rows = raw.execute(
        """
        SELECT c.oid::regclass::text, c.relname, 'heap', c.reltoastrelid::regclass::text
        FROM pg_class c
        WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY(?)
        """,
        [list(MEMORY_TABLES)],
    )
    relations: list[tuple[str, str, str]] = []
    for relation, table, kind, toast in rows:
        relations.append((relation, table, kind))
        if toast != "-":
            relations.append((toast, table, "toast"))
    if indexes:
        for relation, table, _ in list(relations):
            for (index,) in raw.execute(
                "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = ?::regclass",
                [relation],
            ):
                relations.append((index, table, "index"))
    return sorted(relations)


def read_pages(
    raw: RawConnection, relations: Iterable[tuple[str, str, str]]
) -> list[RelationPages]:
    """Every page of each relation's main fork (as a superuser, with ``pageinspect``)."""
    raw.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
    result = []
    for relation, table, kind in relations:
        (count,) = raw.execute(
            "SELECT pg_relation_size(?::regclass) / current_setting('block_size')::int",
            [relation],
        )[0]
        pages = [
            bytes(raw.execute("SELECT get_raw_page(?, ?)", [relation, number])[0][0])
            for number in range(int(count))
        ]
        result.append(RelationPages(relation, table, kind, pages))
    return result


def public_tables(raw: RawConnection) -> list[str]:
    return [
        str(name)
        for (name,) in raw.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
    ]


@contextmanager
def postgres_database(request: pytest.FixtureRequest) -> Iterator[TestDatabase]:
    """A migrated PostgreSQL database of its own (skips without a test server)."""
    server: PostgresServer = request.getfixturevalue("postgres_server")
    template: str = request.getfixturevalue("postgres_template")
    name = server.create_database(template=template)
    url = server.url(name)
    try:
        yield TestDatabase("postgres", url, admin_url=url)
    finally:
        server.drop_database(name)
