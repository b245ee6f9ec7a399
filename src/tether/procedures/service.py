"""``app.procedures``: validate, publish and read a tenant's skills and policies.

A published version lives in the database, so every worker of a tenant enforces the same
one; publishing is audited. Versions are content hashes and stored sets never change, so
a process caches each version it has read for as long as it lives.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tether import canonical
from tether.audit.log import AuditLog
from tether.clock import Clock
from tether.errors import IntegrityViolation, InvalidInput, ProcedureInvalid
from tether.ids import check_name
from tether.permissions import authorize
from tether.principals import Principal
from tether.procedures.loader import ProcedureSet, from_documents, load_dir, signature
from tether.procedures.models import Outcome, Policy, Skill
from tether.redaction import get_logger
from tether.storage.base import ProcedureVersionRow, Storage
from tether.storage.stores import ProcedureStore
from tether.validation import guarded

log = get_logger("tether.procedures")

Source = Path | str | ProcedureSet | Sequence[Mapping[str, Any]]
"""What ``publish`` takes: a directory, a validated set, or parsed documents."""


@dataclass(frozen=True)
class CheckReport:
    """What ``check`` found in a directory: errors refuse it, warnings do not."""

    directory: str
    version: str | None
    skills: int
    policies: int
    errors: list[str]
    warnings: list[str]

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class Publication:
    """The result of ``publish``: the version in force, and whether it just changed."""

    version: str
    previous: str | None
    changed: bool


@dataclass(frozen=True)
class Current:
    """The version in force for a tenant, and who made it so, when."""

    procedures: ProcedureSet
    since: datetime
    by: str
    source: str


@guarded
class Procedures:
    def __init__(self, storage: Storage, clock: Clock, audit: AuditLog) -> None:
        self._storage = storage
        self._clock = clock
        self._audit = audit
        self._cache: dict[tuple[str, str], ProcedureSet] = {}
        self._lock = threading.Lock()

    # -- files ---------------------------------------------------------------------------

    def load_dir(self, directory: Path | str) -> ProcedureSet:
        """Read and validate a directory of procedure files (see ``docs/procedures.md``).

        Raises:
            ProcedureInvalid: a file is malformed; the message names each file and field.
        """
        return load_dir(directory)

    def check(self, directory: Path | str) -> CheckReport:
        """Validate a directory without publishing it; warn about contradicting policies."""
        return self.check_directory(directory)

    @staticmethod
    def check_directory(directory: Path | str) -> CheckReport:
        """``check`` without a database."""
        try:
            found = load_dir(directory)
        except ProcedureInvalid as exc:
            return CheckReport(str(directory), None, 0, 0, exc.message.split("; "), [])
        warnings = found.contradictions()
        warnings += [
            f"policy {p.name!r} ({found.sources.get(p.name, '?')}): severity soft makes "
            f"action {p.action.value} only warn"
            for p in found.policies
            if p.severity.value == "soft" and p.action.value != "warn"
        ]
        return CheckReport(
            str(directory), found.version, len(found.skills), len(found.policies), [], warnings
        )

    # -- publishing ----------------------------------------------------------------------

    def publish(
        self, principal: Principal, source: Source, *, allow_empty: bool = False
    ) -> Publication:
        """Make ``source`` the version in force for the principal's tenant (admins only).

        Publishing what is already in force changes nothing and is not audited again. A
        set with no skills and no policies removes every policy in force, so it is
        published only with ``allow_empty``.

        Raises:
            ProcedureInvalid: the files or documents are malformed, or the set is empty
                and ``allow_empty`` is false; nothing changed.
        """
        authorize(principal, "procedures.publish")
        found, where = self._resolve(source)
        if is_empty(found) and not allow_empty:
            raise ProcedureInvalid(
                f"{where} holds no skills or policies: publishing it would remove every "
                "policy in force; pass allow_empty=True (`--allow-empty`) if that is meant"
            )
        return self.publish_set(principal.tenant_id, principal.principal_id, found, where)

    def publish_set(
        self, tenant_id: str, actor_id: str, found: ProcedureSet, source: str
    ) -> Publication:
        """Publish a validated set as ``actor_id`` (the caller checked the right to)."""
        now = self._clock.now()
        with self._storage.transaction(tenant_id) as txn:
            current = txn.get_current_procedures(tenant_id)
            previous = current[0] if current else None
            if previous == found.version:
                return Publication(found.version, previous, changed=False)
            txn.insert_procedure_version(
                ProcedureVersionRow(
                    tenant_id=tenant_id,
                    version=found.version,
                    documents_json=canonical.dumps(found.documents, trusted=True),
                    source=source,
                    published_at=now,
                    published_by=actor_id,
                )
            )
            txn.set_current_procedures(tenant_id, found.version, at=now, by=actor_id)
            self._audit.record_txn(
                txn,
                tenant_id=tenant_id,
                actor_id=actor_id,
                action="procedures.published",
                target=f"procedures:{found.version}",
                details={
                    "version": found.version,
                    "previous": previous,
                    "skills": [s.name for s in found.skills],
                    "policies": [p.name for p in found.policies],
                    "source": source,
                },
            )
        with self._lock:
            self._cache[(tenant_id, found.version)] = found
        log.info("procedures %s published for tenant %s by %s", found.version, tenant_id, actor_id)
        return Publication(found.version, previous, changed=True)

    def _resolve(self, source: Source) -> tuple[ProcedureSet, str]:
        if isinstance(source, ProcedureSet):
            return source, "procedure set"
        if isinstance(source, (str, Path)):
            return load_dir(source), f"directory {Path(source).name}"
        documents = [d for d in source if isinstance(d, Mapping)]
        if len(documents) == len(source):
            return from_documents(documents), "documents"
        raise InvalidInput("publish takes a directory, a ProcedureSet or a list of documents")

    # -- reading -------------------------------------------------------------------------

    def current(self, principal: Principal) -> Current | None:
        """The version in force for the principal's tenant, or ``None`` if nothing was
        published."""
        authorize(principal, "procedures.current")
        tenant_id = principal.tenant_id
        with self._storage.transaction(tenant_id, write=False) as txn:
            pointer = txn.get_current_procedures(tenant_id)
            if pointer is None:
                return None
            version, since, by = pointer
            row = txn.get_procedure_version(tenant_id, version)
            found = self.version_txn(txn, tenant_id, version)
        return Current(found, since, by, row.source if row else "")

    def history(self, principal: Principal, *, limit: int = 20) -> list[ProcedureVersionRow]:
        """Published versions of the principal's tenant, newest first, each naming who
        published it."""
        authorize(principal, "procedures.history")
        tenant_id = principal.tenant_id
        with self._storage.transaction(tenant_id, write=False) as txn:
            return txn.list_procedure_versions(tenant_id, limit=limit)

    def in_force_txn(self, txn: ProcedureStore, tenant_id: str) -> ProcedureSet | None:
        """The set in force, read inside ``txn`` (one indexed read; documents cached)."""
        pointer = txn.get_current_procedures(tenant_id)
        return None if pointer is None else self.version_txn(txn, tenant_id, pointer[0])

    def version_txn(self, txn: ProcedureStore, tenant_id: str, version: str) -> ProcedureSet:
        with self._lock:
            cached = self._cache.get((tenant_id, version))
        if cached is not None:
            return cached
        row = txn.get_procedure_version(tenant_id, version)
        if row is None:
            raise IntegrityViolation(f"procedures {version} of tenant {tenant_id!r} are missing")
        found = from_documents(canonical.loads(row.documents_json), source="stored document")
        if found.version != version:
            raise IntegrityViolation(
                f"stored procedures {version} of tenant {tenant_id!r} hash to {found.version}: "
                "the stored documents were changed outside Tether"
            )
        with self._lock:
            self._cache[(tenant_id, version)] = found
        return found

    # -- context -------------------------------------------------------------------------

    def render_for_context(self, principal: Principal, *, labels: Sequence[str] = ()) -> list[str]:
        """Text blocks for a prompt: each skill (only those for ``labels`` if given, plus
        the ones for every task), then one summary of the policies in force."""
        current = self.current(principal)
        if current is None:
            return []
        return render(current.procedures, labels=labels)

    # -- workers -------------------------------------------------------------------------

    def gate(
        self,
        directory: Path | str | None = None,
        *,
        owner: str = "",
        tenants: Sequence[str] = (),
    ) -> ProcedureGate:
        """What an executor consults: the set in force, and (given ``directory``) the
        files it publishes, when they change, for ``tenants`` only.

        Raises:
            InvalidInput: a directory without tenants (it would be published for every
                tenant the worker claims a run of), or a tenant id that is not valid.
        """
        if directory and not tenants:
            raise InvalidInput(
                f"procedures directory {Path(directory).name} names no tenants: it is "
                "published only for the tenants given (`tether worker --tenant T`, "
                "TETHER_PROCEDURES_TENANTS)"
            )
        for tenant in tenants:
            check_name(tenant, what="tenant")
        return ProcedureGate(
            self, Path(directory) if directory else None, owner, frozenset(tenants)
        )


def worker_actor(owner: str) -> str:
    """How a worker's publication names who made it: ``worker:<owner>`` (no principal id
    contains ``:``, so it never reads as a person or as Tether's own maintenance)."""
    return f"worker:{owner or 'unnamed'}"


def is_empty(found: ProcedureSet) -> bool:
    """Whether a set has nothing to enforce or show: publishing it clears the tenant's."""
    return not found.skills and not found.policies


def render(found: ProcedureSet, *, labels: Sequence[str] = ()) -> list[str]:
    wanted = set(labels)
    blocks = [
        _render_skill(skill)
        for skill in found.skills
        if not wanted or not skill.applies_to or wanted & set(skill.applies_to)
    ]
    if found.policies:
        lines = [f"Policies in force (version {found.version[:12]}); they are enforced:"]
        lines += [f"- {_render_policy(policy)}" for policy in found.policies]
        blocks.append("\n".join(lines))
    return blocks


def _render_skill(skill: Skill) -> str:
    lines = [f"Skill {skill.name}: {skill.description.strip()}"]
    if skill.applies_to:
        lines.append(f"Applies to: {', '.join(skill.applies_to)}")
    lines += [f"{number}. {step.strip()}" for number, step in enumerate(skill.steps, start=1)]
    if skill.instructions.strip():
        lines.append(skill.instructions.strip())
    return "\n".join(lines)


def _render_policy(policy: Policy) -> str:
    what = {
        Outcome.FORBID: "forbidden",
        Outcome.REQUIRE_APPROVAL: "needs approval",
        Outcome.WARN: "allowed with a warning",
        Outcome.ALLOW: "allowed",
    }[policy.outcome]
    when = [f"effects {', '.join(policy.match.effects)}"]
    when += [f"{c.field} {c.op.value} {c.value!r}" for c in policy.match.conditions]
    if policy.match.labels:
        when.append(f"labels {', '.join(policy.match.labels)}")
    text = f"{policy.name} ({what}): {policy.description.strip()} [when {'; '.join(when)}]"
    if policy.exceptions:
        text += f" ({len(policy.exceptions)} exception(s))"
    return text


class ProcedureGate:
    """The executor's view of procedures: the set in force at claim time, and the
    directory it keeps published (when given one)."""

    def __init__(
        self,
        procedures: Procedures,
        directory: Path | None,
        owner: str,
        tenants: frozenset[str] = frozenset(),
    ) -> None:
        self.procedures = procedures
        self.directory = directory
        self.owner = owner
        self.tenants = tenants
        """The tenants the directory is published for; runs of others only enforce."""
        self._signature: str | None = None
        self._parsed: ProcedureSet | str | None = None
        self._reported: set[tuple[str, str]] = set()

    def in_force_txn(self, txn: ProcedureStore, tenant_id: str) -> ProcedureSet | None:
        return self.procedures.in_force_txn(txn, tenant_id)

    def _report_once(self, tenant_id: str, content: str, problem: str) -> str | None:
        """``problem``, the first time it is met for this tenant and directory content."""
        if (tenant_id, content) in self._reported:
            return None
        self._reported.add((tenant_id, content))
        log.error("procedures in %s not published: %s", self.directory, problem)
        return problem

    def sync(
        self, tenant_id: str, in_force: ProcedureSet | None
    ) -> tuple[ProcedureSet | None, str | None]:
        """Publish the directory for ``tenant_id`` if its content differs from ``in_force``.

        Returns the newly published set (or ``None``) and, once per tenant and content,
        the problem that kept a malformed directory from being published (the version in
        force stays). A tenant the gate is not configured for is left alone.
        """
        if self.directory is None or tenant_id not in self.tenants:
            return None, None
        current = signature(self.directory)
        if current != self._signature:
            try:
                self._parsed = load_dir(self.directory)
            except ProcedureInvalid as exc:
                self._parsed = exc.message
            self._signature = current
        parsed = self._parsed
        if isinstance(parsed, str):
            return None, self._report_once(tenant_id, current, parsed)
        if parsed is None or (in_force is not None and in_force.version == parsed.version):
            return None, None
        if is_empty(parsed):
            return None, self._report_once(
                tenant_id,
                current,
                "the directory holds no skills or policies; a worker never publishes an "
                "empty set (an admin can, with `tether procedures publish --allow-empty`)",
            )
        self.procedures.publish_set(
            tenant_id,
            worker_actor(self.owner),
            parsed,
            f"directory {self.directory.name} (worker {self.owner})",
        )
        return parsed, None
