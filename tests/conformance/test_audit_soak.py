"""Soak: many writers on several tenants for a while; every chain stays whole (make test-long)."""

from __future__ import annotations

import threading

import pytest

from tests.support import TestDatabase, record

pytestmark = pytest.mark.slow

WRITERS = 8
TRANSACTIONS = 150
TENANTS = ("acme", "globex", "initech")


def test_many_writers_on_many_tenants_keep_every_chain_whole(backend: TestDatabase) -> None:
    with backend.open() as app:
        for tenant in TENANTS:
            app.tenants.create(tenant, admin="root")
    errors: list[BaseException] = []

    def write(number: int) -> None:
        try:
            with backend.open() as writer:
                for step in range(TRANSACTIONS):
                    record(writer, TENANTS[(number + step) % len(TENANTS)], 2, actor="root")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(number,)) for number in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    with backend.open() as app:
        reports = [app.audit.verify(tenant) for tenant in TENANTS]
        total = sum(app.tenants.get(tenant).audit_entries for tenant in TENANTS)
    assert [report.problem for report in reports] == [None] * len(TENANTS)
    assert total == len(TENANTS) * 2 + WRITERS * TRANSACTIONS * 2
