"""Fuzzing the public API and the CLI with hostile strings and numbers.

Every call either succeeds or raises a :class:`TetherError` (the CLI: exits with a
documented code, never a traceback), and a call that fails leaves every table of the
database exactly as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

from tests.hostile_support import HOSTILE_TEXTS, MARKUP_TEXTS, database_rows
from tests.memory_support import create_tenant
from tests.support import TestDatabase, auditor
from tether import Tether
from tether.cli.main import app as cli_app
from tether.errors import TetherError
from tether.memory.models import MemoryProposal, Scope
from tether.principals import Principal
from tether.runs import END, RunContext, Workflow

TENANT = "acme"
DOCUMENTED_EXIT_CODES = {0, 2, 3, 4, 5, 6}
"""What a CLI call on a healthy database may exit with (docs/cli.md)."""

texts = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(categories=["Cs", "Cc", "Ps", "Pe", "Ll"]), max_size=20),
    st.sampled_from([*HOSTILE_TEXTS.values(), *MARKUP_TEXTS, "", " ", "u-1", "\udcff"]),
    st.builds(lambda a, b: a + "\udce9" + b, st.text(max_size=5), st.text(max_size=5)),
)
numbers = st.one_of(
    st.integers(min_value=-5, max_value=300),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 2**63, -(2**63) - 1, float("nan"), float("inf")]),
)


class Notes(BaseModel):
    notes: dict[str, Any] = {}


def notes_workflow() -> Workflow[Notes]:
    wf: Workflow[Notes] = Workflow("notes", state=Notes)

    @wf.node
    def only(ctx: RunContext, s: Notes) -> str:
        return END

    return wf


Call = Callable[[Tether, dict[str, Principal], str, str, Any], object]


def _propose(app: Tether, who: dict[str, Principal], a: str, b: str, n: Any) -> object:
    try:
        proposal = MemoryProposal(text=a, scope=Scope.USER, scope_id=b, confidence=0.9)
    except ValidationError:
        return None  # the caller's own model refused it: no Tether call was made
    return app.memory.propose(who["olga"], proposal)


CALLS: dict[str, Call] = {
    "memory.propose": _propose,
    "memory.recall": lambda app, who, a, b, n: app.memory.recall(
        who["olga"], a, [(Scope.USER, b)], limit=n
    ),
    "memory.get": lambda app, who, a, b, n: app.memory.get(who["olga"], a),
    "memory.retention_cycle": lambda app, who, a, b, n: app.memory.retention_cycle(
        who["olga"], decay_after_days=n
    ),
    "memory.place_hold": lambda app, who, a, b, n: app.memory.place_hold(
        who["alice"], Scope.USER, a, b
    ),
    "threads.create": lambda app, who, a, b, n: app.threads.create(
        who["olga"], a, title=b, retention_days=n
    ),
    "threads.turns": lambda app, who, a, b, n: app.threads.turns(who["olga"], a, from_seq=n),
    "working.set": lambda app, who, a, b, n: app.working.set(
        auditor(TENANT), a, b, {"v": n, a[:10]: b}, ttl_s=n
    ),
    "working.get": lambda app, who, a, b, n: app.working.get(auditor(TENANT), a, b),
    "runs.all": lambda app, who, a, b, n: app.runs.all(who["olga"], status=a, limit=n),
    "runs.start": lambda app, who, a, b, n: app.runs.start(
        who["olga"], notes_workflow(), {"notes": {a: n, "b": b}}, max_steps=n
    ),
    "runs.answer": lambda app, who, a, b, n: app.runs.answer(who["olga"], a, {"x": n}),
    "subjects.export": lambda app, who, a, b, n: app.subjects.export(who["alice"], a),
    "audit.entries": lambda app, who, a, b, n: app.audit.entries(
        auditor(TENANT), after_seq=n, limit=n
    ),
    "tenants.create": lambda app, who, a, b, n: app.tenants.create(a, name=b),
}


@pytest.fixture
def fuzzed(backend: TestDatabase) -> Any:
    app = backend.open()
    try:
        yield app, create_tenant(app, TENANT)
    finally:
        app.close()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=st.sampled_from(sorted(CALLS)), a=texts, b=texts, n=numbers)
def test_the_api_succeeds_or_raises_a_tether_error_and_a_failure_changes_nothing(
    backend: TestDatabase, fuzzed: Any, name: str, a: str, b: str, n: Any
) -> None:
    app, who = fuzzed
    before = database_rows(backend)
    try:
        CALLS[name](app, who, a, b, n)
    except TetherError:
        assert database_rows(backend) == before, name


def cli_commands(a: str, b: str, n: Any, thread_id: str) -> list[list[str]]:
    as_alice = ["--tenant", TENANT, "--as", "alice"]
    number = str(n)
    return [
        ["memory", "propose", a, "--scope", f"user:{b}", *as_alice],
        ["memory", "recall", a, "-s", f"user:{b}", "--limit", number, *as_alice, "--json"],
        ["memory", "show", a, *as_alice],
        ["memory", "export", a, *as_alice],
        ["threads", "create", a, "--title", b, *as_alice],
        ["threads", "append", thread_id, a, *as_alice],
        ["threads", "ls", "--user", a, "--limit", number, *as_alice],
        ["runs", "ls", "--status", a, "--limit", number, *as_alice],
        ["context", "build", thread_id, "--budget", number, "--query", a, *as_alice],
        ["runs", "answer", a, "--answer", b, *as_alice],
        ["tenants", "create", a],
    ]


@pytest.fixture
def cli_database(tmp_path: Any) -> tuple[TestDatabase, str]:
    path = tmp_path / "fuzz.db"
    url = f"sqlite:///{path}"
    app, _ = Tether.migrate(url=url)
    with app:
        who = create_tenant(app, TENANT)
        thread = app.threads.create(who["olga"], "u-1", title="t").thread_id
    return TestDatabase("sqlite", url, path=path), thread


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(which=st.integers(min_value=0, max_value=10), a=texts, b=texts, n=numbers)
def test_the_cli_exits_with_a_documented_code_and_a_failure_changes_nothing(
    cli_database: tuple[TestDatabase, str], which: int, a: str, b: str, n: Any
) -> None:
    database, thread_id = cli_database
    args = cli_commands(a, b, n, thread_id)[which]
    before = database_rows(database)
    result = CliRunner().invoke(
        cli_app, args, env={"TETHER_URL": database.url, "TETHER_EMBEDDER": "none"}
    )
    output = result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args,
        repr(result.exception),
    )
    assert result.exit_code in DOCUMENTED_EXIT_CODES, (args, result.exit_code, output)
    assert "Traceback" not in output
    if result.exit_code != 0:
        assert database_rows(database) == before, args
