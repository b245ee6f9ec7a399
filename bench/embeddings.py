"""Cold start and throughput of Tether's default embedder (all-MiniLM-L6-v2, int8 ONNX).

Both computes of ``MiniLMEmbedder`` are measured side by side: ``int8`` (the default: the
graph rewritten at load so that its weight products run on int8 kernels) and ``float``
(``TETHER_EMBEDDER=minilm-float``: the file as shipped, weights dequantised to float32).

Cold start: a fresh Python process imports ``tether.memory.embeddings``, builds a
``MiniLMEmbedder`` and embeds one short text; the figure is construct + first embed (which
includes importing numpy, onnxruntime and tokenizers, checking both files' SHA-256, the
int8 rewrite and building the session), timed inside the process so interpreter start-up
is left out. Median and p95 of ``--cold-runs`` processes per compute.

Throughput: ``--texts`` generated memories of ~30 tokens (``memory_texts``), embedded in
one call at batch 64 after a warm-up call, ``--passes`` times per compute, the computes
interleaved pass by pass; texts/s from the median. CPU time per text (all threads) moves
less with the machine's load than texts/s does. The hashing embedder (a test aid, no
model) runs the same workload as a floor for the cost of the plumbing.

    python -m bench.embeddings               # the quick set (about a minute on 2 cores)
    python -m bench.embeddings --passes 1 --cold-runs 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata

from bench._harness import machine, median_ms, p95_ms
from tether.memory import embeddings

COLD_START = """
import json, sys, time
started = time.perf_counter()
from tether.memory.embeddings import MiniLMEmbedder
imported = time.perf_counter()
embedder = MiniLMEmbedder(compute=sys.argv[1])
embedder.embed(["Alice prefers email over phone calls."])
done = time.perf_counter()
print(json.dumps({"import_s": imported - started, "cold_s": done - imported}))
"""

_LEADS = ["On Monday,", "Yesterday", "In the retro,", "Last week", "During the call,"]
_NAMES = ["Alice", "Bob", "Priya", "Chen", "Mateo", "Fatima", "Olga", "Kwame"]
_SUBJECTS = [
    "the quarterly budget review",
    "the database migration",
    "her daughter's piano recital",
    "the customer escalation from Acme",
    "his knee surgery",
    "the new onboarding checklist",
    "the offsite in Lisbon",
    "the flaky payment tests",
]
_VERBS = ["moved", "asked about", "is worried about", "wants a summary of", "cancelled", "signed"]
_DETAILS = [
    "next Tuesday at 3pm",
    "because the vendor missed the deadline",
    "and prefers email over phone calls",
    "after the team lunch",
    "so the release slips by a week",
    "with a note to follow up in March",
    "and mentioned it twice in standup",
    "before her flight to Nairobi",
]


def memory_texts(count: int, seed: int = 7) -> list[str]:
    """``count`` memory-like sentences, reproducibly: ~30 tokens each (17-41 with [CLS], [SEP])."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = [
            *([rng.choice(_LEADS)] if rng.random() < 0.6 else []),
            rng.choice(_NAMES),
            rng.choice(_VERBS),
            rng.choice(_SUBJECTS),
            *rng.sample(_DETAILS, 3 if rng.random() < 0.75 else 2),
        ]
        texts.append(" ".join(parts) + ".")
    return texts


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


COMPUTES = ("int8", "float")


def cold_start(runs: int, compute: str) -> list[dict[str, float]]:
    """Per fresh process: seconds to import the module, and to construct + embed once."""
    samples = []
    for _ in range(runs):
        result = subprocess.run(
            [sys.executable, "-c", COLD_START, compute],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"cold-start process failed:\n{result.stderr.strip()}")
        samples.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return samples


def throughput(embed: Callable[[Sequence[str]], object], texts: list[str], passes: int) -> float:
    """Texts per second embedding ``texts`` in one call (median of ``passes``)."""
    embed(texts[:128])
    times = []
    for _ in range(passes):
        started = time.perf_counter()
        embed(texts)
        times.append(time.perf_counter() - started)
    return len(texts) / statistics.median(times)


def interleaved(
    embedders: dict[str, Callable[[Sequence[str]], object]], texts: list[str], passes: int
) -> dict[str, tuple[float, float]]:
    """Per embedder: texts/s (median pass) and CPU seconds per text, passes interleaved."""
    for embed in embedders.values():
        embed(texts[:128])
    walls: dict[str, list[float]] = {name: [] for name in embedders}
    cpus: dict[str, list[float]] = {name: [] for name in embedders}
    for _ in range(passes):
        for name, embed in embedders.items():
            cpu_started, started = time.process_time(), time.perf_counter()
            embed(texts)
            walls[name].append(time.perf_counter() - started)
            cpus[name].append(time.process_time() - cpu_started)
    return {
        name: (
            len(texts) / statistics.median(walls[name]),
            statistics.median(cpus[name]) / len(texts),
        )
        for name in embedders
    }


def mean_tokens(texts: list[str]) -> float:
    from tokenizers import Tokenizer

    from tether.memory.embeddings import default_tokenizer_path

    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
    tokenizer.no_padding()
    return statistics.mean(len(e.ids) for e in tokenizer.encode_batch(texts))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.embeddings", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--texts", type=int, default=1000, help="memories per pass")
    parser.add_argument("--passes", type=int, default=5, help="timed passes")
    parser.add_argument("--cold-runs", type=int, default=5, help="fresh processes timed")
    parser.add_argument("--batch-size", type=int, default=64)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from tether.memory.embeddings import HashingEmbedder, MiniLMEmbedder, probe_default_embedder

    probe = probe_default_embedder()
    if probe.embedder is None:
        log(f"no default embedder: {probe.why}")
        return 1
    texts = memory_texts(args.texts)
    log(f"cold start: {args.cold_runs} fresh processes per compute")
    cold = {compute: cold_start(args.cold_runs, compute) for compute in COMPUTES}
    log(f"throughput: {args.passes} passes over {len(texts)} texts per compute")
    minilm = {
        compute: MiniLMEmbedder(batch_size=args.batch_size, compute=compute) for compute in COMPUTES
    }
    rates = interleaved({compute: e.embed for compute, e in minilm.items()}, texts, args.passes)
    hashing_rate = throughput(HashingEmbedder().embed, texts, args.passes)

    info = machine(None)
    versions = {name: metadata.version(name) for name in ("onnxruntime", "tokenizers", "numpy")}
    print(
        f"\nEmbedding on the CPU - {info['date']}, {info['cores']} cores ({info['cpu']}), "
        f"Python {info['python']}, "
        + ", ".join(f"{name} {version}" for name, version in versions.items())
        + f", load average {os.getloadavg()[0]:.1f}"
    )
    print(
        "embedders: "
        + "; ".join(f"{compute}: {embedder.id}" for compute, embedder in minilm.items())
        + f"\nworkload: {len(texts)} memories, {mean_tokens(texts):.1f} tokens on average, "
        f"batch {args.batch_size}\n"
    )
    float_rate = rates["float"][0]
    rows: list[tuple[str, ...]] = []
    for compute in COMPUTES:
        default = compute == embeddings.EMBEDDER_CHOICES["default"]
        label = f"MiniLM, {compute} compute" + (" (default)" if default else "")
        cold_s = [sample["cold_s"] for sample in cold[compute]]
        rate, cpu_per_text_s = rates[compute]
        rows += [
            (
                "cold start: construct + first embed",
                label,
                f"{median_ms(cold_s):.0f} ms",
                f"{p95_ms(cold_s):.0f} ms",
                "target < 1000 ms",
            ),
            (
                "throughput, ~30-token memories",
                label,
                f"{rate:.0f} texts/s",
                "",
                "target >= 200 texts/s"
                + ("" if compute == "float" else f"; {rate / float_rate:.2f}x float"),
            ),
            ("  CPU time per text (all threads)", label, f"{cpu_per_text_s * 1000:.2f} ms", "", ""),
        ]
    import_s = [sample["import_s"] for compute in COMPUTES for sample in cold[compute]]
    rows += [
        (
            "import tether.memory.embeddings",
            "",
            f"{median_ms(import_s):.0f} ms",
            f"{p95_ms(import_s):.0f} ms",
            "before the cold start",
        ),
        (
            "throughput, same texts",
            "hashing (test aid)",
            f"{hashing_rate:.0f} texts/s",
            "",
            f"ratio {hashing_rate / rates['int8'][0]:.0f}x int8",
        ),
    ]
    header = ("workload", "embedder", "median", "p95", "note")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * width for width in widths), *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
