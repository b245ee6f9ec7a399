"""The demo's console and the real processes it starts: ``tether`` commands and workers."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

console = Console(width=150)
ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = "examples.case_review.workflow:registry"
LEASE_S = 2.0


def tether_cli(*args: str, env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "tether", *args]
    console.print(f"[dim]$ tether {' '.join(args)}[/dim]", highlight=False)
    subprocess.run(command, env=env, cwd=ROOT, check=True)


def start_worker(env: dict[str, str], name: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "tether", "worker", "--workflows", WORKFLOWS]
    command += ["--until-idle", "--lease", str(LEASE_S), "--poll", "0.05", "--owner", name]
    console.print(
        f"[dim]$ tether worker --workflows {WORKFLOWS} --until-idle --owner {name}[/dim]",
        highlight=False,
    )
    return subprocess.Popen(command, env=env, cwd=ROOT)


def wait_for(predicate: Callable[[], object], what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)
