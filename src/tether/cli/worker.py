"""``tether worker``: execute runnable runs until stopped."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from tether.app import Tether
from tether.cli._common import (
    UrlOption,
    WorkflowsOption,
    err_console,
    reporting,
    say_database,
)
from tether.config import Settings, load_settings
from tether.errors import InvalidInput, StorageUnavailable
from tether.redaction import get_logger
from tether.runs.engine import default_owner
from tether.runs.worker import MAX_BACKOFF_S, Backoff, Worker, load_registry, run_workers

log = get_logger("tether.worker")


def worker(
    workflows: WorkflowsOption,
    until_idle: Annotated[
        bool, typer.Option("--until-idle", help="Exit when no run is runnable.")
    ] = False,
    lease: Annotated[
        float,
        typer.Option(min=0.1, help="Lease seconds; another worker may take over a run after it."),
    ] = 60.0,
    poll: Annotated[
        float,
        typer.Option(
            min=0.01,
            help="Most seconds an idle worker sleeps without a wake-up (the fallback when "
            "one is lost).",
        ),
    ] = 2.0,
    owner: Annotated[
        str | None,
        typer.Option(help="Worker identity, unique among live workers (default host:pid:random)."),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="Runs executed at once by this process, one thread each (their owners end "
            "in /1, /2, ...); the steps they write at the same moment share one commit.",
        ),
    ] = 1,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            help="Serve Prometheus metrics at http://<metrics-host>:PORT/metrics (needs the "
            "'metrics' extra).",
        ),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option(help="Address the metrics endpoint listens on.")
    ] = "127.0.0.1",
    procedures: Annotated[
        Path | None,
        typer.Option(
            envvar="TETHER_PROCEDURES_DIR",
            help="Directory of skills and policies to publish when it changes, for the "
            "--tenant tenants only (needs at least one).",
        ),
    ] = None,
    procedures_tenant: Annotated[
        list[str] | None,
        typer.Option(
            "--tenant",
            help="A tenant the --procedures directory applies to (repeatable); runs of other "
            "tenants only enforce what their admins published.",
        ),
    ] = None,
    url: UrlOption = None,
) -> None:
    """Execute runnable runs of every tenant until stopped (SIGTERM/SIGINT finish the node).

    Idle, it sleeps until storage wakes it (LISTEN/NOTIFY on PostgreSQL; on SQLite, a
    check every few milliseconds for another connection's commit), until the next timer
    is due, or --poll seconds. When idle it also runs each tenant's housekeeping pass when
    due (TETHER_HOUSEKEEPING_INTERVAL_S) and delivers webhooks (the first of the
    --concurrency workers does).

    Storage that cannot be reached, at start or later, makes the worker wait and retry
    rather than exit; it exits on configuration errors (a bad URL or --workflows, a missing
    database, an outdated schema).
    """
    with reporting():
        settings = load_settings(url=url)
        say_database(settings.database.display)
        registry = load_registry(workflows)
        stopping = threading.Event()

        def stop(signum: int, frame: object) -> None:
            stopping.set()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        app = _open_when_available(settings, stopping, Backoff(max_s=min(MAX_BACKOFF_S, lease / 2)))
        if app is None:
            return
        with app:
            base = owner or default_owner()
            loops = []
            for index in range(1, concurrency + 1):
                executor = app.executor(
                    registry,
                    procedures_dir=str(procedures) if procedures else None,
                    procedures_tenants=procedures_tenant or None,
                    lease_s=lease,
                    owner=base if concurrency == 1 else f"{base}/{index}",
                )
                loops.append(
                    Worker(
                        executor,
                        app.runs,
                        poll_s=poll,
                        wakeups=app.storage.wakeups(),
                        # one worker of the process does the idle chores; the rest stay free
                        idle_tasks=app.idle_tasks(executor.owner, registry) if index == 1 else (),
                    )
                )
            for loop in loops:
                loop.stop = stopping
            server = _serve_metrics(app, loops, metrics_host, metrics_port)
            err_console.print(
                f"worker {base} (x{concurrency}): {', '.join(registry.keys)}", highlight=False
            )
            try:
                done = run_workers(loops, until_idle=until_idle)
            finally:
                for loop in loops:
                    if loop.wakeups is not None:
                        loop.wakeups.close()
                if server is not None:
                    server.shutdown()
            faults = sum(loop.storage_faults + loop.executor.storage_faults for loop in loops)
            err_console.print(
                f"worker {base}: executed {done} claims, {faults} storage faults survived",
                highlight=False,
            )


def _serve_metrics(app: Tether, loops: list[Worker], host: str, port: int | None) -> Any:
    """Start the metrics endpoint if a port was given; the server (or ``None``)."""
    if port is None:
        return None
    try:
        from tether.runs.prometheus import metrics_registry, serve_metrics
    except ImportError as exc:
        raise InvalidInput(
            "--metrics-port needs prometheus-client: pip install 'tether[metrics]'"
        ) from exc
    try:
        server = serve_metrics(metrics_registry(app.storage, app.clock, loops), port, host)
    except OSError as exc:
        raise InvalidInput(f"cannot serve metrics on {host}:{port}: {exc}") from exc
    err_console.print(f"metrics at http://{host}:{port}/metrics", highlight=False)
    return server


def _open_when_available(
    settings: Settings, stopping: threading.Event, backoff: Backoff
) -> Tether | None:
    """Open the database, waiting out storage that cannot be reached yet (a server that
    is starting, a locked or read-only file); ``None`` if told to stop meanwhile."""
    while not stopping.is_set():
        try:
            return Tether.open(settings)
        except StorageUnavailable as exc:
            delay = backoff.next_delay()
            log.warning("storage unavailable at start (%s); retrying in %.2fs", exc.code, delay)
            stopping.wait(delay)
    return None
