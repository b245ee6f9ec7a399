"""``python -m bench.langgraph --profile sqlite-normal|sqlite-full|postgres``: where a
chain run's time goes, with TetherSaver and with its peer.

1. Python and C calls per run (every thread; deterministic): no checkpointer, the peer,
   TetherSaver.
2. Thread CPU per call of each saver's methods (``get_tuple``, ``put`` of a thread's first
   checkpoint, of a middle one, of its last, ``put_writes``): medians over ``--runs`` runs
   interleaved in chunks of 10, with the process CPU per checkpoint beside them.
3. cProfile of TetherSaver's ``put`` and ``put_writes`` in every thread that calls them.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter as Tally
from collections import defaultdict
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench._tether import scratch_postgres
from bench.langgraph import (
    STEPS,
    Saver,
    chain_builder,
    chain_contender,
    checkpoints_per_run,
    postgres_saver,
    sqlite_saver,
    tether_saver,
)

METHODS = ("get_tuple", "put", "put_writes")


def profile(args: argparse.Namespace) -> int:
    """Python and C calls per chain run (every thread) without a checkpointer, with the
    peer and with TetherSaver, then cProfile of TetherSaver's ``put`` and ``put_writes``
    in every thread that calls them (thread CPU clock), merged."""
    builder = chain_builder()
    with tempfile.TemporaryDirectory(prefix="tether-bench-lg-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        if args.profile == "postgres":
            url, _ = stack.enter_context(scratch_postgres(args.postgres_url))
            peer_url, _ = stack.enter_context(scratch_postgres(args.postgres_url))
            ours, peer = tether_saver(stack, url), postgres_saver(stack, peer_url)
        else:
            mode = args.profile.split("-", 1)[1].upper()
            ours = tether_saver(stack, f"sqlite:///{workdir / 'profile.db'}", mode)
            peer = sqlite_saver(stack, workdir, mode)
        contenders = [chain_contender(s, builder) for s in (None, peer, ours)]
        for contender in contenders:
            for _ in range(args.warmup):
                contender.run(STEPS)
        print(f"# {args.profile}: calls per chain run ({STEPS} nodes), every thread")
        for contender in contenders:
            calls = count_calls(contender.run, args.runs)
            print(
                f"- {contender.key}: {calls['call'] / args.runs:,.0f} Python calls, "
                f"{calls['c_call'] / args.runs:,.0f} C calls"
            )
        print(f"\n# thread CPU per call, median of {args.runs} runs (us)")
        per_call = time_calls(contenders, (peer, ours), args.runs, builder)
        for saver in (peer, ours):
            print(f"- {saver.key}: " + "; ".join(per_call[saver.key]))
        profiles: list[cProfile.Profile] = []
        local = threading.local()

        def profiled(method: Callable[..., Any]) -> Callable[..., Any]:
            def call(*a: Any, **kw: Any) -> Any:
                prof = getattr(local, "profile", None)
                if prof is None:
                    prof = local.profile = cProfile.Profile(time.thread_time)
                    profiles.append(prof)
                prof.enable()
                try:
                    return method(*a, **kw)
                finally:
                    prof.disable()

            return call

        saver = ours.saver
        for name in METHODS:
            vars(saver).pop(name, None)
        saver.put, saver.put_writes = profiled(saver.put), profiled(saver.put_writes)
        started = time.process_time()
        for _ in range(args.runs):
            contenders[2].run(STEPS)
        cpu = time.process_time() - started
    print(
        f"\n# TetherSaver: {args.runs} runs, {cpu / args.runs * 1000:.3f} CPU ms per run "
        "under cProfile (put and put_writes only)"
    )
    stats = pstats.Stats(*profiles)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)
    return 0


def count_calls(run: Callable[[int], None], runs: int) -> Tally[str]:
    """Profiler events (``call``, ``c_call``) of ``runs`` runs, in every thread."""
    tallies: dict[int, Tally[str]] = {}

    def tally(frame: Any, event: str, arg: Any) -> None:
        ident = threading.get_ident()
        counts = tallies.get(ident)
        if counts is None:
            counts = tallies[ident] = Tally()
        counts[event] += 1

    threading.setprofile(tally)
    sys.setprofile(tally)
    try:
        for _ in range(runs):
            run(STEPS)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return sum(tallies.values(), Tally())


def time_calls(
    contenders: list[Any], savers: tuple[Saver, ...], runs: int, builder: Any
) -> dict[str, list[str]]:
    """Thread CPU of each saver method per call (``put`` by the checkpoint's place in the
    run), and process CPU per checkpoint over the run without a checkpointer, measured
    over ``runs`` runs per contender interleaved in chunks of 10."""
    seen: dict[str, dict[str, list[float]]] = {s.key: defaultdict(list) for s in savers}

    def timed(key: str, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*a: Any, **kw: Any) -> Any:
            started = time.thread_time()
            try:
                return method(*a, **kw)
            finally:
                label = name
                if name == "put":
                    step = a[2].get("step")
                    label += " first" if step == -1 else " last" if step == STEPS else " middle"
                seen[key][label].append(time.thread_time() - started)

        return call

    for saver in savers:
        for name in METHODS:
            setattr(saver.saver, name, timed(saver.key, name, getattr(saver.saver, name)))
    cpu: dict[str, list[float]] = defaultdict(list)
    for _ in range(max(runs // 10, 1)):
        for contender in contenders:
            for _ in range(10):
                started = time.process_time()
                contender.run(STEPS)
                cpu[contender.key].append(time.process_time() - started)
    for saver in savers:
        for name in METHODS:
            vars(saver.saver).pop(name, None)
    floor = statistics.median(cpu["none"])
    out: dict[str, list[str]] = {}
    for saver in savers:
        checkpoints = checkpoints_per_run(saver, builder)
        per_checkpoint = (statistics.median(cpu[saver.key]) - floor) / checkpoints * 1e3
        out[saver.key] = [f"process CPU {per_checkpoint:.3f} ms/checkpoint"] + [
            f"{label} {statistics.median(times) * 1e6:.0f}"
            for label, times in sorted(seen[saver.key].items())
        ]
    return out
