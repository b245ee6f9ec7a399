"""Cost of the signed tenant context on PostgreSQL, per transaction.

``python -m bench.tenant_context [--postgres-url URL] [--transactions N] [--rounds N]``

Two measurements on a scratch database ``tether_bench_ctx_<random>`` (dropped at the end):

1. **Through Tether.** The database is migrated and given a tenant with 200 principals;
   then ``storage.transaction(tenant)`` is timed around one ``get_principal`` (one row
   through row-level security) and around ``list_principals`` (200 rows). Run it on two
   checkouts to compare whole code paths.
2. **Signed against unsigned, side by side.** Two copies of one table (200 rows for each
   of two tenants), one under the policy this code uses,
   ``tenant_id = (SELECT tether_tenant())`` with the signed context entered once per
   transaction (``tether_enter``, core 0003), the other under the
   policy used before it, ``tenant_id = current_setting('tether.tenant_id', true)`` with
   the tenant set alone. The same connection runs BEGIN, sets the context, runs one query,
   COMMITs, alternating between the two in rounds, so load on the machine hits both alike.

An older checkout (no signed context) runs the first part only. Prints the median over
``--rounds`` rounds of ``--transactions`` transactions, in microseconds per transaction.
"""

from __future__ import annotations

import argparse
import functools
import secrets
import statistics
import time
from collections.abc import Callable

import psycopg

from bench._harness import bench_settings
from tether import Tether

_OLD_POLICY = "current_setting('tether.tenant_id', true)"
_NEW_POLICY = "(SELECT tether_tenant())"


def _timed(action: Callable[[], None], count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        action()
    return (time.perf_counter() - start) / count * 1e6


def _through_tether(app: Tether, transactions: int, rounds: int) -> None:
    app.tenants.create("acme", admin="alice")
    admin = app.tenants.principal("acme", "alice")
    for number in range(199):
        app.tenants.grant(admin, f"user-{number:03d}", ["viewer"])

    def one_row() -> None:
        with app.storage.transaction("acme", write=False) as txn:
            txn.get_principal("acme", "alice")

    def all_rows() -> None:
        with app.storage.transaction("acme", write=False) as txn:
            txn.list_principals("acme")

    for label, action in (("1 row", one_row), ("200 rows", all_rows)):
        _timed(action, transactions // 5)
        medians = [_timed(action, transactions) for _ in range(rounds)]
        print(f"through Tether, {label}: median {statistics.median(medians):.1f} us/txn")


def _side_by_side(url: str, app: Tether, transactions: int, rounds: int) -> None:
    from tether.keys import TENANT_CONTEXT
    from tether.storage.postgres.backend import sign_tenant

    key = app.keyring.purpose_key(TENANT_CONTEXT)
    with psycopg.connect(url, autocommit=True) as setup:
        for table, policy in (("ctx_unsigned", _OLD_POLICY), ("ctx_signed", _NEW_POLICY)):
            setup.execute(
                f"CREATE TABLE {table} (tenant_id text, id int, v text, "
                "PRIMARY KEY (tenant_id, id))"
            )
            setup.execute(
                f"INSERT INTO {table} SELECT t, g, 'x' FROM generate_series(1, 200) g, "
                "unnest(ARRAY['a', 'b']) t"
            )
            setup.execute(f"GRANT SELECT ON {table} TO tether_app")
            setup.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
            setup.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
            setup.execute(
                f"CREATE POLICY tenant_isolation ON {table} TO tether_app "
                f"USING (tenant_id = {policy})"
            )
    with psycopg.connect(url, autocommit=True) as conn:
        pid = conn.info.backend_pid

        def unsigned(query: str) -> None:
            with conn.transaction():
                conn.execute(
                    "SELECT set_config('role', 'tether_app', true), "
                    "set_config('tether.tenant_id', %s, true)",
                    ("a",),
                )
                conn.execute(query.format(table="ctx_unsigned")).fetchall()

        conn.execute("SELECT tether_session_start()")

        def signed(query: str) -> None:
            nonce, signature = sign_tenant(key, "a", pid)
            with conn.transaction():
                conn.execute(
                    "SELECT set_config('role', 'tether_app', true), tether_enter(%s, %s, %s)",
                    ("a", nonce, signature),
                )
                conn.execute(query.format(table="ctx_signed")).fetchall()

        queries = {
            "1 row": "SELECT v FROM {table} WHERE tenant_id = 'a' AND id = 7",
            "200 rows": "SELECT v FROM {table}",
        }
        for label, query in queries.items():
            times: dict[str, list[float]] = {"unsigned": [], "signed": []}
            for _ in range(rounds):
                for name, run in (("unsigned", unsigned), ("signed", signed)):
                    times[name].append(_timed(functools.partial(run, query), transactions))
            before, after = (statistics.median(times[n]) for n in ("unsigned", "signed"))
            print(
                f"side by side, {label}: unsigned {before:.1f}, signed {after:.1f} us/txn "
                f"(difference {after - before:+.1f})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--transactions", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    name = f"tether_bench_ctx_{secrets.token_hex(3)}"
    url = f"{args.postgres_url.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(args.postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        settings = bench_settings(
            url,
            pg_pool_min_size=1,
            pg_pool_max_size=1,
        )
        app, _ = Tether.migrate(settings)
        with app:
            _through_tether(app, args.transactions, args.rounds)
            if hasattr(app, "keyring"):
                _side_by_side(url, app, args.transactions, args.rounds)
            else:
                print("side by side: skipped (this checkout has no signed tenant context)")
    finally:
        with psycopg.connect(args.postgres_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
