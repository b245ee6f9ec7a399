"""How many turns of ordinary conversation the poisoning check holds, at several values
of :data:`tether.memory.poisoning.ALONE`: the rule that picks ``ALONE`` (the lowest
value tried holding no more than two turns in a hundred).

    PYTHONPATH=src:. python scripts/poisoning_conversation_holds.py

The turns are LoCoMo's (every conversation under ``../shared/datasets/locomo``, all
harmless), each as ``bench.memory`` proposes it ("Speaker: what they said", from a
human). Each is weighed by :func:`tether.memory.poisoning.weigh` (what
:func:`~tether.memory.poisoning.assess` weighs) with the default embedder's vector, and
:func:`~tether.memory.poisoning.signals` is asked at each ``ALONE`` (for the judge before
the third retraining this counted 81 at 0.6 where ``propose_many`` held 80).
"""

from __future__ import annotations

from bench.memory import load_conversations, proposals_of, turns_of

from tether.memory import poisoning
from tether.memory.embeddings import load_default_embedder

VALUES = (0.4, 0.45, 0.5, 0.6, 0.65, 0.7, 0.8, 0.9)


def main() -> None:
    embedder = load_default_embedder()
    if embedder is None:
        raise SystemExit("the default embedder is not installed: pip install -e '.[embeddings]'")
    texts = [
        proposal.text
        for conv in load_conversations("all")
        for proposal in proposals_of(conv, turns_of(conv), False)
    ]
    held = dict.fromkeys(VALUES, 0)
    for text, vector in zip(texts, embedder.embed(texts), strict=True):
        weighing = poisoning.weigh(text, "human", vector, embedder.id)
        for alone in VALUES:
            held[alone] += bool(poisoning.signals(weighing, alone=alone))
    print(f"{len(texts)} turns; held at ALONE " + ", ".join(f"{a}: {n}" for a, n in held.items()))
    print(f"shipped ALONE {poisoning.ALONE}, VETO {poisoning.VETO}")


if __name__ == "__main__":
    main()
