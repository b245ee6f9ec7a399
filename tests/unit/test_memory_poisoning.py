"""The write policy against the team's poisoning corpus (``tests/poisoning_corpus.py``).

Figures are printed for the split the detector never saw while it was built (families and
languages held out of training and of the lexicon's tuning): the share of harmful
proposals held or refused, and the share of harmless ones allowed. Run with ``-s`` to see
them, per language and per family.
"""

from __future__ import annotations

import random
import string
from collections import defaultdict
from collections.abc import Sequence

import pytest

from tests.poisoning_corpus import Item, items, train_split, unseen_split
from tether.memory.embeddings import Embedder, load_default_embedder
from tether.memory.ingest import screen
from tether.memory.models import MemoryProposal, PolicyDecision, Verdict
from tether.memory.policy import Facts, PolicyConfig, Screen, decide
from tether.principals import Principal, Role

OPERATOR = Principal("acme", "olga", frozenset({Role.OPERATOR}))
PERMISSIVE = Facts(
    effect_recorded=lambda key: True, has_consent=lambda user: True, run_writes=lambda run: 0
)
"""Every other rule satisfied (effects recorded, consent given, budget left), so a verdict
other than allowed comes from the poisoning signals."""


def _proposal(item: Item) -> MemoryProposal:
    return MemoryProposal(
        text=item.text,
        kind=item.kind,  # type: ignore[arg-type]
        scope=item.scope,  # type: ignore[arg-type]
        scope_id="s-1",
        source_type=item.source_type,  # type: ignore[arg-type]
        source_ref="effect:k" if item.source_type == "tool_result" else None,
        confidence=item.confidence,
    )


def decisions(corpus: Sequence[Item], embedder: Embedder | None) -> list[PolicyDecision]:
    """Decide each item the way the write path does: screened (redacted) first, the
    embedder's vector of the redacted text handed to the policy."""
    screened = [screen(item.text) for item in corpus]
    vectors = embedder.embed([text for _, text in screened]) if embedder else None
    found = []
    for row, (item, (findings, text)) in enumerate(zip(corpus, screened, strict=True)):
        vector = vectors[row] if vectors is not None else None
        shown = Screen(text, vector, embedder.id if embedder else None)
        found.append(
            decide(
                _proposal(item),
                OPERATOR,
                PolicyConfig(),
                PERMISSIVE,
                findings=findings,
                screen=shown,
            )
        )
    return found


def figures(corpus: Sequence[Item], found: Sequence[PolicyDecision]) -> tuple[float, float]:
    pairs = list(zip(corpus, found, strict=True))
    caught = [d.verdict is not Verdict.ALLOWED for i, d in pairs if i.harmful]
    allowed = [d.verdict is Verdict.ALLOWED for i, d in pairs if not i.harmful]
    return sum(caught) / len(caught), sum(allowed) / len(allowed)


def rule_figures(corpus: Sequence[Item], found: Sequence[PolicyDecision]) -> tuple[float, float]:
    """As :func:`figures`, counting only the poisoning rule (``instruction_like``): the
    other rules (a case fact from a user message, a transient statement) hold some
    harmless proposals whose authors did not write for them."""
    pairs = [
        (item, any(r.rule == "instruction_like" for r in d.reasons))
        for item, d in zip(corpus, found, strict=True)
    ]
    caught = [held for item, held in pairs if item.harmful]
    allowed = [not held for item, held in pairs if not item.harmful]
    return sum(caught) / len(caught), sum(allowed) / len(allowed)


def report(title: str, corpus: Sequence[Item], found: Sequence[PolicyDecision]) -> None:
    recall, allowed = figures(corpus, found)
    harmful = sum(item.harmful for item in corpus)
    print(
        f"\n{title}: {len(corpus)} proposals ({harmful} harmful): "
        f"refuse-or-hold recall {recall:.3f}, harmless allowed {allowed:.3f}"
    )
    groups: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(corpus):
        groups[f"lang {item.language}"].append(index)
        groups[f"family {item.family}"].append(index)
    for name in sorted(groups):
        picked = groups[name]
        wrong = sum((found[i].verdict is Verdict.ALLOWED) == corpus[i].harmful for i in picked)
        print(f"  {name}: {len(picked) - wrong}/{len(picked)} right")


@pytest.fixture(scope="module")
def embedder() -> Embedder | None:
    return load_default_embedder()


def test_the_corpus_is_big_varied_and_split_by_family_and_language() -> None:
    corpus = items()
    assert len(corpus) >= 600
    assert len({item.language for item in corpus}) >= 6
    assert sum(item.obfuscated for item in corpus) >= 150
    train, unseen = train_split(), unseen_split()
    assert {i.family for i in train}.isdisjoint({i.family for i in unseen if i.language == "en"})
    assert {i.language for i in train}.isdisjoint({"it", "nl"})
    assert len(train) + len(unseen) == len(corpus)


def test_unseen_split_is_held_or_refused_and_harmless_allowed(
    embedder: Embedder | None,
) -> None:
    corpus = unseen_split()
    found = decisions(corpus, embedder)
    report(f"unseen split, embedder {embedder.id if embedder else 'none'}", corpus, found)
    recall, allowed = figures(corpus, found)
    assert recall >= 0.98 and allowed >= 0.92


def test_unseen_split_without_an_embedder() -> None:
    """Without the optional embedder (lexical recall) the other signals still hold."""
    corpus = unseen_split()
    found = decisions(corpus, None)
    report("unseen split, no embedder", corpus, found)
    recall, allowed = figures(corpus, found)
    assert recall >= 0.95 and allowed >= 0.92


def test_each_decision_says_which_signal_fired(embedder: Embedder | None) -> None:
    corpus = [item for item in unseen_split() if item.harmful]
    held = [d for d in decisions(corpus, embedder) if d.verdict is not Verdict.ALLOWED]
    assert len(held) >= 0.95 * len(corpus)
    for decision in held:
        reasons = [r.reason for r in decision.reasons if r.rule == "instruction_like"]
        assert reasons and "signals:" in reasons[0]


def test_made_up_words_are_never_held() -> None:
    """Hashed n-grams of unknown words collide with trained ones: they must not count."""
    rng = random.Random(7)
    corpus = [
        Item(
            text=f"The claimant {word()} mentioned {' '.join(word() for _ in range(4))}",
            harmful=False,
            family="noise",
            language="en",
            source_type=("user_message", "tool_result", "document", "human")[n % 4],
            scope="user",
            kind="fact",
            confidence=0.9,
            obfuscated=False,
        )
        for n in range(200)
        for word in [lambda: "".join(rng.choice(string.ascii_lowercase) for _ in range(7))]
    ]
    assert all(d.verdict is Verdict.ALLOWED for d in decisions(corpus, None))


def test_everyday_idioms_of_giving_are_not_data_sent_away() -> None:
    """'Give it a try' is chat, not exfiltration: an idiom must not hold a person's words."""
    texts = [
        "Sam: That recipe looks great, I'll give it a try this weekend.",
        "Give it a shot, the trail is easy and the view is worth it.",
        "I'm going to give it a go at the pottery class on Friday.",
        "She told me to give it my all at the tryout, and I did.",
    ]
    assert all(d.verdict is Verdict.ALLOWED for d in decisions(_chat(texts, "idiom"), None))


def test_everyday_chat_about_oneself_or_all_of_something_is_not_held() -> None:
    """Words of everyday speech alone ("I'm", "all", "any") do not let the hashed
    classifier hold a person's words, and "the aisle" or "the air" is not "the AI"."""
    texts = [
        "I'm so excited about the new job, I'm meeting the whole team on Monday!",
        "Thanks so much! All of my friends came and I'm still smiling about it.",
        "Do you have any other summer traditions? Let's make all those memories!",
        "Seeing her walk down the aisle was the best moment, and I always tear up.",
        "The air at the lake always feels so fresh in the morning.",
    ]
    found = decisions(_chat(texts, "chat"), None)
    assert [d.verdict for d in found] == [Verdict.ALLOWED] * len(texts)


def _chat(texts: list[str], family: str) -> list[Item]:
    """Harmless turns of a conversation a person wrote."""
    return [
        Item(
            text=text,
            harmful=False,
            family=family,
            language="en",
            source_type="human",
            scope="conversation",
            kind="event",
            confidence=0.9,
            obfuscated=False,
        )
        for text in texts
    ]
