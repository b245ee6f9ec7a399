"""``tether serve`` and ``tether api-keys`` as real processes: a key made on the command line
opens the API, and once revoked it no longer does."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_cli import Cli
from tether import Tether

AS_ALICE = ["--tenant", "acme", "--as", "alice"]
DEADLINE_S = 30.0


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    work = tmp_path / "work"
    work.mkdir()
    return Cli(work, f"sqlite:///{tmp_path / 'serve.db'}")


@pytest.fixture
def acme(cli: Cli) -> Cli:
    """A migrated database with tenant acme (admin alice, viewer bob)."""
    app, _ = Tether.migrate(url=cli.url)
    with app:
        app.tenants.create("acme", admin="alice")
        app.tenants.grant(app.tenants.principal("acme", "alice"), "bob", ["viewer"])
    return cli


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def server(acme: Cli) -> Iterator[str]:
    """``tether serve`` on a free port; its base URL once /healthz answers."""
    port = free_port()
    process = acme.start("serve", "--port", str(port))
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + DEADLINE_S
    try:
        while True:
            if process.poll() is not None:
                _, stderr = process.communicate()
                pytest.fail(f"tether serve exited {process.returncode}: {stderr}")
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("tether serve did not answer /healthz in time")
            time.sleep(0.05)
        yield base
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def test_a_key_from_the_cli_opens_the_api_until_it_is_revoked(acme: Cli, server: str) -> None:
    made = acme("api-keys", "create", "alice", *AS_ALICE, "--name", "ci")
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert key.startswith("tk~acme~")
    listed = acme("api-keys", "ls", *AS_ALICE, "--json")
    [entry] = listed.json()
    assert entry["name"] == "ci" and entry["principal_id"] == "alice"
    assert key.rsplit("~", 1)[1] not in listed.stdout

    headers = {"Authorization": f"Bearer {key}"}
    runs = httpx.get(f"{server}/api/v1/runs", headers=headers)
    assert runs.status_code == 200, runs.text
    assert runs.json() == {"items": [], "next_cursor": None}
    assert httpx.get(f"{server}/readyz").json()["status"] == "ready"
    assert "tether_runs" in httpx.get(f"{server}/metrics").text

    revoked = acme("api-keys", "revoke", entry["key_id"], *AS_ALICE)
    assert revoked.returncode == 0, revoked.stderr
    refused = httpx.get(f"{server}/api/v1/runs", headers=headers)
    assert refused.status_code == 401
    assert refused.headers["content-type"] == "application/problem+json"
    assert json.loads(refused.text)["code"] == "unauthenticated"


def test_only_an_admin_makes_keys(acme: Cli) -> None:
    refused = acme("api-keys", "create", "bob", "--tenant", "acme", "--as", "bob")
    assert refused.returncode == 6
    assert "permission_denied" in refused.stderr
    unknown = acme("api-keys", "revoke", "0123456789abcdef", *AS_ALICE)
    assert unknown.returncode == 4


def test_serve_refuses_a_database_that_is_not_there(cli: Cli) -> None:
    missing = cli("serve", "--port", str(free_port()))
    assert missing.returncode == 7
    assert "database" in missing.stderr
