"""The ``Tether`` object: one open database plus the services built on it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any

from tether.apikeys import ApiKeys
from tether.audit.log import AuditLog
from tether.audit.notes import OperatorNotes
from tether.clock import Clock, SystemClock
from tether.config import Settings, load_settings
from tether.context.builder import Context
from tether.graph_store import GraphStore
from tether.housekeeping import Housekeeping
from tether.ids import IdSource, UUID7Source
from tether.keys import Keyring, load_keyring
from tether.memory.service import Memory
from tether.procedures.service import Procedures
from tether.runs.engine import Executor
from tether.runs.graphs import Graphs
from tether.runs.inbox import Inbox
from tether.runs.platform import PlatformRuns
from tether.runs.retention import RunRetention
from tether.runs.runbook import Runbook
from tether.runs.service import Runs
from tether.runs.workflow import WorkflowRegistry
from tether.storage import open_storage
from tether.storage.base import AppliedMigration, Storage
from tether.subjects import Subjects
from tether.tenants import TenantDirectory
from tether.threads.service import Threads
from tether.webhooks.delivery import Dispatcher
from tether.webhooks.service import Webhooks
from tether.working.open import open_working
from tether.working.service import WorkingMemory

if TYPE_CHECKING:
    from tether.memory.embeddings import Embedder

_LEGACY_SUBJECT_KEY = "subject_hash_key"


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
        keyring: Keyring | None = None,
        clock: Clock | None = None,
        ids: IdSource | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.storage = storage
        self.settings = settings
        self.clock = clock or SystemClock()
        self.ids = ids or UUID7Source(self.clock)
        self.keyring = keyring or load_keyring(settings)
        storage.use_keys(self.keyring)
        self.audit = AuditLog(storage, self.clock, self.ids, self.keyring)
        self.tenants = TenantDirectory(storage, self.clock, self.audit)
        self.api_keys = ApiKeys(storage, self.clock, self.keyring, self.audit)
        self.runs = Runs(storage, self.clock, self.ids, self.audit)
        self.platform = PlatformRuns(storage)
        self.graphs = Graphs(storage, self.clock, self.ids, self.audit)
        self.inbox = Inbox(storage, self.clock, self.ids, self.audit)
        self.notes = OperatorNotes(storage, self.clock, self.keyring, self.audit)
        self.runbook = Runbook(storage, self.clock, self.ids, self.audit, self.notes)
        self.retention = RunRetention(storage, self.clock, self.ids, self.audit, self.notes)
        self.memory = Memory(storage, self.clock, self.ids, self.audit, embedder=embedder)
        self.graph_store = GraphStore(storage, self.clock, self.audit, self.notes, self.memory)
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
        self.housekeeping = Housekeeping(
            storage,
            self.clock,
            self.audit,
            memory=self.memory,
            threads=self.threads,
            working=self.working,
            retention=self.retention,
            interval=timedelta(seconds=settings.housekeeping_interval_s),
        )
        self.webhooks = Webhooks(
            storage,
            self.clock,
            self.ids,
            self.audit,
            self.keyring,
            expiring_within=timedelta(seconds=settings.webhook_expiring_within_s),
        )
        self.dispatcher = Dispatcher(storage, self.clock, self.webhooks)
        self.subjects = Subjects(storage, self.clock, self.ids, self.audit, working=self.working)

    def executor(
        self,
        registry: WorkflowRegistry,
        *,
        procedures_dir: str | None = None,
        procedures_tenants: Sequence[str] | None = None,
        **options: Any,
    ) -> Executor:
        """An executor for the workflows in ``registry`` (see :class:`Executor` options).

        It enforces the procedures published for each run's tenant; given
        ``procedures_dir`` (default ``TETHER_PROCEDURES_DIR``) it also publishes that
        directory, whenever the files change, for the tenants in ``procedures_tenants``
        (default ``TETHER_PROCEDURES_TENANTS``) and no other.

        Raises:
            InvalidInput: a procedures directory without tenants.
        """
        directory = procedures_dir or self.settings.procedures_dir
        tenants = procedures_tenants
        if tenants is None and self.settings.procedures_tenants:
            tenants = [t.strip() for t in self.settings.procedures_tenants.split(",") if t.strip()]
        options.setdefault(
            "procedures",
            self.procedures.gate(
                directory, owner=str(options.get("owner") or ""), tenants=tenants or ()
            ),
        )
        return Executor(self.storage, registry, clock=self.clock, ids=self.ids, **options)

    def idle_tasks(
        self, owner: str, workflows: WorkflowRegistry | None = None
    ) -> list[Callable[[], object]]:
        """What a worker named ``owner`` runs when it has no run to execute: the
        housekeeping passes that are due, ``run.stuck`` webhooks (with the checkpoint SLAs
        of ``workflows``), and webhook deliveries."""
        return [
            lambda: self.housekeeping.run_due(owner=owner),
            lambda: self.dispatcher.scan_stuck(
                lambda tenant: self.runs.stuck_in(tenant, workflows=workflows)
            ),
            self.dispatcher.run_due,
        ]

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
            keyring = load_keyring(settings)
            storage.use_keys(keyring)
            storage.check_keys()
        except BaseException:
            storage.close()
            raise
        if embedder is None and settings.embedder != "none":
            from tether.memory.embeddings import load_default_embedder

            embedder = load_default_embedder(settings.embedder)
        return cls(storage, settings, keyring=keyring, clock=clock, ids=ids, embedder=embedder)

    @classmethod
    def migrate(
        cls, settings: Settings | None = None, *, url: str | None = None
    ) -> tuple[Tether, list[AppliedMigration]]:
        """Create the database if needed and bring it to the current schema.

        Without a configured key it creates the key file (SQLite: ``<database>.key``),
        holding the key an older database kept for its subject hashes if it has one, so
        those hashes keep matching; that key then leaves the database. Trails written
        before keys existed are sealed with a keyed entry.
        """
        settings = settings or load_settings(url=url)
        storage = open_storage(settings, create=True)
        try:
            keyring = load_keyring(settings, create=True, seed=_legacy_subject_key(storage))
            storage.use_keys(keyring)
            applied = storage.migrate()
            app = cls(storage, settings, keyring=keyring)
            app.audit.seal_unkeyed_trails()
        except BaseException:
            storage.close()
            raise
        return app, applied

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


def _legacy_subject_key(storage: Storage) -> bytes | None:
    """The subject-hash key a database made before keys left it kept for itself, if any."""
    status = {row.component: row.applied for row in storage.schema_status()}
    if status.get("core", 0) < 1:
        return None
    with storage.system_transaction(write=False) as txn:
        stored = txn.get_meta(_LEGACY_SUBJECT_KEY)
    return bytes.fromhex(stored) if stored else None
