"""What the chaos and pause tests share: the effect service, workers, faults, figures.

- :class:`EffectService` is the outside world: an HTTP server in the test process that
  logs every call a worker begins and every one it applies. Retry-safe keys are applied
  once (it dedupes them); other keys are applied on every call, so a repeat shows.
- :class:`PrivateCluster` is a PostgreSQL cluster of the test's own (``initdb`` into a
  temporary folder, a free port, ``pg_ctl``), so the test can restart it at will.
- Workers are real ``tether worker`` processes.
- SQLite faults are real too: a writer holding the lock past the busy timeout, a file
  size limit on the workers (writes fail as on a full disk) and a read-only file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import running_in_ci

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Call:
    key: str
    pid: int
    fence: int
    at: float
    retry_safe: bool


@dataclass
class EffectService:
    """Counts effect calls outside Tether's transactions (see the module docstring)."""

    begun: list[Call] = field(default_factory=list)
    applied: list[Call] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    applications: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> str:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _reply(self, value: Any) -> None:
                body = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)  # the caller may have been killed meanwhile

            def do_GET(self) -> None:
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                with owner.lock:
                    self._reply({"result": owner.results.get(query["key"][0])})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                call = Call(
                    body["key"], body["pid"], body["fence"], time.time(), body["retry_safe"]
                )
                with owner.lock:
                    if self.path == "/begin":
                        owner.begun.append(call)
                        self._reply({})
                        return
                    owner.applied.append(call)
                    if not (call.retry_safe and call.key in owner.results):
                        owner.applications[call.key] += 1
                        owner.results.setdefault(
                            call.key, {"key": call.key, "n": len(owner.results) + 1}
                        )
                    self._reply(owner.results[call.key])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def in_flight(self, key: str) -> bool:
        """A call of ``key`` begun by a process still alive and not applied by it since."""
        with self.lock:
            begun = [c for c in self.begun if c.key == key]
            applied = {(c.pid, c.fence) for c in self.applied if c.key == key}
        return any((c.pid, c.fence) not in applied and pid_alive(c.pid) for c in begun)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.02)


def need_tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
            return str(candidate)
        message = f"{name} (PostgreSQL server binaries) is needed for this test"
        if running_in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return found


class PrivateCluster:
    """A PostgreSQL cluster made for one test; it may be restarted and stopped at will."""

    def __init__(self) -> None:
        self.initdb = need_tool("initdb")
        self.pg_ctl = str(Path(self.initdb).parent / "pg_ctl")
        self.folder = Path(tempfile.mkdtemp(prefix="tether-chaos-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # initdb refuses root: run the server as postgres
            shutil.chown(self.folder, "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self._run([self.initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres", "-N"])
        self.options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=200"
        )
        self._ctl("start")

    def _run(self, command: list[str]) -> None:
        done = subprocess.run([*self.as_user, *command], capture_output=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stderr.decode()[-2000:]}")

    def _ctl(self, action: str, mode: str | None = None) -> None:
        command = [self.pg_ctl, "-D", str(self.data), "-w", "-t", "60"]
        command += ["-l", str(self.folder / "server.log"), "-o", self.options, action]
        if mode is not None:
            command += ["-m", mode]
        self._run(command)

    def url(self, dbname: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def restart(self, mode: str) -> None:
        self._ctl("restart", mode)

    def close(self) -> None:
        try:
            self._ctl("stop", "immediate")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class Workers:
    """``tether worker`` processes; replacements for killed ones get new owners."""

    url: str
    service_url: str
    logs: Path
    lease_s: float
    extra_env: dict[str, str] = field(default_factory=dict)
    live: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    killed: list[str] = field(default_factory=list)
    exited: list[tuple[str, int | None]] = field(default_factory=list)
    started: int = 0

    def start(self, *, until_idle: bool = False) -> str:
        owner = f"worker-{self.started}"
        self.started += 1
        env = {
            **os.environ,
            "TETHER_URL": self.url,
            "CHAOS_SERVICE_URL": self.service_url,
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
            **self.extra_env,
        }
        command = [
            sys.executable,
            "-m",
            "tether",
            "worker",
            "--workflows",
            "tests.e2e.chaos_workflow:registry",
            "--lease",
            str(self.lease_s),
            "--poll",
            "0.05",
            "--owner",
            owner,
        ]
        if until_idle:
            command.append("--until-idle")
        process = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        # The test process writes the log: a worker's own writes may be made to fail.
        threading.Thread(
            target=drain, args=(process, self.logs / f"{owner}.log"), daemon=True
        ).start()
        self.live[owner] = process
        return owner

    def check(self) -> None:
        """Note workers that exited without being killed."""
        for owner, process in list(self.live.items()):
            if process.poll() is not None:
                self.exited.append((owner, process.returncode))
                del self.live[owner]

    def kill(self, owner: str) -> None:
        process = self.live.pop(owner)
        process.send_signal(signal.SIGKILL)
        process.wait()
        self.killed.append(owner)

    def stop_all(self) -> None:
        self.check()
        for process in self.live.values():
            process.send_signal(signal.SIGTERM)
        for owner, process in self.live.items():
            try:
                code = process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                code = process.wait()
            if code != 0:
                self.exited.append((owner, code))
        self.live.clear()

    def log_tail(self, owner: str, chars: int = 3000) -> str:
        return (self.logs / f"{owner}.log").read_text(errors="replace")[-chars:]


def drain(process: subprocess.Popen[bytes], log: Path) -> None:
    assert process.stdout is not None
    with log.open("wb") as out:
        for line in process.stdout:
            out.write(line)
            out.flush()


def hold_sqlite_lock(path: Path, seconds: float) -> None:
    """A writer holding SQLite's write lock for ``seconds`` (past the workers' timeout)."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    try:
        conn.execute("BEGIN IMMEDIATE")
        time.sleep(seconds)  # the fault's duration
        conn.execute("ROLLBACK")
    finally:
        conn.close()


def limit_file_size(pids: list[int], limit: int | None) -> None:
    """Writes past ``limit`` bytes fail with EFBIG in these processes (as on a full disk);
    ``None`` lifts the limit. Python ignores SIGXFSZ, so the write fails instead of
    killing the process."""
    import resource

    for pid in pids:
        try:
            _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard if limit is None else limit, hard))
        except ProcessLookupError:
            continue


def set_read_only(path: Path, read_only: bool) -> None:
    """Make the database file read-only (permissions; for root, which ignores them, the
    immutable attribute) or writable again."""
    if os.geteuid() == 0:
        flag = "+i" if read_only else "-i"
        done = subprocess.run(["chattr", flag, str(path)], capture_output=True)
        if done.returncode != 0:
            raise RuntimeError(f"chattr {flag} failed: {done.stderr.decode()}")
        return
    path.chmod(0o444 if read_only else 0o644)
