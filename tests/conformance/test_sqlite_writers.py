"""Writers of one SQLite file in one process take turns (``storage/sqlite/writers.py``).

Threads that write one file wait on a lock of this process, which hands the file over at
the commit before theirs, instead of sleeping in SQLite's busy handler, where a writer can
lose every race to later ones and starve past the busy timeout. Every storage of the
process that opens the file shares its lock; a forked child starts with its own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether import Tether
from tether.config import load_settings
from tether.storage.sqlite.writers import writer_lock

WRITERS = 8
WRITES = 25


@pytest.fixture
def database(tmp_path: Path) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'tether.db'}"
    app, _ = Tether.migrate(url=url)
    app.close()
    yield url


def test_every_storage_of_a_file_shares_one_lock(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    same = writer_lock(tmp_path / "sub" / ".." / "a.db")
    assert writer_lock(tmp_path / "a.db") is same
    assert writer_lock(tmp_path / "b.db") is not same


def test_many_threads_and_two_storages_writing_one_file_all_commit(database: str) -> None:
    """Eight threads over two storages of one file, each a tenant's 25 audited grants,
    with a busy timeout of three seconds: every write commits and the trails verify."""
    settings = load_settings(url=database, sqlite_busy_timeout_ms=3000)
    apps = [Tether.open(settings) for _ in range(2)]
    try:
        for number in range(WRITERS):
            apps[0].tenants.create(f"t{number}", admin="admin")
        ready = threading.Barrier(WRITERS)
        errors: list[BaseException] = []

        def writer(number: int) -> None:
            app = apps[number % 2]
            admin = app.tenants.principal(f"t{number}", "admin")
            ready.wait()
            for index in range(WRITES):
                try:
                    app.tenants.grant(admin, f"reader-{index}", ["viewer"])
                except Exception as exc:
                    errors.append(exc)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert errors == []
        for number in range(WRITERS):
            assert apps[1].audit.verify(f"t{number}").ok
    finally:
        for app in apps:
            app.close()


def test_a_child_forked_while_a_thread_holds_the_lock_gets_a_free_one(tmp_path: Path) -> None:
    """A lock held by another thread at the fork would never be released in the child;
    the child starts with its own (the child touches no database: SQLite itself must not
    be used across a fork)."""
    path = tmp_path / "a.db"
    lock = writer_lock(path)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(30)
    try:
        pid = os.fork()
        if pid == 0:  # the child
            os._exit(0 if writer_lock(path).acquire(timeout=5) else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        release.set()
        holder.join(30)
    assert os.waitstatus_to_exitcode(status) == 0
