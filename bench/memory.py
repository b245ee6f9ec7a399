"""Memory benchmarks: LoCoMo retrieval quality, recall latency at 100,000 memories, and
batch ingest throughput.

    python -m bench.memory                 # the quick set (SQLite and PostgreSQL)
    python -m bench.memory --backend sqlite    # SQLite only (as --no-postgres)
    python -m bench.memory --backend postgres  # PostgreSQL only
    python -m bench.memory --ingest 0          # LoCoMo only (latency runs with --latency N)

LoCoMo protocol (../shared/datasets/locomo/README.md): each turn is one memory in a scope
of its own conversation, text ``speaker: text`` (with ``--date-prefix``, the default, the
session date in front: it helps temporal questions); for every category 1-4 question,
recall from that conversation only; recall_any@k and recall_all@k for k = 1, 5, 10, 20,
overall and per category; lexical-only, vector-only and hybrid side by side. The data is
read from ../shared/datasets/locomo; nothing of it is copied.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import secrets
import sqlite3
import statistics
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._harness import bench_settings
from tether import FakeClock, Tether
from tether.memory.models import MemoryKind, MemoryProposal, Scope, SourceType
from tether.memory.policy import PolicyConfig

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets" / "locomo" / "dev"
KS = (1, 5, 10, 20)
LEXICAL_WEIGHT = float(os.environ.get("TETHER_BENCH_LEXICAL_WEIGHT", "0.5"))
_DIA = re.compile(r"D\d+:\d+")
LATENCY_MODES = ("lexical", "vector", "hybrid")
NEIGHBOURS = int(os.environ.get("TETHER_BENCH_NEIGHBOURS", "2"))
"""Turns of the same session each side of a turn that make up its context."""


def parse_date(text: str) -> datetime:
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return datetime(2023, 1, 1, tzinfo=UTC)


HELD_OUT = ("conv-44", "conv-47")
"""Conversations never looked at while recall was tuned: reported apart from the other
five (the dev split), so the figures say how the method does on unseen conversations."""


def load_conversations(split: str) -> list[dict[str, Any]]:
    """The conversations of ``split``: ``dev`` (tuned on), ``held-out`` or ``all``."""
    if not DATA.exists():
        raise SystemExit(f"LoCoMo data not found at {DATA}")
    convs = [json.loads(p.read_text()) | {"_id": p.stem} for p in sorted(DATA.glob("conv-*.json"))]
    if split == "all":
        return convs
    return [c for c in convs if (c["_id"] in HELD_OUT) == (split == "held-out")]


def turns_of(conv: dict[str, Any]) -> list[tuple[str, str, datetime, str, str]]:
    """(dia_id, speaker, session date, text, session) for every turn, in order."""
    body = conv.get("conversation", conv)
    out = []
    for key in sorted(body, key=lambda k: (len(k), k)):
        if not re.fullmatch(r"session_\d+", key):
            continue
        when_text = body.get(f"{key}_date_time", "")
        when = parse_date(when_text)
        for turn in body[key]:
            out.append((turn["dia_id"], turn["speaker"], when, turn["text"], key))
    return out


def proposals_of(
    conv: dict[str, Any], turns: list[tuple[str, str, datetime, str, str]], date_prefix: bool
) -> list[MemoryProposal]:
    """One memory per turn, as an application that stores a conversation would write it:
    the turn's text, its session as its episode, the session's date as its event time, and
    the neighbouring turns of the same session (:data:`NEIGHBOURS` each side) as its
    context, indexed with it and never returned as its text."""
    proposals = []
    for index, (_dia, speaker, when, text, session) in enumerate(turns):
        shown = f"{speaker}: {text}"
        if date_prefix:
            shown = f"({when.strftime('%d %B %Y')}) {shown}"
        around = [
            f"{other[1]}: {other[3]}"
            for other in turns[max(0, index - NEIGHBOURS) : index + NEIGHBOURS + 1]
            if other[4] == session and other is not turns[index]
        ]
        proposals.append(
            MemoryProposal(
                text=shown[:8000],
                kind=MemoryKind.EVENT,
                scope=Scope.CONVERSATION,
                scope_id=conv["_id"],
                source_type=SourceType.HUMAN,
                confidence=0.9,
                valid_from=when,
                context="\n".join(around)[:16000] or None,
                episode=session,
            )
        )
    return proposals


def questions_of(
    conv: dict[str, Any], known: set[str]
) -> tuple[list[tuple[str, int, set[str]]], int]:
    questions, dropped = [], 0
    for qa in conv["qa"]:
        category = int(qa.get("category", 0))
        if category not in (1, 2, 3, 4):
            continue
        evidence = set()
        for item in qa.get("evidence", []):
            for dia in _DIA.findall(str(item)):
                if dia in known:
                    evidence.add(dia)
                else:
                    dropped += 1
        if evidence:
            questions.append((qa["question"], category, evidence))
        else:
            dropped += 1
    return questions, dropped


def postgres_admin_url() -> str:
    return os.environ.get("TETHER_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def make_app(
    backend: str, workdir: Path, embedder: Any, *, reinforce: bool = False
) -> tuple[Tether, str]:
    if backend == "sqlite":
        url = f"sqlite:///{workdir / f'memory-bench-{secrets.token_hex(4)}.db'}"
        dropper = ""
    else:
        import psycopg

        admin = postgres_admin_url()
        name = f"tether_bench_mem_{secrets.token_hex(4)}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        url = admin.rsplit("/", 1)[0] + f"/{name}"
        dropper = name
    Tether.migrate(bench_settings(url))[0].close()
    app = Tether.open(
        bench_settings(url), clock=FakeClock(datetime(2026, 1, 1, tzinfo=UTC)), embedder=embedder
    )
    app.tenants.create("bench", admin="alice")
    alice = app.tenants.principal("bench", "alice")
    app.tenants.grant(alice, "alice", ["admin", "operator"])
    if not reinforce:
        app.memory.configure(
            app.tenants.principal("bench", "alice"), PolicyConfig(reinforce_similarity=None)
        )
    return app, dropper


def drop_database(name: str) -> None:
    if not name:
        return
    import psycopg

    admin = postgres_admin_url()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def locomo(
    backend: str, embedder: Any, date_prefix: bool, workdir: Path, split: str, limit: int
) -> dict[str, Any]:
    """Recall as a user calls it, ``recall(question, limit=limit)`` (hybrid, the default),
    on a freshly ingested database: recall feeds the ranking's use counts, so each limit
    gets its own."""
    app, dropper = make_app(backend, workdir, embedder)
    try:
        who = app.tenants.principal("bench", "alice")
        convs = load_conversations(split)
        ingest_s = 0.0
        by_memory: dict[str, str] = {}
        plan = []
        dropped_total = 0
        for conv in convs:
            turns = turns_of(conv)
            proposals = proposals_of(conv, turns, date_prefix)
            started = time.perf_counter()
            decisions = []
            for start in range(0, len(proposals), 256):
                decisions += app.memory.propose_many(who, proposals[start : start + 256])
            ingest_s += time.perf_counter() - started
            for (dia, *_), decision in zip(turns, decisions, strict=True):
                if decision.memory_id:
                    by_memory[decision.memory_id] = dia
            questions, dropped = questions_of(conv, {t[0] for t in turns})
            dropped_total += dropped
            plan.append((conv["_id"], questions))
        ks = [k for k in KS if k <= limit]
        hits_any = {k: 0 for k in ks}
        hits_all = {k: 0 for k in ks}
        per_cat: dict[int, list[int]] = defaultdict(lambda: [0, 0])
        latencies = []
        total = 0
        for conv_id, questions in plan:
            for question, category, evidence in questions:
                started = time.perf_counter()
                result = app.memory.recall(
                    who, question, [(Scope.CONVERSATION, conv_id)], limit=limit
                )
                latencies.append((time.perf_counter() - started) * 1000)
                ranked = [
                    by_memory.get(h.record.memory_id)
                    for h in result.hits
                    if h.why.get("constraint") is None
                ]
                total += 1
                for k in ks:
                    top = set(ranked[:k])
                    hits_any[k] += bool(top & evidence)
                    hits_all[k] += evidence <= top
                per_cat[category][0] += bool(set(ranked[:limit]) & evidence)
                per_cat[category][1] += 1
        latencies.sort()
        return {
            "backend": backend,
            "split": split,
            "conversations": [c["_id"] for c in convs],
            "limit": limit,
            "memories": len(by_memory),
            "ingest_per_s": round(len(by_memory) / ingest_s, 1),
            "dropped_evidence": dropped_total,
            "questions": total,
            "recall_any": {k: round(hits_any[k] / total, 3) for k in ks},
            "recall_all": {k: round(hits_all[k] / total, 3) for k in ks},
            "any_by_category": {c: round(v[0] / v[1], 3) for c, v in sorted(per_cat.items())},
            "latency_ms_p50": round(statistics.median(latencies), 2),
            "latency_ms_p95": round(latencies[int(0.95 * (len(latencies) - 1))], 2),
        }
    finally:
        app.close()
        drop_database(dropper)


def settle_postgres(name: str) -> None:
    """VACUUM ANALYZE the freshly loaded database, as autovacuum would soon after a bulk
    load. This server runs with autovacuum off; without it the planner has no statistics
    and index-only scans visit the heap for every row (the ranked text search took 7.0 ms
    instead of 2.2 ms at 100,000 memories)."""
    import psycopg

    admin = postgres_admin_url()
    url = admin.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


class SyntheticEmbedder:
    """Random unit vectors, so latency is measured without the embedder's cost."""

    id = "synthetic-384"
    dim = 384

    def __init__(self) -> None:
        import numpy as np

        self._rng = np.random.default_rng(7)

    def embed(self, texts: Any) -> Any:
        import numpy as np

        vectors = self._rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def latency(backend: str, count: int, workdir: Path) -> dict[str, Any]:
    """Recall latency with ``count`` memories in one scope (synthetic texts and vectors)."""
    import random

    embedder = SyntheticEmbedder()
    app, dropper = make_app(backend, workdir, embedder)
    try:
        who = app.tenants.principal("bench", "alice")
        rng = random.Random(11)
        words = [f"w{n}" for n in range(5000)] + ["claim", "policy", "garden", "invoice", "doctor"]
        started = time.perf_counter()
        batch = 2000
        for start in range(0, count, batch):
            proposals = [
                MemoryProposal(
                    text=" ".join(rng.choice(words) for _ in range(12)),
                    kind=MemoryKind.EVENT,
                    scope=Scope.USER,
                    scope_id="u-big",
                    source_type=SourceType.HUMAN,
                    confidence=0.9,
                )
                for _ in range(min(batch, count - start))
            ]
            app.memory.propose_many(who, proposals)
        load_s = time.perf_counter() - started
        if dropper:
            settle_postgres(dropper)
        out: dict[str, Any] = {"backend": backend, "memories": count, "load_s": round(load_s, 1)}
        for mode in LATENCY_MODES:
            timings = []
            for index in range(120):
                query = " ".join(rng.choice(words) for _ in range(4)) + " claim"
                t0 = time.perf_counter()
                app.memory.recall(who, query, [(Scope.USER, "u-big")], limit=10, mode=mode)
                if index >= 20:
                    timings.append((time.perf_counter() - t0) * 1000)
            timings.sort()
            out[mode] = {
                "p50_ms": round(statistics.median(timings), 2),
                "p95_ms": round(timings[int(0.95 * (len(timings) - 1))], 2),
            }
        return out
    finally:
        app.close()
        drop_database(dropper)


def ingest(backend: str, count: int, workdir: Path) -> dict[str, Any]:
    """Batch ingest through ``propose_many`` with the default embedder, then Mem0.

    The same ``count`` generated ~30-token memories (``bench.embeddings.memory_texts``)
    go through Tether's batch API (default policy, so every text is checked for PII,
    secrets, injection and near-duplicates) and through Mem0's ``add(..., infer=False)``
    with the same embedder, interleaved in one process.
    """
    from bench.embeddings import memory_texts
    from tether.memory.embeddings import load_default_embedder

    embedder = load_default_embedder()
    if embedder is None:
        return {"backend": backend, "skipped": "the default embedder is not installed"}
    embedder.embed(["warm up the session"])
    texts = memory_texts(count)
    app, dropper = make_app(backend, workdir, embedder, reinforce=True)
    try:
        who = app.tenants.principal("bench", "alice")
        proposals = [
            MemoryProposal(
                text=text,
                kind=MemoryKind.EVENT,
                scope=Scope.USER,
                scope_id="u-ingest",
                source_type=SourceType.HUMAN,
                confidence=0.9,
            )
            for text in texts
        ]
        started = time.perf_counter()
        decisions = app.memory.propose_many(who, proposals)
        tether_s = time.perf_counter() - started
    finally:
        app.close()
        drop_database(dropper)
    embed_started = time.perf_counter()
    embedder.embed(texts)
    embed_s = time.perf_counter() - embed_started
    actions: dict[str, int] = defaultdict(int)
    for decision in decisions:
        actions[decision.action or decision.verdict.value] += 1
    out: dict[str, Any] = {
        "backend": backend,
        "texts": count,
        "tether_per_s": round(count / tether_s, 1),
        "tether_actions": dict(actions),
        "embed_only_per_s": round(count / embed_s, 1),
    }
    out["mem0"] = mem0_ingest(texts, embedder, workdir)
    if "per_s" in out["mem0"]:
        out["ratio"] = round(out["tether_per_s"] / out["mem0"]["per_s"], 2)
    return out


def mem0_ingest(texts: list[str], embedder: Any, workdir: Path) -> dict[str, Any]:
    """Mem0 2.2 ``add(infer=False)`` of ``texts``, embedding with Tether's embedder.

    Mem0 is configured fully offline: its Qdrant store in local mode on disk, its history
    in SQLite, telemetry off. Its LLM and embedder settings name OpenAI only because Mem0
    builds both at start-up; neither is called: ``infer=False`` skips the LLM, and the
    embedder is replaced by a wrapper of Tether's (Mem0 embeds one message per call).
    """
    os.environ["MEM0_TELEMETRY"] = "False"
    try:
        from mem0 import Memory
        from mem0.embeddings.base import EmbeddingBase
    except ImportError as exc:
        return {"skipped": f"mem0 is not installed ({exc}): pip install -e '.[bench]'"}

    class TetherEmbedding(EmbeddingBase):  # type: ignore[misc]
        def embed(self, text: Any, memory_action: Any = None) -> list[float]:
            return [float(x) for x in embedder.embed([text])[0]]

    folder = workdir / f"mem0-{secrets.token_hex(4)}"
    config = {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "bench",
                "path": str(folder / "qdrant"),
                "on_disk": True,
                "embedding_model_dims": embedder.dim,
            },
        },
        "embedder": {"provider": "openai", "config": {"api_key": "unused-offline"}},
        "llm": {"provider": "openai", "config": {"api_key": "unused-offline"}},
        "history_db_path": str(folder / "history.db"),
    }
    try:
        from importlib import metadata

        memory = Memory.from_config(config)
        memory.embedding_model = TetherEmbedding()
        started = time.perf_counter()
        for text in texts:
            memory.add([{"role": "user", "content": text}], user_id="u-ingest", infer=False)
        seconds = time.perf_counter() - started
        stored = len(
            memory.get_all(filters={"user_id": "u-ingest"}, top_k=len(texts) + 10)["results"]
        )
        return {
            "version": metadata.version("mem0ai"),
            "per_s": round(len(texts) / seconds, 1),
            "stored": stored,
            "vector_store": "qdrant (local, on disk)",
        }
    except Exception as exc:  # the peer's failure is reported, never faked
        return {"skipped": f"mem0 failed: {type(exc).__name__}: {exc}"}


def print_locomo(outcome: dict[str, Any]) -> None:
    ra, limit = outcome["recall_any"], outcome["limit"]
    print(
        f"\n## LoCoMo {outcome['split']} ({', '.join(outcome['conversations'])}), "
        f"{outcome['backend']}, recall(limit={limit}): {outcome['questions']} questions, "
        f"{outcome['memories']} memories, ingest {outcome['ingest_per_s']}/s, "
        f"{outcome['dropped_evidence']} malformed evidence ids dropped, {outcome['seconds']} s"
    )
    print(
        "- recall_any: "
        + ", ".join(f"@{k} {v}" for k, v in ra.items())
        + f"; recall_all@{limit} {outcome['recall_all'][limit]}"
    )
    names = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
    print(
        f"- any@{limit} by category: "
        + ", ".join(
            f"{category} {names[int(category)]} {value}"
            for category, value in outcome["any_by_category"].items()
        )
    )
    print(f"- latency p50 {outcome['latency_ms_p50']} ms, p95 {outcome['latency_ms_p95']} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description="Tether memory benchmarks")
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgres", "both"),
        default="both",
        help="the backends to measure (default both; the batch ingest runs on SQLite only)",
    )
    parser.add_argument("--no-postgres", action="store_true", help="the same as --backend sqlite")
    parser.add_argument("--no-embedder", action="store_true", help="lexical recall only")
    parser.add_argument(
        "--date-prefix",
        action="store_true",
        help="put the session date in front of each turn's text (it is always indexed as "
        "the memory's event time)",
    )
    parser.add_argument(
        "--split",
        choices=("dev", "held-out", "both"),
        default="both",
        help=f"LoCoMo conversations: dev (tuned on), held-out ({', '.join(HELD_OUT)}) or both",
    )
    parser.add_argument(
        "--limits",
        default="10,5",
        help="recall limits to measure LoCoMo at, one fresh database each (default 10,5)",
    )
    parser.add_argument(
        "--latency",
        type=int,
        default=0,
        metavar="N",
        help="also measure recall latency with N memories in one scope (e.g. 100000)",
    )
    parser.add_argument("--skip-locomo", action="store_true")
    parser.add_argument(
        "--ingest",
        type=int,
        default=5000,
        metavar="N",
        help="batch ingest of N texts with the default embedder, Tether and Mem0 (0: skip)",
    )
    parser.add_argument(
        "--json", type=Path, default=ROOT / "bench" / "results" / "memory-latest.json"
    )
    args = parser.parse_args()
    embedder = None
    why = "disabled (--no-embedder)"
    if not args.no_embedder:
        try:
            from tether.memory.embeddings import load_default_embedder

            embedder = load_default_embedder()
            why = "default embedder" if embedder is not None else "not installed"
        except ImportError as exc:
            why = f"not importable: {exc}"
    print(f"embedder: {getattr(embedder, 'id', None)} ({why})")
    if args.no_postgres and args.backend == "postgres":
        parser.error("--no-postgres contradicts --backend postgres")
    chosen = "sqlite" if args.no_postgres else args.backend
    backends = ["sqlite", "postgres"] if chosen == "both" else [chosen]
    report: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": (
            f"{os.cpu_count()} cores, Python {platform.python_version()}, "
            f"SQLite {sqlite3.sqlite_version}"
        ),
        "embedder": getattr(embedder, "id", None),
        "locomo": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends if args.latency else []:
            measured = latency(backend, args.latency, Path(tmp))
            report.setdefault("latency", []).append(measured)
            print(
                f"\n## Recall latency ({backend}), {measured['memories']} memories in one scope "
                f"(synthetic vectors; query embedding not included; load {measured['load_s']} s)"
            )
            for mode in LATENCY_MODES:
                times = measured[mode]
                print(f"- {mode}: p50 {times['p50_ms']} ms, p95 {times['p95_ms']} ms")
        for backend in ["sqlite"] if args.ingest and "sqlite" in backends else []:
            measured = ingest(backend, args.ingest, Path(tmp))
            report["ingest"] = measured
            print(
                f"\n## Batch ingest ({backend}), {args.ingest} texts of ~30 tokens, embeddings on"
            )
            if "skipped" in measured:
                print(f"- skipped: {measured['skipped']}")
            else:
                mem0 = measured["mem0"]
                print(
                    f"- Tether propose_many: {measured['tether_per_s']}/s "
                    f"({measured['tether_actions']}); the embedder alone: "
                    f"{measured['embed_only_per_s']}/s"
                )
                if "skipped" in mem0:
                    print(f"- Mem0: not measured: {mem0['skipped']}")
                else:
                    print(
                        f"- Mem0 {mem0['version']} add(infer=False), same embedder, "
                        f"{mem0['vector_store']}: {mem0['per_s']}/s ({mem0['stored']} stored); "
                        f"Tether / Mem0 = {measured['ratio']}x"
                    )
        splits = ["dev", "held-out"] if args.split == "both" else [args.split]
        limits = [int(value) for value in args.limits.split(",")]
        for backend in [] if args.skip_locomo else backends:
            for split in splits:
                for limit in limits:
                    started = time.perf_counter()
                    outcome = locomo(backend, embedder, args.date_prefix, Path(tmp), split, limit)
                    outcome["seconds"] = round(time.perf_counter() - started, 1)
                    report["locomo"].append(outcome)
                    print_locomo(outcome)
    print(f"\n{report['machine']}; {report['date']}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
