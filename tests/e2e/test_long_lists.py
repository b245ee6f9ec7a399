"""Lists longer than a page, on each backend: the audit trail and the recall log newest
first, the approvals inbox oldest first, each read whole through its cursor over HTTP, in
the console (following its "older"/"next" links) and, for the inbox, with `tether
approvals ls`. Every item comes exactly once and in order, even where many were made in
the same instant.

The rows are written straight through the storage layer in one transaction each (a real
approval request copied 1,100 times; audit entries through the chain's own writer), so a
long list costs a fraction of a second to make.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from html import unescape

import pytest
from fastapi.testclient import TestClient

from tests.conformance.test_permission_map import REGISTRY, Ask
from tests.e2e.test_cli import TETHER, TIMEOUT_S
from tests.support import TestDatabase
from tether import FakeClock, Tether
from tether.server import create_app
from tether.storage.rows import MemoryRecallRow

PENDING = 1_100
"""Open approval requests: more than the 1,000 the inbox once stopped at."""
RUN_ENTRIES = 130
"""Audit entries about one run: more than a console page (100) and an API page (50)."""
RECALLS = 130
"""Recalls by one principal that returned one memory."""
MEMORY = "0190aaaa-0000-7000-8000-000000000001"


@dataclass
class Seeded:
    app: Tether
    client: TestClient
    keys: dict[str, str]
    run_id: str
    approvals: list[str]
    """The open requests' ids, oldest first."""
    run_entries: list[int]
    """The sequence numbers of the entries about ``run_id``, newest first."""
    sue_entries: list[int]
    """The sequence numbers of the entries by sue, newest first."""
    recalls: list[str]
    """The recall ids of sue's recalls, newest first."""

    def get(self, who: str, path: str, **params: object) -> dict[str, object]:
        headers = {"Authorization": f"Bearer {self.keys[who]}"}
        answer = self.client.get(f"/api/v1{path}", headers=headers, params=params)
        assert answer.status_code == 200, answer.text
        found: dict[str, object] = answer.json()
        return found

    def all_pages(self, who: str, path: str, key: str, **params: object) -> list[object]:
        """Every item of a list, following ``next_cursor`` to the end."""
        items: list[object] = []
        cursor = None
        while True:
            extra = {"cursor": cursor} if cursor else {}
            page = self.get(who, path, **params, **extra)
            batch = page["items"]
            assert isinstance(batch, list)
            assert len(batch) <= int(str(params.get("limit", 50)))
            items += [item[key] for item in batch]
            cursor = page["next_cursor"]
            if cursor is None:
                return items


@pytest.fixture
def seeded(backend: TestDatabase) -> Iterator[Seeded]:
    clock = FakeClock()
    with Tether.open(backend.settings(), clock=clock) as app:
        app.tenants.create("acme", admin="ann")
        ann = app.tenants.principal("acme", "ann")
        app.tenants.grant(ann, "bot", ["agent"])
        app.tenants.grant(ann, "sue", ["approver"])
        keys = {who: app.api_keys.create(ann, who).secret for who in ("ann", "sue")}
        bot = app.tenants.principal("acme", "bot")
        run = app.runs.start(bot, REGISTRY.get("asking"), Ask(reason="approval"))
        parked = app.executor(REGISTRY, owner="seed").execute("acme", run.run_id)
        template = app.runs.wait(ann, parked.wait_id or "")
        asked_at = [(template.created_at, template.wait_id)]
        with app.storage.transaction("acme") as txn:
            for number in range(PENDING - 1):
                run_id, wait_id = str(uuid.uuid4()), str(uuid.uuid4())
                # three requests share each instant: the cursor must tell them apart
                asked = template.created_at + timedelta(seconds=1 + number // 3)
                txn.insert_run(parked.model_copy(update={"run_id": run_id, "wait_id": wait_id}))
                txn.insert_wait(
                    template.model_copy(
                        update={
                            "run_id": run_id,
                            "wait_id": wait_id,
                            "created_at": asked,
                            "message": f"request {number}",
                        }
                    )
                )
                asked_at.append((asked, wait_id))
            for number in range(RUN_ENTRIES):
                for actor, target in (
                    ("sue", f"run:{run.run_id}"),
                    ("ann", f"memory:{MEMORY}" if number % 2 else "case:C-1"),
                ):
                    app.audit.record_txn(
                        txn,
                        tenant_id="acme",
                        actor_id=actor,
                        action="case.reviewed",
                        target=target,
                        details={"number": number},
                    )
            txn.insert_memory_recalls(
                [
                    MemoryRecallRow(
                        tenant_id="acme",
                        recall_id=str(uuid.uuid4()),
                        at=clock.now() + timedelta(seconds=number // 4),
                        principal_id="sue",
                        query_digest="sha256:" + "0" * 64,
                        scopes='["user:u-1"]',
                        returned=f'["{MEMORY}"]',
                    )
                    for number in range(RECALLS)
                ]
            )
        trail = app.audit.entries(ann, limit=10_000)
        recalls = app.memory.recalls(ann, recalled_by="sue", limit=10_000)
        yield Seeded(
            app=app,
            client=TestClient(create_app(app, workflows=REGISTRY)),
            keys=keys,
            run_id=run.run_id,
            approvals=[wait_id for _, wait_id in sorted(asked_at)],
            run_entries=[e.seq for e in reversed(trail) if e.target == f"run:{run.run_id}"],
            sue_entries=[e.seq for e in reversed(trail) if e.actor_id == "sue"],
            recalls=[recall.recall_id for recall in recalls],
        )


def test_the_api_pages_through_every_pending_approval_oldest_first(seeded: Seeded) -> None:
    listed = seeded.all_pages("sue", "/approvals", "wait_id", limit=500)
    waits = seeded.all_pages("sue", "/waits", "wait_id", limit=500, kind="approval")

    assert len(listed) == PENDING > 1000
    assert listed == waits == seeded.approvals


def test_the_api_lists_the_trail_and_the_recall_log_newest_first(seeded: Seeded) -> None:
    run = seeded.all_pages("ann", "/audit", "seq", target=f"run:{seeded.run_id}")
    sue = seeded.all_pages("ann", "/audit", "seq", actor="sue", limit=100)
    whole = seeded.all_pages("ann", "/audit", "seq", limit=100)
    recalls = seeded.all_pages("ann", "/memory/recalls", "recall_id", recalled_by="sue")
    of_memory = seeded.all_pages("ann", "/memory/recalls", "recall_id", memory_id=MEMORY)

    assert run == seeded.run_entries and len(run) > RUN_ENTRIES
    assert sue == seeded.sue_entries and len(sue) == RUN_ENTRIES
    assert whole == list(range(len(whole), 0, -1)) and len(whole) > 2 * RUN_ENTRIES
    assert set(run) | set(sue) <= set(whole)
    assert recalls == of_memory == seeded.recalls and len(recalls) == RECALLS


def login(seeded: Seeded, who: str) -> None:
    page = seeded.client.get("/console/login")
    token = re.search(r'name="csrf" value="([0-9a-f]{64})"', page.text)
    assert token is not None
    seeded.client.post("/console/login", data={"csrf": token.group(1), "api_key": seeded.keys[who]})


def follow(seeded: Seeded, path: str, item: str, link: str) -> list[list[str]]:
    """The items (``item``: a regex with one group) of each page of a console list,
    following its link to the next page (id ``more-<link>``) to the end."""
    pages = []
    while True:
        answer = seeded.client.get(path)
        assert answer.status_code == 200, answer.text
        pages.append(re.findall(item, answer.text))
        more = re.search(rf'<a class="more" id="more-{link}" href="(/console/[^"]+)"', answer.text)
        if more is None:
            return pages
        path = unescape(more.group(1))


def test_the_console_inbox_shows_every_pending_approval_a_page_at_a_time(seeded: Seeded) -> None:
    login(seeded, "sue")
    pages = follow(seeded, "/console/approvals", r'id="approval-([0-9a-f-]{36})"', "approvals")

    assert [len(page) for page in pages] == [50] * (PENDING // 50)
    assert [wait_id for page in pages for wait_id in page] == seeded.approvals


def test_the_console_trail_and_recalls_go_back_page_by_page_newest_first(seeded: Seeded) -> None:
    login(seeded, "ann")
    entry = r'<tr class="entry" data-action="[^"]*"><td>(\d+)</td>'
    run = follow(seeded, f"/console/audit?run={seeded.run_id}", entry, "entries")
    sue = follow(seeded, "/console/audit?principal=sue", entry, "entries")
    recall = r'<tr class="recall" data-recall="([0-9a-f-]{36})">'
    recalls = follow(seeded, f"/console/audit?memory={MEMORY}", recall, "recalls")
    by_sue = follow(seeded, "/console/audit?principal=sue", recall, "recalls")
    later = seeded.client.get(f"/console/audit?principal=sue&before={seeded.sue_entries[99]}")

    assert [len(page) for page in run] == [100, len(seeded.run_entries) - 100]
    assert [int(seq) for page in run for seq in page] == seeded.run_entries
    assert [int(seq) for page in sue for seq in page] == seeded.sue_entries
    assert [len(page) for page in recalls] == [100, RECALLS - 100]
    assert [recall for page in recalls for recall in page] == seeded.recalls
    assert [recall for page in by_sue for recall in page] == seeded.recalls
    assert 'id="first-entries"' in later.text and 'id="more-entries"' not in later.text


def test_tether_approvals_ls_lists_every_pending_approval(
    seeded: Seeded, backend: TestDatabase
) -> None:
    def approvals_ls(*args: str) -> list[str]:
        done = subprocess.run(
            [*TETHER, "approvals", "ls", "-t", "acme", "--as", "sue", "--json", *args],
            env={**_environment(), "TETHER_URL": backend.url},
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        assert done.returncode == 0, done.stderr
        return [wait["wait_id"] for wait in json.loads(done.stdout)]

    everything = approvals_ls()
    first = approvals_ls("--limit", "700")
    rest = approvals_ls("--after", first[-1])

    assert everything == seeded.approvals and len(everything) == PENDING
    assert first + rest == everything


def _environment() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("TETHER_") or key == "TETHER_KEY_FILE"
    }
