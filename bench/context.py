"""Context building on a long thread: a 10,000-turn thread, an 8,000-token budget.

The thread mixes user and assistant messages, tool calls and tool output (every tenth
observation long enough to be masked), with a stored summary head and a few memories and
constraints in the user's scope. Each timed build does what an agent's loop does: read the
latest summary, walk the turns back from the end only as far as the budget reaches,
recall memories (lexical: the embedder is off, so the figure is the builder's own), plan
with the stored per-turn token counts, assemble, and count the assembled text once with
the default tokenizer. Median and p95 of ``--builds`` builds after two warm-up builds.

    python -m bench.context                          # SQLite, and PostgreSQL if reachable
    python -m bench.context --postgres-url postgresql://postgres@127.0.0.1:5432/test
    python -m bench.context --no-postgres
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._harness import bench_settings, median_ms, p95_ms
from tether import FakeClock, Tether
from tether.context import ContextOptions
from tether.memory import MemoryKind, MemoryProposal, Scope, SourceType
from tether.threads import NewTurn, TurnKind, TurnRole

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 50.0
WORDS = (
    "claim",
    "invoice",
    "bicycle",
    "frame",
    "repair",
    "quote",
    "supervisor",
    "approval",
    "refund",
    "customer",
    "order",
    "shipment",
    "warranty",
    "police",
    "report",
    "stolen",
    "receipt",
    "payment",
    "deadline",
    "policy",
)


def turn(n: int) -> NewTurn:
    words = " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(12 + n % 9))
    cycle = n % 4
    if cycle == 0:
        return NewTurn(role=TurnRole.USER, content=f"Question {n}: what about the {words}?")
    if cycle == 1:
        return NewTurn(
            role=TurnRole.ASSISTANT,
            kind=TurnKind.TOOL_CALL,
            content=f'lookup({{"topic": "{words[:40]}"}})',
            ref=f"call-{n}",
        )
    if cycle == 2:
        size = 60 if n % 40 == 2 else 2
        body = " ".join(f"row {k}: {words}." for k in range(size))
        return NewTurn(
            role=TurnRole.TOOL, kind=TurnKind.OBSERVATION, content=body, ref=f"call-{n - 1}"
        )
    return NewTurn(role=TurnRole.ASSISTANT, content=f"Answer {n}: the {words} is settled.")


def make_app(backend: str, workdir: Path, admin_url: str | None) -> tuple[Tether, str]:
    if backend == "sqlite":
        url, dropper = f"sqlite:///{workdir / 'context-bench.db'}", ""
    else:
        import psycopg

        assert admin_url is not None
        dropper = f"tether_bench_ctx_{secrets.token_hex(4)}"
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{dropper}"')
        url = admin_url.rsplit("/", 1)[0] + f"/{dropper}"
    Tether.migrate(bench_settings(url))[0].close()
    app = Tether.open(bench_settings(url, embedder="none"), clock=FakeClock())
    return app, dropper


def drop_database(admin_url: str | None, name: str) -> None:
    if not name or admin_url is None:
        return
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run(
    backend: str, turns: int, budget: int, builds: int, admin_url: str | None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tether-context-bench-") as folder:
        app, dropper = make_app(backend, Path(folder), admin_url)
        try:
            app.tenants.create("bench", admin="alice")
            alice = app.tenants.principal("bench", "alice")
            thread = app.threads.create(alice, "u-1", title="long task")
            started = time.perf_counter()
            for start in range(0, turns, 1000):
                batch = [turn(n) for n in range(start + 1, min(turns, start + 1000) + 1)]
                app.threads.append_many(alice, thread.thread_id, batch)
            seeded_s = time.perf_counter() - started
            app.threads.summarize(alice, thread.thread_id, through_seq=turns - 200)
            for n in range(20):
                kind = MemoryKind.CONSTRAINT if n < 3 else MemoryKind.FACT
                app.memory.propose(
                    alice,
                    MemoryProposal(
                        text=f"Memory {n}: the {WORDS[n]} {WORDS[n - 1]} rule applies",
                        kind=kind,
                        scope=Scope.USER,
                        scope_id="u-1",
                        source_type=SourceType.HUMAN,
                        confidence=0.9,
                    ),
                )
            options = ContextOptions(mask_observations_over=300)
            procedures = ["Deploy to staging first.", "Ask before any destructive command."]
            samples: list[float] = []
            built = None
            for index in range(builds + 2):
                began = time.perf_counter()
                built = app.context.build(
                    alice, thread.thread_id, budget=budget, procedures=procedures, options=options
                )
                if index >= 2:
                    samples.append(time.perf_counter() - began)
            assert built is not None and built.tokens <= budget
            return {
                "backend": backend,
                "turns": turns,
                "budget": budget,
                "tokens": built.tokens,
                "counter": built.counter,
                "turns_included": built.turns,
                "masked": len(built.masked),
                "median_ms": round(median_ms(samples), 2),
                "p95_ms": round(p95_ms(samples), 2),
                "seed_s": round(seeded_s, 1),
            }
        finally:
            app.close()
            drop_database(admin_url, dropper)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=10_000, help="turns in the thread")
    parser.add_argument("--budget", type=int, default=8_000, help="token budget")
    parser.add_argument("--builds", type=int, default=50, help="timed builds per backend")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("TETHER_TEST_POSTGRES_URL"),
        help="a superuser URL to create a scratch database (default TETHER_TEST_POSTGRES_URL)",
    )
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    parser.add_argument(
        "--json", type=Path, default=ROOT / "bench" / "results" / "context-latest.json"
    )
    args = parser.parse_args()
    backends = ["sqlite"] + ([] if args.no_postgres or not args.postgres_url else ["postgres"])
    results = []
    for backend in backends:
        result = run(backend, args.turns, args.budget, args.builds, args.postgres_url)
        verdict = (
            f"median under the {TARGET_MS:g} ms target"
            if result["median_ms"] < TARGET_MS
            else f"median over the {TARGET_MS:g} ms target"
        )
        print(
            f"{backend}: {result['turns']} turns, budget {result['budget']}: "
            f"median {result['median_ms']} ms, p95 {result['p95_ms']} ms ({verdict}); "
            f"{result['tokens']} tokens by {result['counter']}, turns "
            f"{result['turns_included']}, {result['masked']} masked"
        )
        results.append(result)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
