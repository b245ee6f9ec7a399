"""Each backend held to the storage contract, for mypy only.

Nothing here runs. The assignments make mypy compare each backend's transaction class
with every component protocol, and each storage class with :class:`Storage`: an
operation missing, renamed or with another signature in one backend fails type checking
here, even where no service calls it yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tether.storage.base import Storage, Transaction
    from tether.storage.langgraph_store import LangGraphStore
    from tether.storage.postgres.backend import PostgresStorage, PostgresTransaction
    from tether.storage.sqlite.backend import SQLiteStorage, SQLiteTransaction
    from tether.storage.stores import (
        CoreStore,
        MemoryStore,
        OperationsStore,
        ProcedureStore,
        RunStore,
        ThreadStore,
        WebhookStore,
        WorkingStore,
    )

    sqlite_core: type[CoreStore] = SQLiteTransaction
    sqlite_runs: type[RunStore] = SQLiteTransaction
    sqlite_memory: type[MemoryStore] = SQLiteTransaction
    sqlite_working: type[WorkingStore] = SQLiteTransaction
    sqlite_threads: type[ThreadStore] = SQLiteTransaction
    sqlite_procedures: type[ProcedureStore] = SQLiteTransaction
    sqlite_operations: type[OperationsStore] = SQLiteTransaction
    sqlite_webhooks: type[WebhookStore] = SQLiteTransaction
    sqlite_langgraph: type[LangGraphStore] = SQLiteTransaction
    sqlite_transaction: type[Transaction] = SQLiteTransaction
    sqlite_storage: type[Storage] = SQLiteStorage

    postgres_core: type[CoreStore] = PostgresTransaction
    postgres_runs: type[RunStore] = PostgresTransaction
    postgres_memory: type[MemoryStore] = PostgresTransaction
    postgres_working: type[WorkingStore] = PostgresTransaction
    postgres_threads: type[ThreadStore] = PostgresTransaction
    postgres_procedures: type[ProcedureStore] = PostgresTransaction
    postgres_operations: type[OperationsStore] = PostgresTransaction
    postgres_webhooks: type[WebhookStore] = PostgresTransaction
    postgres_langgraph: type[LangGraphStore] = PostgresTransaction
    postgres_transaction: type[Transaction] = PostgresTransaction
    postgres_storage: type[Storage] = PostgresStorage
