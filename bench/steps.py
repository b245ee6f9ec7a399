"""Overhead per durable step: Tether against LangGraph and DBOS, in one process.

Overhead per step = (median time per run with persistence - median without) / steps, over
``--runs`` runs of a 10-step workflow after ``--warmup`` untimed ones. "Without" is, for
Tether, the same node functions called in a plain Python loop (Tether has no
non-persistent mode, so its figure also carries its whole engine); for LangGraph, the same
graph compiled without a checkpointer; for DBOS, the same step functions called without
DBOS. Then commits (SQLite) and round trips (PostgreSQL) per step are counted, and one
1,000-step run whose state gains a 700-byte item per step measures storage growth.

    python -m bench.steps               # the quick set (make bench)
    python -m bench.steps --runs 20     # a quick check
    python -m bench.steps --profile sqlite-full   # where Tether's time goes
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shlex
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench._harness import Contender, machine, measure, median_ms, p95_ms
from bench._tether import postgres_settings, scratch_postgres, tether_contenders, tether_session

STEPS = 10
RESULTS = Path(__file__).parent / "results" / "steps-latest.json"
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"
TARGETS = {"normal": 5.0, "full": 2.0, "growth": 3.0}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.steps", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--runs", type=int, default=200, help="timed runs per contender")
    parser.add_argument("--warmup", type=int, default=20, help="untimed runs first")
    parser.add_argument("--chunk", type=int, default=10, help="runs in a row per contender")
    parser.add_argument("--growth-steps", type=int, default=1000, help="steps of the long run")
    parser.add_argument(
        "--langgraph-growth-seconds",
        type=float,
        default=60.0,
        help="stop LangGraph's long run after this long (it grows quadratically)",
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("TETHER_BENCH_POSTGRES_URL", DEFAULT_PG),
        help="server to make a scratch database on (env TETHER_BENCH_POSTGRES_URL)",
    )
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL")
    parser.add_argument("--no-peers", action="store_true", help="skip LangGraph and DBOS")
    parser.add_argument("--no-growth", action="store_true", help="skip the storage run")
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to write results")
    parser.add_argument(
        "--profile",
        choices=("sqlite-normal", "sqlite-full", "postgres"),
        help="instead of the benchmark, profile --runs Tether runs here and print the top",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.profile:
        return profile(args)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        pg_url, pg_error, pg_info = None, None, None
        if args.no_postgres:
            pg_error = "skipped (--no-postgres)"
        else:
            try:
                pg_url, _ = stack.enter_context(scratch_postgres(args.postgres_url))
                pg_info = postgres_settings(pg_url)
            except Exception as exc:
                pg_error = f"no server at {args.postgres_url}: {type(exc).__name__}: {exc}"
                pg_error = pg_error.splitlines()[0][:200]
        contenders = tether_contenders(stack, workdir, pg_url, pg_error)
        if not args.no_peers:
            from bench._peers import dbos_contenders, langgraph_contenders

            contenders += langgraph_contenders(stack, workdir)
            contenders += dbos_contenders(stack, workdir)
        log(f"timing {len(contenders)} contenders, {args.runs} runs each, interleaved")
        measure(
            contenders,
            runs=args.runs,
            warmup=args.warmup,
            chunk=args.chunk,
            steps=STEPS,
            log=log,
        )
        log("counting commits and round trips")
        counts = count_all(contenders)
        growth = [] if args.no_growth else measure_growth(workdir, args)
    results = assemble(args, contenders, counts, growth, pg_info, time.perf_counter() - started)
    print(render(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    log(f"wrote {args.json}")
    return 0


def count_all(contenders: list[Contender]) -> dict[str, dict[str, Any]]:
    counts: dict[str, dict[str, Any]] = {}
    for contender in contenders:
        if contender.counts is None or contender.error is not None:
            continue
        try:
            counts[contender.key] = contender.counts()
        except Exception as exc:
            counts[contender.key] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    return counts


def measure_growth(workdir: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    from bench._growth import langgraph_growth, tether_growth

    growth = []
    log(f"storage growth: Tether, {args.growth_steps} steps")
    try:
        growth.append(tether_growth(workdir, args.growth_steps))
    except Exception as exc:
        growth.append({"system": "Tether", "error": f"{type(exc).__name__}: {exc}"})
    if not args.no_peers:
        log(f"storage growth: LangGraph, up to {args.langgraph_growth_seconds:.0f} s")
        try:
            growth.append(
                langgraph_growth(workdir, args.growth_steps, args.langgraph_growth_seconds)
            )
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, ImportError):
                reason = f"not installed ({exc.name}): pip install -e '.[bench]'"
            growth.append({"system": "LangGraph", "error": reason})
    return growth


# -- results --------------------------------------------------------------------------


def assemble(
    args: argparse.Namespace,
    contenders: list[Contender],
    counts: dict[str, dict[str, Any]],
    growth: list[dict[str, Any]],
    pg_info: dict[str, str] | None,
    seconds: float,
) -> dict[str, Any]:
    by_key = {c.key: c for c in contenders}

    def per_step(contender: Contender, against: str | None) -> float | None:
        base = by_key.get(against or "")
        if not contender.ok or base is None or not base.ok:
            return None
        return (median_ms(contender.samples) - median_ms(base.samples)) / STEPS

    rows = []
    for c in contenders:
        rows.append(
            {
                "key": c.key,
                "system": c.system,
                "config": c.config,
                "runs": len(c.samples),
                "median_ms": median_ms(c.samples) if c.ok else None,
                "p95_ms": p95_ms(c.samples) if c.ok else None,
                "baseline": c.baseline,
                "overhead_ms_per_step": per_step(c, c.baseline),
                "over_bare_loop_ms_per_step": per_step(c, "bare") if c.baseline else None,
                "compare_to": c.compare_to,
                "error": c.error,
            }
        )
    overhead = {row["key"]: row["overhead_ms_per_step"] for row in rows}
    for row in rows:
        mine, theirs = row["overhead_ms_per_step"], overhead.get(row["compare_to"] or "")
        row["ratio_to_tether"] = mine / theirs if mine is not None and theirs else None
    for entry in growth:
        if "final_state_bytes" in entry:
            entry["payload_ratio"] = entry["payload_bytes"] / entry["final_state_bytes"]
            entry["file_ratio"] = entry["file_growth_bytes"] / entry["final_state_bytes"]
    _tether_at_langgraph_steps(growth)
    results = {
        "benchmark": "durable steps",
        "command": " ".join(["python -m bench.steps", shlex.join(sys.argv[1:])]).strip(),
        "workload": f"{STEPS} trivial steps, {args.runs} runs after {args.warmup} warm-up",
        "machine": machine(pg_info),
        "seconds": seconds,
        "rows": rows,
        "counts": counts,
        "growth": growth,
    }
    results["targets"] = check_targets(results)
    return results


def _tether_at_langgraph_steps(growth: list[dict[str, Any]]) -> None:
    """If LangGraph stopped early, put Tether's figures at the same step beside it."""
    from bench._growth import state_bytes

    tether = next((g for g in growth if g.get("system") == "Tether" and "steps" in g), None)
    lang = next((g for g in growth if g.get("system") == "LangGraph" and "steps" in g), None)
    if tether is None or lang is None or not lang.get("stopped_early") or not lang["steps"]:
        return
    steps = min(lang["steps"], len(tether["cumulative_payload"]) - 1)
    stored = tether["cumulative_payload"][steps]
    lang["tether_payload_bytes_at_same_steps"] = stored
    lang["tether_payload_ratio_at_same_steps"] = stored / state_bytes(steps)


def check_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows = {row["key"]: row for row in results["rows"]}
    counts = results["counts"]
    checks = []

    def ratio_check(mode: str, least: float) -> None:
        for peer in ("langgraph", "dbos"):
            ratio = rows.get(f"{peer}-{mode}", {}).get("ratio_to_tether")
            checks.append(
                {
                    "target": f"SQLite {mode.upper()}: {peer} overhead >= {least:g}x Tether's",
                    "value": None if ratio is None else round(ratio, 2),
                    "met": None if ratio is None else ratio >= least,
                }
            )

    ratio_check("normal", TARGETS["normal"])
    commits = counts.get("tether-sqlite-full", {}).get("write_commits_per_step")
    checks.append(
        {
            "target": "SQLite FULL: 1 commit per durable step (no effect)",
            "value": commits,
            "met": None if commits is None else commits <= 1.0,
        }
    )
    ratio_check("full", TARGETS["full"])
    trips = counts.get("tether-postgres", {}).get("round_trips_per_step")
    checks.append(
        {
            "target": "PostgreSQL: 1 round trip per durable step",
            "value": trips,
            "met": None if trips is None else trips <= 1.0,
        }
    )
    tether = next((g for g in results["growth"] if g.get("system") == "Tether"), {})
    ratio = tether.get("payload_ratio")
    checks.append(
        {
            "target": f"growth: bytes stored <= {TARGETS['growth']:g}x final state",
            "value": None if ratio is None else round(ratio, 2),
            "met": None if ratio is None else ratio <= TARGETS["growth"],
        }
    )
    return checks


# -- rendering ------------------------------------------------------------------------


def _plural(count: float, word: str) -> str:
    return f"{count:g} {word}" + ("" if count == 1 else "s")


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def render(results: dict[str, Any]) -> str:
    out = [f"## Durable steps: {results['workload']}", ""]
    body = []
    for row in results["rows"]:
        note = row["error"] or ""
        if row["baseline"]:
            note = note or f"vs {row['baseline']}"
        count = results["counts"].get(row["key"], {})
        per_step = count.get("write_commits_per_step", count.get("round_trips_per_step"))
        unit = "round trip" if "round_trips_per_step" in count else "commit"
        if per_step is not None and per_step != 1:
            unit += "s"
        body.append(
            [
                "10 steps",
                row["system"],
                row["config"],
                _num(row["median_ms"]),
                _num(row["p95_ms"]),
                _num(row["overhead_ms_per_step"]),
                _num(row["over_bare_loop_ms_per_step"]),
                _num(row["ratio_to_tether"], 2) if row["compare_to"] else "",
                "" if per_step is None else f"{per_step:g} {unit}",
                note,
            ]
        )
    out += _table(
        [
            "workload",
            "system",
            "configuration",
            "median ms/run",
            "p95 ms/run",
            "overhead ms/step",
            "over bare loop ms/step",
            "ratio to Tether",
            "writes per step",
            "notes",
        ],
        body,
    )
    out += ["", "### Writes per step (counted, untimed)", ""]
    out += _table(
        [
            "system",
            "configuration",
            "per 10-step run",
            "per 20-step run",
            "per step",
            "one step's transaction",
        ],
        _count_rows(results),
    )
    if results["growth"]:
        out += ["", "### Storage growth: one run, +700 bytes of state per step", ""]
        out += _table(
            [
                "system",
                "steps",
                "final state",
                "stored (payloads)",
                "ratio",
                "file growth",
                "ratio",
                "seconds",
            ],
            [_growth_row(g) for g in results["growth"]],
        )
        lang = next(
            (g for g in results["growth"] if "tether_payload_ratio_at_same_steps" in g), None
        )
        if lang:
            out.append(
                f"\nLangGraph stopped at {lang['steps']} steps (time bound); Tether at the "
                f"same step had stored {lang['tether_payload_bytes_at_same_steps']:,} bytes "
                f"({lang['tether_payload_ratio_at_same_steps']:.2f}x its state then)."
            )
    out += ["", "### Targets", ""]
    for check in results["targets"]:
        verdict = {True: "met", False: "MISSED", None: "not measured"}[check["met"]]
        out.append(f"- {check['target']}: {check['value']} -> {verdict}")
    m = results["machine"]
    pg = m["postgres"] or {}
    out += [
        "",
        f"Machine: {m['cores']} cores ({m['cpu']}), Python {m['python']}, SQLite {m['sqlite']}"
        + (
            f", PostgreSQL {pg['server_version']} (synchronous_commit={pg['synchronous_commit']},"
            f" fsync={pg['fsync']})"
            if pg
            else ", PostgreSQL not measured"
        )
        + f"; {', '.join(f'{k} {v}' for k, v in m['packages'].items() if v)}.",
        f"Date: {m['date']}. Command: {results['command']} ({results['seconds']:.0f} s).",
    ]
    return "\n".join(out)


def _count_rows(results: dict[str, Any]) -> list[list[str]]:
    configs = {row["key"]: (row["system"], row["config"]) for row in results["rows"]}
    rows = []
    for key, count in results["counts"].items():
        system, config = configs[key]
        if "error" in count:
            rows.append([system, config, "-", "-", "-", count["error"]])
        elif "round_trips_per_step" in count:
            runs, ends = count["round_trips_per_run"], count["transactions_per_run"]
            added = "; ".join(
                f"{n:g}x {name}" for name, n in count["round_trips_added_per_step"].items()
            )
            rows.append(
                [
                    system,
                    config,
                    f"{_plural(runs[10], 'round trip')}, {_plural(ends[10], 'transaction')}",
                    f"{_plural(runs[20], 'round trip')}, {_plural(ends[20], 'transaction')}",
                    f"{_plural(count['round_trips_per_step'], 'round trip')}, "
                    f"{_plural(count['transactions_per_step'], 'transaction')}",
                    f"round trips added: {added}",
                ]
            )
        else:
            runs = count["write_commits_per_run"]
            shapes = count["common_write_transactions"]
            described = " / ".join(
                f"{s['per_20_step_run']:.3g}x [{'; '.join(s['statements'])}]" for s in shapes[:2]
            )
            rows.append(
                [
                    system,
                    config,
                    _plural(runs[10], "write commit"),
                    _plural(runs[20], "write commit"),
                    f"{_plural(count['write_commits_per_step'], 'write commit')}, "
                    f"{_plural(count['statements_per_step'], 'statement')}",
                    described,
                ]
            )
    return rows


def _growth_row(entry: dict[str, Any]) -> list[str]:
    if "error" in entry:
        return [entry["system"], "-", "-", "-", "-", "-", "-", entry["error"]]
    steps = f"{entry['steps']}" + (" (time bound)" if entry.get("stopped_early") else "")
    return [
        f"{entry['system']} ({entry['config']})",
        steps,
        f"{entry['final_state_bytes']:,} B",
        f"{entry['payload_bytes']:,} B",
        f"{entry['payload_ratio']:.2f}x",
        f"{entry['file_growth_bytes']:,} B",
        f"{entry['file_ratio']:.2f}x",
        f"{entry['seconds']:.1f}",
    ]


# -- profiling ------------------------------------------------------------------------


def profile(args: argparse.Namespace) -> int:
    """Profile ``--runs`` Tether runs of the 10-step workload with cProfile."""
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as tmp, ExitStack() as stack:
        if args.profile == "postgres":
            url, _ = stack.enter_context(scratch_postgres(args.postgres_url))
            synchronous = None
        else:
            synchronous = args.profile.split("-", 1)[1].upper()
            url = f"sqlite:///{Path(tmp) / 'profile.db'}"
        session = stack.enter_context(tether_session(url, synchronous=synchronous))
        for _ in range(args.warmup):
            session.run(STEPS)
        profiler = cProfile.Profile()
        started = time.perf_counter()
        profiler.enable()
        for _ in range(args.runs):
            session.run(STEPS)
        profiler.disable()
        elapsed = time.perf_counter() - started
    print(
        f"# {args.profile}: {args.runs} runs of {STEPS} steps in {elapsed:.2f} s under cProfile"
        f" ({elapsed / args.runs / STEPS * 1000:.3f} ms per step, profiler included)"
    )
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
