"""Cost of one PostgreSQL tenant transaction: BEGIN, set the tenant context, one read, COMMIT.

``python -m bench.tenant_context [--postgres-url URL] [--transactions N] [--rounds N]``

It creates a scratch database ``tether_bench_ctx_<random>``, migrates it, makes a tenant,
then times ``storage.transaction(tenant)`` around one ``get_principal`` (a read through
row-level security) and, separately, one read of 200 rows (the policy on a whole scan).
Prints the median and p95 in microseconds per transaction over ``--rounds`` rounds. Run
it on two checkouts (e.g. before and after a change) to compare.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import time
from collections.abc import Callable

import psycopg

from tether import Tether
from tether.config import load_settings


def _timed(action: Callable[[], None], count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        action()
    return (time.perf_counter() - start) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--transactions", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    name = f"tether_bench_ctx_{secrets.token_hex(3)}"
    base = args.postgres_url.rsplit("/", 1)[0]
    with psycopg.connect(args.postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    os.environ.setdefault("TETHER_SECRET_KEY", secrets.token_hex(32))
    try:
        settings = load_settings(url=f"{base}/{name}", pg_pool_min_size=1, pg_pool_max_size=1)
        app, _ = Tether.migrate(settings)
        with app:
            app.tenants.create("acme", admin="alice")
            admin_principal = app.tenants.principal("acme", "alice")
            for number in range(199):
                app.tenants.grant(admin_principal, f"user-{number:03d}", ["viewer"])

            def one_read() -> None:
                with app.storage.transaction("acme", write=False) as txn:
                    txn.get_principal("acme", "alice")

            def scan() -> None:
                with app.storage.transaction("acme", write=False) as txn:
                    txn.list_principals("acme")

            for label, action in (
                ("BEGIN + context + 1 row + COMMIT", one_read),
                ("BEGIN + context + 200 rows + COMMIT", scan),
            ):
                _timed(action, args.transactions // 5)
                rounds = [_timed(action, args.transactions) for _ in range(args.rounds)]
                print(
                    f"{label}: median {statistics.median(rounds):.1f} us/txn, "
                    f"p95 {sorted(rounds)[int(0.95 * (len(rounds) - 1))]:.1f} us/txn "
                    f"({args.rounds} rounds of {args.transactions})"
                )
    finally:
        with psycopg.connect(args.postgres_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
