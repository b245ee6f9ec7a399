"""Workflows: named nodes over a pydantic state, registered under a name and a version."""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from tether.errors import InvalidInput, NotFound
from tether.runs.models import END
from tether.validation import check_value

S = TypeVar("S", bound=BaseModel)
NodeFn = Callable[..., Any]


@dataclass(frozen=True)
class RetryPolicy:
    """How often a node that raises is tried again, and how long to wait in between."""

    max_attempts: int = 1
    backoff_s: float = 1.0
    multiplier: float = 2.0
    max_backoff_s: float = 300.0
    jitter: float = 0.1

    def delay_s(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` starts at 1)."""
        base = min(self.max_backoff_s, self.backoff_s * self.multiplier ** max(0, attempt - 1))
        spread = base * self.jitter
        return max(0.0, base + (rng or random.Random()).uniform(-spread, spread))


@dataclass(frozen=True)
class Node:
    name: str
    fn: NodeFn
    retry: RetryPolicy
    is_async: bool


@dataclass
class Workflow(Generic[S]):
    """A named, versioned graph of nodes over the state model ``state``.

    A node is ``def node(ctx, state) -> str`` (or ``async def``): it may change ``state``
    in place and returns the name of the next node, or ``END``. A run stays on the version
    it started with; register old versions until their runs finish. ``state_version``
    and ``upgrades`` (``{old_version: fn(dict) -> dict}``) carry a waiting run's stored
    state across a change of the state model.
    """

    name: str
    state: type[S]
    version: int = 1
    state_version: int = 1
    upgrades: Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)
    max_steps: int = 1000
    max_running: int | None = None
    """At most this many runs of the workflow (any version, any tenant) run at once."""
    checkpoint_sla: timedelta | None = None
    """A queued or running run with no checkpoint for longer than this is stuck (see
    ``tether runs stuck``); ``None``: no such promise."""
    nodes: dict[str, Node] = field(default_factory=dict)
    start: str | None = None
    _explicit_start: bool = False

    def __post_init__(self) -> None:
        if self.version < 1:
            raise InvalidInput(
                f"workflow {self.name!r}: version must be at least 1 (0 is the runs of "
                "LangGraph threads, which no worker claims)"
            )
        if self.checkpoint_sla is not None and self.checkpoint_sla <= timedelta(0):
            raise InvalidInput(f"workflow {self.name!r}: checkpoint_sla must be positive")
        if self.max_running is not None and self.max_running < 1:
            raise InvalidInput(
                f"workflow {self.name!r}: max_running must be at least 1 (or None for no limit)"
            )

    def node(
        self,
        fn: NodeFn | None = None,
        *,
        name: str | None = None,
        start: bool = False,
        retry: RetryPolicy | None = None,
    ) -> Any:
        """Register a node; usable as ``@wf.node`` or ``@wf.node(start=True, retry=...)``."""

        def register(func: NodeFn) -> NodeFn:
            node_name = name or func.__name__
            if node_name in self.nodes or node_name == END:
                raise InvalidInput(f"workflow {self.name!r} already has a node {node_name!r}")
            self.nodes[node_name] = Node(
                node_name, func, retry or RetryPolicy(), inspect.iscoroutinefunction(func)
            )
            if start:
                if self._explicit_start:
                    raise InvalidInput(f"workflow {self.name!r} has two start nodes")
                self._explicit_start = True
                self.start = node_name
            elif self.start is None:
                self.start = node_name
            return func

        return register(fn) if fn is not None else register

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"

    def validate_state(self, data: BaseModel | Mapping[str, Any]) -> S:
        check_value("state", data)
        try:
            if isinstance(data, BaseModel):
                data = data.model_dump(mode="json")
            return self.state.model_validate(dict(data))
        except ValidationError as exc:
            raise InvalidInput(f"invalid state for workflow {self.key}: {exc}") from None

    def load_state(self, data: dict[str, Any], stored_version: int) -> S:
        """Bring stored state up to ``state_version`` and validate it."""
        version = stored_version
        while version < self.state_version:
            upgrade = self.upgrades.get(version)
            if upgrade is None:
                raise InvalidInput(
                    f"workflow {self.key} has no upgrade from state version {version}"
                )
            data = upgrade(data)
            version += 1
        return self.validate_state(data)

    def run_node(self, name: str) -> Node:
        try:
            return self.nodes[name]
        except KeyError:
            raise InvalidInput(f"workflow {self.key} has no node {name!r}") from None


class WorkflowRegistry:
    """The workflows (every version still in use) a process can run."""

    def __init__(self, *workflows: Workflow[Any]) -> None:
        self._workflows: dict[tuple[str, int], Workflow[Any]] = {}
        for workflow in workflows:
            self.register(workflow)

    def register(self, workflow: Workflow[Any]) -> Workflow[Any]:
        if not workflow.nodes or workflow.start is None:
            raise InvalidInput(f"workflow {workflow.key} has no nodes")
        existing = self._workflows.get((workflow.name, workflow.version))
        if existing is not None and existing is not workflow:
            raise InvalidInput(f"workflow {workflow.key} is already registered")
        self._workflows[(workflow.name, workflow.version)] = workflow
        return workflow

    def get(self, name: str, version: int | None = None) -> Workflow[Any]:
        """The given version, or the newest registered one."""
        if version is None:
            versions = [v for (n, v) in self._workflows if n == name]
            if not versions:
                raise NotFound(f"no workflow named {name!r} is registered")
            version = max(versions)
        workflow = self._workflows.get((name, version))
        if workflow is None:
            raise NotFound(
                f"workflow {name}@{version} is not registered in this process; keep old "
                "versions registered until their runs finish"
            )
        return workflow

    @property
    def keys(self) -> list[str]:
        return sorted(f"{name}@{version}" for name, version in self._workflows)

    @property
    def checkpoint_slas(self) -> dict[str, timedelta]:
        """``checkpoint_sla`` by workflow name (the shortest, if versions differ)."""
        slas: dict[str, timedelta] = {}
        for (name, _), workflow in self._workflows.items():
            if workflow.checkpoint_sla is not None:
                slas[name] = min(slas.get(name, workflow.checkpoint_sla), workflow.checkpoint_sla)
        return slas

    @property
    def limits(self) -> dict[str, int]:
        """``max_running`` by workflow name (the smallest, if versions differ)."""
        limits: dict[str, int] = {}
        for (name, _), workflow in self._workflows.items():
            if workflow.max_running is not None:
                limits[name] = min(limits.get(name, workflow.max_running), workflow.max_running)
        return limits
