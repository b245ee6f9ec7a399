"""The ``Tether`` object: one open database plus the services built on it."""

from __future__ import annotations

import secrets
from types import TracebackType
from typing import TYPE_CHECKING, Any

from tether.audit.log import AuditLog
from tether.clock import Clock, SystemClock
from tether.config import Settings, load_settings
from tether.context.builder import Context
from tether.errors import SchemaOutdated
from tether.ids import IdSource, UUID7Source
from tether.memory.service import Memory
from tether.procedures.service import Procedures
from tether.runs.engine import Executor
from tether.runs.service import Runs
from tether.runs.workflow import WorkflowRegistry
from tether.storage import open_storage
from tether.storage.base import AppliedMigration, Storage
from tether.subjects import Subjects
from tether.tenants import TenantDirectory
from tether.threads.service import Threads
from tether.working.open import open_working
from tether.working.service import WorkingMemory

if TYPE_CHECKING:
    from tether.memory.embeddings import Embedder

_SUBJECT_KEY = "subject_hash_key"


class Tether:
    """Entry point of the Python API.

    ``Tether.open()`` refuses a database that is missing or not at this code's schema;
    ``Tether.migrate()`` is the one way to create or upgrade one.

    Example:
        >>> with Tether.open(url="sqlite:///./tether.db") as app:
        ...     app.audit.verify("acme").ok
    """

    def __init__(
        self,
        storage: Storage,
        settings: Settings,
        *,
        clock: Clock | None = None,
        ids: IdSource | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.storage = storage
        self.settings = settings
        self.clock = clock or SystemClock()
        self.ids = ids or UUID7Source(self.clock)
        self._subject_key = self._load_subject_key()
        self.audit = AuditLog(storage, self.clock, self.ids, lambda: self._subject_key)
        self.tenants = TenantDirectory(storage, self.clock, self.audit)
        self.runs = Runs(storage, self.clock, self.ids, self.audit)
        self.memory = Memory(storage, self.clock, self.ids, self.audit, embedder=embedder)
        self.procedures = Procedures(storage, self.clock, self.audit)
        self.working: WorkingMemory = open_working(settings, storage, self.clock)
        self.threads = Threads(
            storage,
            self.clock,
            self.ids,
            self.audit,
            settings=settings,
            erase_sessions=self.working.erase_sessions,
        )
        self.context = Context(
            threads=self.threads, memory=self.memory, runs=self.runs, procedures=self.procedures
        )
        self.subjects = Subjects(storage, self.clock, self.ids, self.audit, working=self.working)

    def executor(
        self, registry: WorkflowRegistry, *, procedures_dir: str | None = None, **options: Any
    ) -> Executor:
        """An executor for the workflows in ``registry`` (see :class:`Executor` options).

        It enforces the procedures published for each run's tenant; given
        ``procedures_dir`` (default ``TETHER_PROCEDURES_DIR``) it also publishes that
        directory for the tenant of each run it claims whenever the files change.
        """
        directory = procedures_dir or self.settings.procedures_dir
        options.setdefault(
            "procedures", self.procedures.gate(directory, owner=str(options.get("owner") or ""))
        )
        return Executor(self.storage, registry, clock=self.clock, ids=self.ids, **options)

    @classmethod
    def open(
        cls,
        settings: Settings | None = None,
        *,
        url: str | None = None,
        clock: Clock | None = None,
        ids: IdSource | None = None,
        embedder: Embedder | None = None,
    ) -> Tether:
        """Open an existing, current database (``settings`` or ``TETHER_*`` variables).

        ``embedder`` turns on vector recall; without one, recall is lexical.
        """
        settings = settings or load_settings(url=url)
        storage = open_storage(settings)
        try:
            storage.check_schema()
        except BaseException:
            storage.close()
            raise
        if embedder is None and settings.embedder != "none":
            from tether.memory.embeddings import load_default_embedder

            embedder = load_default_embedder(settings.embedder)
        return cls(storage, settings, clock=clock, ids=ids, embedder=embedder)

    @classmethod
    def migrate(
        cls, settings: Settings | None = None, *, url: str | None = None
    ) -> tuple[Tether, list[AppliedMigration]]:
        """Create the database if needed and bring it to the current schema."""
        settings = settings or load_settings(url=url)
        storage = open_storage(settings, create=True)
        try:
            applied = storage.migrate()
            _ensure_subject_key(storage)
            app = cls(storage, settings)
        except BaseException:
            storage.close()
            raise
        return app, applied

    def _load_subject_key(self) -> bytes:
        """The key for data-subject hashes: ``TETHER_SECRET_KEY``, else the database's own."""
        if self.settings.secret_key is not None:
            return self.settings.secret_key.get_secret_value().encode()
        # tether_meta holds no tenant's rows; the application role may read it.
        with self.storage.transaction("", write=False) as txn:
            stored = txn.get_meta(_SUBJECT_KEY)
        if stored is None:
            raise SchemaOutdated("the database has no subject key yet; run `tether migrate`")
        return bytes.fromhex(stored)

    def close(self) -> None:
        """Write the buffered recall log and access counts, then close the stores."""
        try:
            self.memory.flush_access()
        finally:
            try:
                self.working.close()
            finally:
                self.storage.close()

    def __enter__(self) -> Tether:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _ensure_subject_key(storage: Storage) -> None:
    """Give a new database its own random key for data-subject hashes."""
    with storage.system_transaction() as txn:
        if txn.get_meta(_SUBJECT_KEY) is None:
            txn.insert_meta(_SUBJECT_KEY, secrets.token_hex(32))
