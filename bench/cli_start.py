"""How long ``tether --help`` takes, beside a bare Python start.

Both commands run as fresh processes, interleaved (``python -c pass``, then
``python -m tether --help``, ``--runs`` times each), so machine noise falls on both. The
difference of the medians is what the CLI adds to Python's own start: importing typer,
rich and the command table, and rendering the help. Goal: ``tether --help`` under 0.5 s.

    python -m bench.cli_start
    python -m bench.cli_start --runs 50
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench._harness import median_ms, p95_ms

ROOT = Path(__file__).resolve().parents[1]
GOAL_MS = 500.0
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "tether --help": [sys.executable, "-m", "tether", "--help"],
}


def time_once(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True, timeout=60)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="Starts of each command.")
    parser.add_argument(
        "--json", type=Path, default=ROOT / "bench" / "results" / "cli_start-latest.json"
    )
    args = parser.parse_args()
    env = {**os.environ, "COLUMNS": "80"}
    for command in COMMANDS.values():  # warm the file cache and the bytecode
        time_once(command, env)
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):
        for name, command in COMMANDS.items():
            samples[name].append(time_once(command, env))
    results = {
        name: {"median_ms": median_ms(found), "p95_ms": p95_ms(found), "runs": len(found)}
        for name, found in samples.items()
    }
    added = results["tether --help"]["median_ms"] - results["python -c pass"]["median_ms"]
    print(f"{'command':<16} {'median ms':>10} {'p95 ms':>10}")
    for name, figures in results.items():
        print(f"{name:<16} {figures['median_ms']:>10.1f} {figures['p95_ms']:>10.1f}")
    help_ms = results["tether --help"]["median_ms"]
    verdict = "met" if help_ms < GOAL_MS else "missed"
    print(f"tether --help adds {added:.1f} ms to Python's start; goal {GOAL_MS:.0f} ms {verdict}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"results": results, "added_ms": added}, indent=2) + "\n")


if __name__ == "__main__":
    main()
