"""A worker process: claim runnable runs and execute them until told to stop."""

from __future__ import annotations

import importlib
import sys
import threading
from pathlib import Path
from typing import Any

from tether.errors import InvalidInput
from tether.redaction import get_logger
from tether.runs.engine import Executor
from tether.runs.service import Runs
from tether.runs.workflow import Workflow, WorkflowRegistry

log = get_logger("tether.worker")


def load_registry(spec: str) -> WorkflowRegistry:
    """Import ``module:attribute`` naming a registry, a workflow, or a function returning one.

    The current folder is importable, so ``examples.case_review.workflow:registry`` works
    from the repository root.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise InvalidInput(f"--workflows {spec!r}: use module.path:attribute")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InvalidInput(f"cannot import {module_name!r} for --workflows: {exc}") from exc
    target: Any = getattr(module, attribute, None)
    if target is None:
        raise InvalidInput(f"module {module_name!r} has no attribute {attribute!r}")
    if callable(target) and not isinstance(target, (WorkflowRegistry, Workflow)):
        target = target()
    if isinstance(target, Workflow):
        return WorkflowRegistry(target)
    if isinstance(target, WorkflowRegistry):
        return target
    raise InvalidInput(f"{spec} is neither a WorkflowRegistry nor a Workflow")


class Worker:
    """Loops over :meth:`Executor.execute_next`; polls when there is nothing to do.

    When idle it also expires waits past their expiry (``runs.expire_waits``), so an
    approval nobody decided in time sends its run down the rejection path.
    """

    def __init__(self, executor: Executor, runs: Runs, *, poll_s: float = 0.5) -> None:
        self.executor = executor
        self.runs = runs
        self.poll_s = poll_s
        self.stop = threading.Event()

    def run(self, *, until_idle: bool = False, max_runs: int | None = None) -> int:
        """Execute runs until ``stop`` is set (or, with ``until_idle``, none is runnable).

        Returns how many claims were executed.
        """
        done = 0
        while not self.stop.is_set():
            run = self.executor.execute_next()
            if run is None and self.runs.expire_waits():
                continue
            if run is None:
                if until_idle:
                    break
                self.stop.wait(self.poll_s)
                continue
            done += 1
            log.info("run %s: %s", run.run_id, run.status.value)
            if max_runs is not None and done >= max_runs:
                break
        return done
