"""Reading a procedures directory into a validated, versioned :class:`ProcedureSet`.

A directory holds one YAML document per ``*.yaml`` / ``*.yml`` file (not recursive). The
set's version is the SHA-256 of the canonical JSON of its parsed documents, so it changes
when what the files *say* changes, not when they are reformatted, renamed or reordered.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from tether import canonical
from tether.errors import InvalidInput, ProcedureInvalid
from tether.procedures.matching import contradictions
from tether.procedures.models import Document, Policy, Skill
from tether.validation import check_value

_DOCUMENT: TypeAdapter[Skill | Policy] = TypeAdapter(Document)
SUFFIXES = (".yaml", ".yml")
MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True)
class ProcedureSet:
    """Every skill and policy of one version, in a stable order (kind, then name)."""

    version: str
    skills: tuple[Skill, ...]
    policies: tuple[Policy, ...]
    sources: Mapping[str, str] = field(default_factory=dict)
    """Where each document came from (file name), for messages; not part of the version."""

    @property
    def documents(self) -> list[dict[str, Any]]:
        """The parsed documents as JSON values: what is hashed and stored."""
        return [doc.model_dump(mode="json") for doc in (*self.skills, *self.policies)]

    def contradictions(self) -> list[str]:
        return contradictions(self.policies, self.sources)


def _location(error: Mapping[str, Any]) -> str:
    parts = [str(part) for part in error["loc"]]
    # The discriminated union puts the kind ("policy"/"skill") first; it is not a field.
    if parts and parts[0] in ("policy", "skill"):
        parts = parts[1:]
    return ".".join(parts) or "(document)"


def _explain(source: str, exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors():
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(f"{source}: field {_location(error)}: {message}")
    return problems


def parse_document(source: str, data: Any) -> Skill | Policy:
    """Validate one parsed document.

    Raises:
        ProcedureInvalid: naming ``source`` and every offending field.
    """
    if not isinstance(data, dict):
        raise ProcedureInvalid(
            f"{source}: expected a mapping with kind: skill or kind: policy, "
            f"got {type(data).__name__}"
        )
    if data.get("kind") not in ("skill", "policy"):
        raise ProcedureInvalid(
            f"{source}: field kind: must be 'skill' or 'policy', got {data.get('kind')!r}"
        )
    try:
        return _DOCUMENT.validate_python(data)
    except ValidationError as exc:
        raise ProcedureInvalid("; ".join(_explain(source, exc))) from None


def build_set(documents: Iterable[tuple[str, Any]]) -> ProcedureSet:
    """Validate ``(source, data)`` pairs into a versioned set.

    Raises:
        ProcedureInvalid: every problem found, each naming its file and field.
    """
    problems: list[str] = []
    parsed: list[tuple[str, Skill | Policy]] = []
    for source, data in documents:
        try:
            parsed.append((source, parse_document(source, data)))
        except ProcedureInvalid as exc:
            problems.append(exc.message)
    seen: dict[tuple[str, str], str] = {}
    for source, doc in parsed:
        key = (doc.kind, doc.name)
        if key in seen:
            problems.append(
                f"{source}: field name: {doc.kind} {doc.name!r} is also defined in {seen[key]}"
            )
        seen[key] = source
    if problems:
        raise ProcedureInvalid("; ".join(problems))
    skills = tuple(sorted((d for _, d in parsed if isinstance(d, Skill)), key=lambda d: d.name))
    policies = tuple(sorted((d for _, d in parsed if isinstance(d, Policy)), key=lambda d: d.name))
    sources = {doc.name: source for source, doc in parsed}
    values = [doc.model_dump(mode="json") for doc in (*skills, *policies)]
    return ProcedureSet(canonical.digest(values), skills, policies, sources)


def from_documents(
    documents: Sequence[Mapping[str, Any]], source: str = "document"
) -> ProcedureSet:
    """A set from already parsed documents (e.g. stored ones, or given to ``publish``)."""
    return build_set((f"{source} {index + 1}", dict(doc)) for index, doc in enumerate(documents))


def procedure_files(directory: Path) -> list[Path]:
    """The YAML files of ``directory``, sorted by name.

    Raises:
        ProcedureInvalid: the directory does not exist or is not a directory.
    """
    if not directory.is_dir():
        raise ProcedureInvalid(f"{directory}: no such directory of procedure files")
    return sorted(p for p in directory.iterdir() if p.suffix in SUFFIXES and p.is_file())


def read_file(path: Path) -> Any:
    """Parse one YAML file safely (no tags that build objects).

    Raises:
        ProcedureInvalid: unreadable, too large or not valid YAML, naming the file.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ProcedureInvalid(f"{path.name}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ProcedureInvalid(f"{path.name}: larger than {MAX_FILE_BYTES} bytes")
    try:
        document = yaml.load(raw.decode("utf-8"), Loader=_NoAliasLoader)
    except UnicodeDecodeError:
        raise ProcedureInvalid(f"{path.name}: not UTF-8 text") from None
    except RecursionError:
        raise ProcedureInvalid(f"{path.name}: nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ProcedureInvalid(f"{path.name}: not valid YAML{where}: {problem}") from None
    try:
        check_value("(document)", document)
    except InvalidInput as exc:
        raise ProcedureInvalid(f"{path.name}: field {exc.message}") from None
    return document


class _NoAliasLoader(yaml.SafeLoader):
    """``yaml.safe_load``'s loader without anchors and aliases: a few hundred bytes of
    nested aliases expand to billions of nodes, and procedure files need none."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            problem = "anchors and aliases are not allowed in procedure files"
            raise yaml.composer.ComposerError(None, None, problem, event.start_mark)
        return super().compose_node(parent, index)


def load_dir(directory: Path | str) -> ProcedureSet:
    """Read and validate every procedure file of ``directory``.

    Raises:
        ProcedureInvalid: any file is malformed; the message names each file and field.
    """
    directory = Path(directory)
    problems: list[str] = []
    documents: list[tuple[str, Any]] = []
    for path in procedure_files(directory):
        try:
            documents.append((path.name, read_file(path)))
        except ProcedureInvalid as exc:
            problems.append(exc.message)
    try:
        result = build_set(documents)
    except ProcedureInvalid as exc:
        problems.append(exc.message)
    if problems:
        raise ProcedureInvalid("; ".join(problems))
    return result


def signature(directory: Path) -> str:
    """A fingerprint of the files' names and bytes: while it is unchanged the files need
    not be parsed again. Empty when the directory cannot be read."""
    digest = hashlib.sha256()
    try:
        for path in procedure_files(directory):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    except (OSError, ProcedureInvalid):
        return ""
    return digest.hexdigest()
