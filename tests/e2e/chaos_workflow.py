"""Workflows for the chaos and pause tests, run by real ``tether worker`` processes.

Every effect calls a counting service over HTTP (``CHAOS_SERVICE_URL``, served by the
test process, outside Tether's transactions) in two calls: ``/begin`` logs that a call
started, then, ``CHAOS_EFFECT_S`` later, ``/apply`` applies it. A worker killed or paused
between the two leaves a call begun and not (yet) applied. Effects come in three kinds:
retry-safe (the service applies a key once), reconciled (not retry-safe; the service can
say whether a key was applied) and plain (not retry-safe; an unknown outcome needs a
person).
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
import urllib.request
from typing import Any

from pydantic import BaseModel

from tether.runs import END, NOT_APPLIED, RunContext, Workflow, WorkflowRegistry

NODES = 6
KINDS = ("retry_safe", "reconcile", "plain")


class Progress(BaseModel):
    done: list[int] = []


def service(path: str, body: dict[str, Any] | None = None) -> Any:
    url = os.environ["CHAOS_SERVICE_URL"] + path
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def lookup(key: str) -> Any:
    found = service("/lookup?" + urllib.parse.urlencode({"key": key}))
    return NOT_APPLIED if found["result"] is None else found["result"]


def keyed_effect(ctx: RunContext, name: str, kind: str) -> Any:
    def apply(key: str) -> Any:
        call = {"key": key, "fence": ctx.fencing_token, "pid": os.getpid()}
        service("/begin", {**call, "retry_safe": kind == "retry_safe"})
        time.sleep(float(os.environ.get("CHAOS_EFFECT_S", "0.02")))
        return service("/apply", {**call, "retry_safe": kind == "retry_safe"})

    options: dict[str, Any] = {
        "retry_safe": {"retry_safe": True},
        "reconcile": {"reconcile": lookup},
        "plain": {},
    }[kind]
    return ctx.effect(name, apply, request={"name": name}, **options)


chaos = Workflow("chaos", state=Progress, max_steps=100)


def make_node(index: int) -> None:
    def node(ctx: RunContext, state: Progress) -> str:
        keyed_effect(ctx, f"effect_{index}", KINDS[index % len(KINDS)])
        state.done.append(index)
        return f"n{index + 1}" if index + 1 < NODES else END

    chaos.node(node, name=f"n{index}", start=index == 0)


for _index in range(NODES):
    make_node(_index)


def pause_workflow(kind: str) -> Workflow[Progress]:
    """One node, one effect of ``kind``: what a paused worker leaves in flight."""
    wf: Workflow[Progress] = Workflow(f"pause_{kind}", state=Progress)

    @wf.node(start=True)
    def call(ctx: RunContext, state: Progress) -> str:
        keyed_effect(ctx, "charge_card", kind)
        state.done.append(0)
        return END

    return wf


registry = WorkflowRegistry(chaos, *(pause_workflow(kind) for kind in KINDS))
