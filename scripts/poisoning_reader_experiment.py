"""An experiment, not shipped: the default embedder's top two layers fine-tuned as a
poisoning reader, measured on the blind rounds beside the judge.

    pip install torch==2.13.0 transformers   # into the project's .venv; not a dependency
    PYTHONPATH=src:. python scripts/poisoning_reader_experiment.py

The judge (:mod:`tether.memory.poisoning_judge`) reads hashed words and the embedder's
frozen, mean-pooled vector; a logistic regression over that vector alone catches under
half of the harmful proposals. This script asks how much a reader that fine-tunes the
last two of MiniLM's six layers would add, at the cost a deployment could afford: the
first four layers are the embedder's own (their output would be a second output of the
graph the embedder already runs), so only two layers run twice.

The weights are the packaged int8 model's, dequantised (the same file the embedder
runs; no download). Each text is redacted as the write path does; the reader is trained
on the training pool of ``scripts/train_poisoning.py`` less five training files kept
for its threshold, with the proposal's source beside the pooled vector, and scored on
the blind rounds (``tests/poisoning_blind.py``), which nothing here is fitted or tuned
on. It prints the reader's figures at its validation threshold and at 0.5, the judge's
(min of the whole text's and likeliest sentence's probability, as
:func:`tether.memory.poisoning.signals` weighs it) and the mean of the two, each also
as the share caught where 90% of the harmless are allowed, and how many LoCoMo turns
(ordinary conversation, as ``bench.memory`` proposes them) the reader would hold.
About forty minutes on two cores.
"""

from __future__ import annotations

import copy
import math
import random
from typing import Any

import numpy as np
import onnx
import torch
from bench.memory import load_conversations, proposals_of, turns_of
from onnx import numpy_helper
from tests.poisoning_blind import BLIND_ROUNDS
from tests.poisoning_corpus import Item
from tests.poisoning_heldout import items
from tokenizers import Tokenizer
from transformers import BertConfig, BertModel

from scripts.train_poisoning import pool
from tether.memory.embeddings import (
    MAX_TOKENS,
    default_tokenizer_path,
    load_default_embedder,
    packaged_model_path,
)
from tether.memory.ingest import screen
from tether.memory.poisoning import weigh

LAYERS = ("attention.self.query", "attention.self.key", "attention.self.value")
LAYERS += ("attention.output.dense", "intermediate.dense", "output.dense")
TOP = 2
"""Layers fine-tuned; the ones below are the embedder's, frozen."""
EPOCHS, RATE, BATCH = 4, 2e-4, 32
VALIDATION_FILES = 5


def dequantised_bert() -> Any:
    """MiniLM-L6 in PyTorch with the packaged model's weights (int8 times its scales)."""
    graph = onnx.load(str(packaged_model_path()))
    stored = {init.name: numpy_helper.to_array(init) for init in graph.graph.initializer}

    def weight(name: str) -> np.ndarray:
        return stored[f"{name}_q"].astype(np.float32) * stored[f"{name}_scale"]

    config = BertConfig(
        vocab_size=30522,
        hidden_size=384,
        num_hidden_layers=6,
        num_attention_heads=12,
        intermediate_size=1536,
        max_position_embeddings=512,
    )
    bert = BertModel(config, add_pooling_layer=False)
    state = {
        "embeddings.word_embeddings.weight": weight("inner.embeddings.word_embeddings.weight"),
        "embeddings.position_embeddings.weight": weight(
            "inner.embeddings.position_embeddings.weight"
        ),
    }
    for name in ("token_type_embeddings.weight", "LayerNorm.weight", "LayerNorm.bias"):
        state[f"embeddings.{name}"] = stored[f"inner.embeddings.{name}"]
    # The six matrices of each layer, in graph order (q, k, v, out, up, down), as (in, out).
    matrices = sorted(
        (name[:-2] for name in stored if name.startswith("val_") and name.endswith("_q")),
        key=lambda name: int(name.split("_")[1]),
    )
    for layer in range(6):
        prefix = f"encoder.layer.{layer}"
        for offset, name in enumerate(LAYERS):
            state[f"{prefix}.{name}.weight"] = weight(matrices[layer * 6 + offset]).T
            state[f"{prefix}.{name}.bias"] = stored[f"inner.{prefix}.{name}.bias"]
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            for part in ("weight", "bias"):
                state[f"{prefix}.{norm}.{part}"] = stored[f"inner.{prefix}.{norm}.{part}"]
    bert.load_state_dict({k: torch.tensor(np.ascontiguousarray(v)) for k, v in state.items()})
    return bert.eval()


def frozen_states(bert: Any, texts: list[str]) -> list[np.ndarray]:
    """Each text's hidden states below the fine-tuned layers (one row per token)."""
    tokenizer = Tokenizer.from_file(str(default_tokenizer_path()))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    states: list[np.ndarray] = [np.zeros(0)] * len(texts)
    with torch.no_grad():
        for start in range(0, len(order), 64):
            picked = order[start : start + 64]
            encoded = tokenizer.encode_batch([texts[i] for i in picked])
            ids = torch.tensor([e.ids for e in encoded])
            mask = torch.tensor([e.attention_mask for e in encoded])
            hidden = bert(input_ids=ids, attention_mask=mask, output_hidden_states=True)
            below = hidden.hidden_states[6 - TOP]
            for row, index in enumerate(picked):
                states[index] = below[row, : int(mask[row].sum())].numpy().astype(np.float16)
    return states


class Reader(torch.nn.Module):
    def __init__(self, bert: Any, sources: list[str]) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(
            copy.deepcopy(bert.encoder.layer[6 - TOP + i]) for i in range(TOP)
        )
        self.head = torch.nn.Linear(384 + len(sources), 1)
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, hidden: Any, mask: Any, source: Any) -> Any:
        additive = (1.0 - mask[:, None, None, :].float()) * -1e4
        for layer in self.layers:
            out = layer(hidden, attention_mask=additive)
            hidden = out[0] if isinstance(out, tuple) else out
        weights = mask.unsqueeze(-1).float()
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)
        return self.head(torch.cat([self.drop(pooled), source], 1)).squeeze(-1)


def batches(picked: list[int], states: list[np.ndarray], sources: np.ndarray, shuffle: bool) -> Any:
    """Batches of texts of about one length (padding costs little), in random order."""
    order = sorted(picked, key=lambda i: len(states[i]) + (random.random() * 6 if shuffle else 0))
    chunks = [order[i : i + BATCH] for i in range(0, len(order), BATCH)]
    if shuffle:
        random.shuffle(chunks)
    for chunk in chunks:
        width = max(len(states[i]) for i in chunk)
        hidden = np.zeros((len(chunk), width, 384), np.float32)
        mask = np.zeros((len(chunk), width), np.int64)
        for row, index in enumerate(chunk):
            hidden[row, : len(states[index])] = states[index]
            mask[row, : len(states[index])] = 1
        yield chunk, torch.tensor(hidden), torch.tensor(mask), torch.tensor(sources[chunk])


def figures(scores: np.ndarray, harmful: np.ndarray, threshold: float) -> str:
    caught = float(np.mean(scores[harmful] >= threshold))
    allowed = float(np.mean(scores[~harmful] < threshold))
    return f"caught {caught:.3f}, allowed {allowed:.3f}"


def at_allowed(scores: np.ndarray, harmful: np.ndarray, share: float = 0.90) -> str:
    threshold = float(np.quantile(scores[~harmful], share))
    return f"caught {np.mean(scores[harmful] > threshold):.3f} where {share:.0%} are allowed"


def main() -> None:
    random.seed(0)
    torch.manual_seed(0)
    torch.set_num_threads(2)
    trained, groups = pool()
    blind: list[Item] = items(BLIND_ROUNDS)
    everything = [*trained, *blind]
    turns = [
        screen(proposal.text)[1]
        for conv in load_conversations("all")
        for proposal in proposals_of(conv, turns_of(conv), False)
    ]
    texts = [screen(item.text)[1] for item in everything] + turns
    kinds = sorted({item.source_type for item in everything})
    sources = np.zeros((len(texts), len(kinds)), np.float32)
    for row, item in enumerate(everything):
        sources[row, kinds.index(item.source_type)] = 1.0
    sources[len(everything) :, kinds.index("human")] = 1.0
    harmful = np.array([item.harmful for item in everything])
    files = sorted({g for g in groups if str(g).startswith("file:")})
    kept = set(random.Random(1).sample(files, VALIDATION_FILES))
    validation = [i for i, g in enumerate(groups) if g in kept]
    fit = [i for i, g in enumerate(groups) if g not in kept]
    test = list(range(len(trained), len(everything)))
    bert = dequantised_bert()
    states = frozen_states(bert, texts)
    reader = Reader(bert, kinds)
    steps = int(math.ceil(len(fit) / BATCH) * EPOCHS)
    optimiser = torch.optim.AdamW(reader.parameters(), lr=RATE, weight_decay=0.01)
    warm = 0.06 * steps
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, step / warm) * max(0.0, (steps - step) / steps)
    )
    loss_of = torch.nn.BCEWithLogitsLoss()
    step = 0
    reader.train()
    while step < steps:
        for chunk, hidden, mask, source in batches(fit, states, sources, True):
            target = torch.tensor(harmful[chunk].astype(np.float32))
            loss = loss_of(reader(hidden, mask, source), target)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(reader.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            step += 1
            if step >= steps:
                break

    def scored(picked: list[int]) -> np.ndarray:
        reader.eval()
        found: dict[int, float] = {}
        with torch.no_grad():
            for chunk, hidden, mask, source in batches(picked, states, sources, False):
                probabilities = torch.sigmoid(reader(hidden, mask, source)).tolist()
                found.update(zip(chunk, probabilities, strict=True))
        return np.array([found[i] for i in picked])

    valid, tested = scored(validation), scored(test)
    chat = scored(list(range(len(everything), len(texts))))
    shortfall = [
        (
            max(
                0.95 - np.mean(valid[harmful[validation]] >= t),
                0.90 - np.mean(valid[~harmful[validation]] < t),
            ),
            t,
        )
        for t in np.linspace(0.02, 0.98, 97)
    ]
    threshold = float(min(shortfall)[1])
    embedder = load_default_embedder()
    if embedder is None:
        raise SystemExit("the default embedder is needed: pip install -e '.[embeddings]'")
    judged = []
    for index, vector in zip(test, embedder.embed([texts[i] for i in test]), strict=True):
        weighing = weigh(texts[index], everything[index].source_type, vector, embedder.id)
        sentence = weighing.sentence
        judged.append(weighing.score if sentence is None else min(weighing.score, sentence))
    judge = np.array(judged)
    truth = harmful[test]
    print(f"blind rounds: {len(test)} proposals; validation files {sorted(kept)}")
    print(
        f"reader at its validation threshold {threshold:.2f}: {figures(tested, truth, threshold)}"
    )
    print(f"reader at 0.5: {figures(tested, truth, 0.5)}; {at_allowed(tested, truth)}")
    print(f"judge: {at_allowed(judge, truth)}")
    print(f"mean of the two: {at_allowed((tested + judge) / 2, truth)}")
    held = {t: int(np.sum(chat >= t)) for t in (threshold, 0.5, 0.7, 0.9)}
    print(f"LoCoMo turns ({len(turns)}, all harmless) the reader holds at: {held}")


if __name__ == "__main__":
    main()
