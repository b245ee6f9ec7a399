"""``tether serve`` serves the operator console: it prints the console's address, and the
login, session cookie and headers behave as the security design says, over real HTTP."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.console_support import DEADLINE_S, free_port
from tests.e2e.test_cli import Cli
from tether import Tether
from tether.server.console.render import CSP


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    work = tmp_path / "work"
    work.mkdir()
    return Cli(work, f"sqlite:///{tmp_path / 'serve.db'}")


def _start(cli: Cli, port: int) -> subprocess.Popen[str]:
    process = cli.start("serve", "--port", str(port))
    deadline = time.monotonic() + DEADLINE_S
    while True:
        if process.poll() is not None:
            pytest.fail(f"tether serve exited {process.returncode}: {process.communicate()[1]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            pytest.fail("tether serve did not answer /healthz in time")
        time.sleep(0.05)


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', page)
    assert found, page
    return found.group(1)


def test_serve_prints_the_console_url_and_logs_in_with_a_sealed_cookie(cli: Cli) -> None:
    app, _ = Tether.migrate(url=cli.url)
    with app:
        app.tenants.create("acme", admin="alice")
        alice = app.tenants.principal("acme", "alice")
        made = app.api_keys.create(alice, "alice")
    port = free_port()
    process = _start(cli, port)
    base = f"http://127.0.0.1:{port}"
    try:
        browser = httpx.Client(base_url=base, follow_redirects=False)
        login = browser.get("/console/login")
        assert login.status_code == 200
        assert login.headers["content-security-policy"] == CSP
        assert login.headers["x-frame-options"] == "DENY"
        assert login.headers["cache-control"] == "no-store"
        assert "httponly" in login.headers["set-cookie"].lower()
        assert "samesite=strict" in login.headers["set-cookie"].lower()
        token = _csrf(login.text)

        refused = browser.post("/console/login", data={"api_key": made.secret})
        assert refused.status_code == 403 and "tether_console=" not in str(refused.headers)
        wrong = browser.post("/console/login", data={"api_key": "tk~acme~x~y", "csrf": token})
        assert wrong.status_code == 401 and "not valid" in wrong.text

        entered = browser.post(
            "/console/login", data={"api_key": made.secret, "csrf": _csrf(wrong.text)}
        )
        assert entered.status_code == 303 and entered.headers["location"] == "/console/runs"
        cookie = next(
            line for line in entered.headers.get_list("set-cookie") if "tether_console=" in line
        )
        assert re.search(r"(?i)httponly", cookie) and re.search(r"(?i)samesite=strict", cookie)
        assert "Path=/console" in cookie and made.secret.rsplit("~", 1)[1] not in cookie
        runs = browser.get("/console/runs")
        assert runs.status_code == 200 and "alice @ acme" in runs.text

        sealed = browser.cookies["tether_console"]
        browser.cookies.set("tether_console", sealed[:-4] + "AAAA", path="/console")
        assert browser.get("/console/runs").headers["location"].startswith("/console/login")
        browser.cookies.set("tether_console", sealed, path="/console")
        assert browser.get("/console/runs").status_code == 200
        with Tether.open(url=cli.url) as app:
            app.api_keys.revoke(alice, made.key.key_id)
        assert browser.get("/console/runs").headers["location"].startswith("/console/login")
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _, stderr = process.communicate(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
    assert f"operator console at {base}/console" in stderr
