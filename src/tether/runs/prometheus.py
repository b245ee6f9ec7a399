"""The Prometheus view of :mod:`tether.runs.metrics` (needs the ``metrics`` extra).

:func:`metrics_registry` builds a registry whose collector reads the figures at each
scrape; ``tether worker --metrics-port`` serves it, and any HTTP server can serve the same
registry (``prometheus_client.generate_latest``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from tether.clock import Clock
from tether.errors import TetherError
from tether.redaction import get_logger
from tether.runs.metrics import read_figures, worker_counts
from tether.runs.models import RunStatus
from tether.runs.worker import Worker
from tether.storage.base import Storage

log = get_logger("tether.metrics")

_WORKER_COUNTERS = (
    ("claims", "tether_worker_claims", "Runs claimed by the worker."),
    (
        "lease_takeovers",
        "tether_worker_lease_takeovers",
        "Claims that took a run over from a worker whose lease ran out.",
    ),
    ("heartbeats", "tether_worker_heartbeats", "Lease renewals written by the heartbeat."),
    (
        "storage_retries",
        "tether_worker_storage_retries",
        "Storage faults the worker survived and retried after.",
    ),
    ("retries", "tether_worker_retries", "Node failures that scheduled another attempt."),
)


class RunCollector(Collector):
    """Reads the database-wide figures at each scrape, with the counts of ``workers``."""

    def __init__(self, storage: Storage, clock: Clock, workers: Sequence[Worker] = ()) -> None:
        self.storage = storage
        self.clock = clock
        self.workers = list(workers)

    def collect(self) -> Iterator[Any]:
        yield from self._worker_series()
        try:
            figures = read_figures(self.storage, self.clock)
        except TetherError as exc:
            log.warning("metrics: cannot read the run figures (%s)", exc.code)
            up = GaugeMetricFamily("tether_metrics_database_up", "Whether the figures were read.")
            up.add_metric([], 0)
            yield up
            return
        up = GaugeMetricFamily("tether_metrics_database_up", "Whether the figures were read.")
        up.add_metric([], 1)
        yield up
        runs = GaugeMetricFamily("tether_runs", "Runs by status.", labels=["status"])
        for status in RunStatus:
            runs.add_metric([status.value], figures.runs_by_status.get(status.value, 0))
        yield runs
        now = self.clock.now()
        yield _age(
            "tether_runs_oldest_running_age_seconds",
            "Age of the oldest running run (0 if none runs).",
            figures.running_since,
            now,
        )
        yield _age(
            "tether_runs_longest_waiting_seconds",
            "How long the run waiting longest has waited (0 if none waits).",
            figures.waiting_since,
            now,
        )
        yield _gauge(
            "tether_runs_queue_depth", "Runs a worker could claim now.", figures.queue_depth
        )
        yield _gauge(
            "tether_approvals_pending", "Approval requests open.", figures.approvals_pending
        )
        yield _gauge(
            "tether_approvals_expiring",
            "Open approval requests that expire within the hour.",
            figures.approvals_expiring,
        )
        failures = GaugeMetricFamily(
            "tether_runs_failed_by_node", "Failed runs by the node they failed in.", labels=["node"]
        )
        for node, count in sorted(figures.failures_by_node.items()):
            failures.add_metric([node], count)
        yield failures

    def _worker_series(self) -> Iterator[Any]:
        counts = worker_counts(self.workers)
        for field, name, help_text in _WORKER_COUNTERS:
            family = CounterMetricFamily(name, help_text, labels=["worker"])
            for one in counts:
                family.add_metric([one.owner], getattr(one, field))
            yield family


def _gauge(name: str, help_text: str, value: float) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, help_text)
    family.add_metric([], value)
    return family


def _age(name: str, help_text: str, since: datetime | None, now: datetime) -> GaugeMetricFamily:
    return _gauge(name, help_text, 0.0 if since is None else (now - since).total_seconds())


def metrics_registry(
    storage: Storage, clock: Clock, workers: Sequence[Worker] = ()
) -> CollectorRegistry:
    """A registry holding the run figures and the counts of ``workers``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RunCollector(storage, clock, workers))
    return registry


def serve_metrics(registry: CollectorRegistry, port: int, addr: str = "127.0.0.1") -> Any:
    """Serve ``registry`` at ``http://addr:port/metrics`` from a daemon thread; the
    server, to ``shutdown()`` when done."""
    server, _thread = start_http_server(port, addr=addr, registry=registry)
    return server
