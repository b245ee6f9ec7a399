"""Governed memory's full-text index on SQLite: an FTS5 table of each scope's own terms.

Every word of a memory is indexed behind its scope's token
(:func:`tether.storage._scope_terms.scope_token`), so a search names each of its scopes'
terms and reads only their posting lists. PostgreSQL indexes a ``tsvector`` of the memory
row itself and needs none of this.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from tether import canonical
from tether.errors import StorageError
from tether.storage._memory_ops import MemoryOps
from tether.storage._scope_terms import scope_token, scoped_terms
from tether.storage._transaction import Row


class TextIndexOps(MemoryOps):
    """The memory operations that keep and query the FTS5 index (``memory_fts``)."""

    connection: sqlite3.Connection

    def _index_text(self, text: str, context: str, scope_token: str) -> int | None:
        cursor = self.connection.execute(
            self._queries["insert_memory_fts"],
            {
                "terms": scoped_terms(scope_token, text),
                "context": scoped_terms(scope_token, context),
            },
        )
        if cursor.lastrowid is None:
            raise StorageError("the full-text index returned no row id")
        return int(cursor.lastrowid)

    def _unindex_text(self, row: Row) -> None:
        if row["fts_rowid"] is not None:
            self.connection.execute(
                self._queries["delete_memory_fts"], {"fts_rowid": row["fts_rowid"]}
            )

    def _text_query(
        self, tenant_id: str, groups: Sequence[Sequence[str]], scopes: Sequence[str]
    ) -> str:
        prefixes = [scope_token(tenant_id, scope) for scope in scopes]
        return " OR ".join(
            "(" + " AND ".join(f'"{prefix}{word}"' for word in group) + ")"
            for prefix in prefixes
            for group in groups
        )

    def _ranked_text_query(
        self, tenant_id: str, words: Sequence[str], scopes: Sequence[str], common: int
    ) -> str:
        # Each scope's word is its own index term: one query counts each term's memories
        # (up to the cut-off), and a term above it is left out when another is not.
        terms = [f'"{scope_token(tenant_id, scope)}{word}"' for scope in scopes for word in words]
        counted = self._fetch(
            "count_memory_terms",
            {"terms": canonical.dumps(terms), "common": common},
        )
        rare = [
            terms[int(row["position"])] for row in counted if 0 < int(row["memories"]) <= common
        ]
        return " OR ".join(rare or terms)


def scoped_terms_sql(tenant_id: str, scope: str, text: str) -> str:
    """The SQL function ``tether_scoped_terms`` (the memory migration that rebuilds the
    full-text index calls it): ``text``'s words behind the scope's token."""
    return scoped_terms(scope_token(tenant_id, scope), text)
