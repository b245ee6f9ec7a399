"""Memory poisoning: text that would give someone authority, switch off a control or steer
the agent once it is remembered. The write policy's ``instruction_like`` rule asks
:func:`assess` and holds (or refuses) what it flags.

Every signal is named in the decision so a reviewer sees why a proposal was held. The
``judge`` (:mod:`tether.memory.poisoning_judge`) decides: a logistic regression over the
text, the authority word classes in order and what each of the other signals found,
trained by ``scripts/train_poisoning.py`` on the team's corpora (weights in
``poisoning_model.json``, with and without the default embedder's vector): it holds a
text on its own from :data:`ALONE` (a text of several sentences only when one sentence,
weighed alone, reaches it too), and overrules the word-level evidence below
:data:`VETO`. When it holds a text, the other signals that fired are named after it as
its evidence. Whatever the judge says, the structural signals hold on their own, since no
memory grants authority or instructs the agent:

- ``rule``: the structural rules of :mod:`tether.memory.poisoning_rules` (untrusted
  content addressing the agent, permissions granted broadly or without a check, a
  model's inference about what someone can do, overseers kept out, data sent away,
  checks waived, standing approvals, claimed exceptions, identity claims), named after
  the rules that fired; they do not depend on which control or right is named;
- ``structural``: content from an untrusted source (tool output, an imported document,
  a model's inference) that speaks about authority, permissions, identity or the agent's
  behaviour, whatever it asks for.

The judge's evidence, each also a feature it weighs:

- ``authority_frame``: a right claimed or given, a control relaxed, data sent away or
  (from an untrusted source) the agent ordered, found by the frames of
  :mod:`tether.memory.authority`. The frames also hedge the judge: a text that speaks of
  authority only as denied or restricted ("Mark does not have admin rights", "only the
  release manager may approve"), or of a control only as kept, is not held by the judge
  alone;
- ``pattern``: the fixed instruction patterns of :mod:`tether.memory.injection`;
- ``lexicon``: the multilingual categories alone make a claim (a right claimed or granted),
  a bypass (a control weakened), an order to the agent or data sent away;
- ``classifier`` and ``embedding``: the two logistic regressions the judge came after
  (:class:`tether.memory.poisoning_judge.WordClassifiers`), over hashed words and over
  the default embedder's vector, fitted on the corpus's train split.

The lexicon (:data:`.poisoning_lexicon.LEXICON`) is a set of word stems per category, in
English, German, French, Spanish, Italian, Portuguese and Dutch, with fewer stems in
Polish, Swedish, Turkish and Japanese (a Japanese stem matches inside a word: the script
has no spaces), matched on the normalised text (:func:`tether.memory.injection.normalise`:
case, accents, look-alike letters, markdown emphasis, letters spaced out or joined by
dots, punctuation around words).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tether.memory.authority import frames
from tether.memory.injection import looks_like_instruction, normalise
from tether.memory.poisoning_judge import (
    class_features,
    digest,
    evidence_features,
    judges,
    text_features,
)
from tether.memory.poisoning_lexicon import LEXICON
from tether.memory.poisoning_rules import rules

UNTRUSTED_SOURCES = frozenset({"tool_result", "document", "model_inference"})
CLAIM_CATEGORIES = ("directive", "weaken", "self", "grant")
ALONE = 0.45
"""From this probability the judge holds a text on its own (a text of several sentences
only when one sentence, weighed alone, reaches it too): the lowest value at which the
check holds no more than two in a hundred turns of ordinary conversation (the LoCoMo
turns as ``bench.memory`` proposes them, counted by
``scripts/poisoning_conversation_holds.py``: 71 of 4,124 at 0.45, 87 at 0.4). Weighing
whole texts only, the same rule asked for 0.7 (69 held; 102 at 0.6). Cross-validated on
the training pool (every fold one author's file left out), the whole check: see
``docs/memory.md``."""
VETO = 0.3
"""Below this probability the judge overrules a frame, a pattern, the lexicon or the word
classifiers (never a structural rule): at every ``ALONE`` the cross-validated scores
allow more at the same share held with 0.3 than with 0.1 or 0.2."""
CONCERN_CLASSES = frozenset(
    {
        "PRIV", "PERMISSION", "RIGHTS", "RIGHTS_COMPOUND", "CONTROL", "AGENT", "APPROVE",
        "EXEMPT", "LOG_VERB", "RECORD_VERB", "SEND", "ACCESS", "OVERRIDE", "UNCHECKED",
        "NEEDLESS", "ELEV", "ROLE_NOUN", "SIGN", "DELETE", "LIST", "AUTH_ADJ", "PROMOTE",
        "GUARDED", "OUTSIDE", "TREAT", "EQUIV",
    }
)  # fmt: skip
"""Word classes of :mod:`.authority_words` that speak of authority, a control, the agent
or data leaving: without one of them (or a lexicon category beyond "I", "all", "any", or
another signal) the judge does not hold a text on its own."""
_EVERYDAY = frozenset({"self", "breadth"})
"""Categories of everyday speech ("I'm", "all", "any"): with no other category and no
other signal, the judge does not hold a text ("I'm thrilled, all of it was great")."""
_STEERING = frozenset({"agent", "weaken", "exfiltrate", "directive"})
"""Categories a denial or "only" does not excuse: an order, a bypass, data sent away (a
control kept or tightened excuses an order: "always anonymise the data")."""
_BELIEF = re.compile(
    r"\b(?:the|het|de|il|lo|das|le|el|o)?\s*(?:model|modell|modele|modelo|modello|assistant|"
    r"assistent|assistente|asistente|ai|llm|ki|ia)\s+(?:thinks|believes|infers|inferred|"
    r"assumes|guesses|concludes|concluded|deduces|estimates|suspects|reckons|denkt|gelooft|"
    r"vermoedt|schat|leidt af|glaubt|vermutet|schliesst|nimmt an|pense|croit|suppose|deduit|"
    r"estime|conclut|cree|piensa|supone|deduce|estima|concluye|ritiene|crede|suppone|"
    r"stima|conclude|acha|julga|supoe|deduz|conclui)\b(?:\s+(?:that|dass|dat|que|che|qu))?"
)
"""A model's inference naming itself as the one who believes ("the model thinks that",
"il modello ritiene che"): the writer, not the agent addressed."""


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


@dataclass(frozen=True)
class Assessment:
    """What the detector found: the signals behind a hold (empty: nothing is held), the
    lexicon's categories, the judge's probability and which weights gave it
    (``lexical`` or ``embedding``), the instruction pattern, and the authority frames and
    structural rules that fired (whether or not the judge held the text)."""

    signals: tuple[str, ...]
    categories: tuple[str, ...]
    score: float
    judged_by: str
    pattern: str | None
    frames: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()

    @property
    def privilege(self) -> bool:
        """Whether the text speaks of someone's authority (roles, permissions, rights)."""
        named = "privilege" in self.categories or "role" in self.categories
        inferred = "inferred_capability" in self.rules
        return named or inferred or "claim" in self.frames or "grant" in self.frames


def categories(plain: str) -> tuple[str, ...]:
    """The lexicon categories found in normalised text."""
    return tuple(name for name, pattern in LEXICON.items() if pattern.search(plain))


def structural(found: Sequence[str], source: str) -> bool:
    """Whether untrusted content asserts authority or instructs the agent: it addresses
    the agent, it speaks of rights or roles as a claim, a grant or an order, or (a
    model's inference) it says anything about someone's rights or role."""
    if "agent" in found:
        return True
    if "privilege" not in found and "role" not in found:
        return False
    return source == "model_inference" or any(name in found for name in CLAIM_CATEGORIES)


def lexical(found: Sequence[str]) -> bool:
    """Whether the categories alone make a claim, a bypass or an order, from any source:
    a right granted, ordered or claimed over a control; a role used to weaken or order; a control
    weakened; the agent told what to do; data sent away."""
    has = set(found)
    if "privilege" in has and has & {"grant", "directive", "weaken"}:
        return True
    if "privilege" in has and "self" in has and has & {"control", "role", "breadth"}:
        return True
    if "role" in has and has & {"weaken", "directive", "grant"}:
        return True
    if "control" in has and "weaken" in has:
        return True
    if "agent" in has and has & {"directive", "weaken"}:
        return True
    return "exfiltrate" in has


@dataclass(frozen=True)
class Reading:
    """Everything the signals found in one text, and the judge's features of it."""

    found: tuple[str, ...]
    evidence: tuple[str, ...]
    pattern: str | None
    frames: tuple[str, ...]
    rules: tuple[str, ...]
    names: list[str]
    digests: list[int]
    """Each of :attr:`names` hashed once (:func:`.poisoning_judge.digest`)."""
    classes: frozenset[str]
    """The authority word classes the text holds."""
    excused: bool
    """Whether the text speaks of authority only as denied or restricted, or of a control
    only as kept or tightened, and asks nothing of the agent (then the judge, which
    weighs words, does not hold it on its own)."""


def read(text: str, source: str) -> Reading:
    """Run every signal but the judge on ``text`` (already redacted)."""
    plain = normalise(text)
    found = categories(_BELIEF.sub(" ", plain) if source == "model_inference" else plain)
    framed = frames(text, source)
    evidence: list[str] = ["authority_frame"] if framed.fired else []
    pattern = looks_like_instruction(text, plain=plain)
    if pattern is not None:
        evidence.append("pattern")
    if source in UNTRUSTED_SOURCES and structural(found, source):
        evidence.append("structural")
    if lexical(found):
        evidence.append("lexicon")
    ruled = rules(text, source, plain=plain)
    words = text_features(plain, source, found)
    names = words + class_features(text, source)
    names += evidence_features(source, evidence, framed, ruled.fired, ruled.kept)
    digests = [digest(name) for name in names]
    classifier = judges().words
    everyday = _EVERYDAY.issuperset(found)
    if not everyday and classifier.hashed(digests[: len(words)]) >= classifier.threshold:
        evidence.append("classifier")
    classes = frozenset(name[2:] for name in names if name.startswith("t:") and "|" not in name)
    excused = framed.restricted and _STEERING.isdisjoint(found)
    excused = excused or (framed.strengthened and _STEERING.isdisjoint(set(found) - {"directive"}))
    excused = excused or ruled.kept
    # No word the lexicons know but "I", "all" or "any", and no frame, rule or pattern:
    # hashed n-grams of unknown words collide with trained ones.
    excused = excused or (not classes and everyday and not evidence)
    return Reading(
        found,
        tuple(evidence),
        pattern,
        framed.fired,
        ruled.fired,
        names,
        digests,
        classes,
        excused,
    )


def embedding_evidence(vector: Sequence[float] | None, source: str, reading: Reading) -> bool:
    """Whether the word classifiers' embedding regression finds ``vector`` (the default
    embedder's) harmful, counted only when the text has a lexicon word beyond "I", a role
    or "all"."""
    words = judges().words
    if vector is None or len(vector) != len(words.embedding_weights):
        return False
    if all(name in ("self", "role", "breadth") for name in reading.found):
        return False
    return words.embedded(vector, source) >= words.embedding_threshold


@dataclass(frozen=True)
class Weighing:
    """What :func:`signals` weighs for one text: its :class:`Reading`, the judge's
    probability of the whole text and of its likeliest sentence, whether the embedding
    classifier found it of concern, and which weights scored it."""

    reading: Reading
    score: float
    embedded: bool
    judged_by: str
    """``"embedding"`` or ``"lexical"``."""
    sentence: float | None = None
    """The highest probability the judge gives one sentence of the text weighed alone
    (with the whole text's vector); ``None`` for a text of one sentence, or one whose
    whole score is under the least ``alone`` it was weighed for (:func:`weigh`)."""


def signals(weighing: Weighing, *, alone: float = ALONE, veto: float = VETO) -> tuple[str, ...]:
    """The signals that hold a text, from its :class:`Weighing`; ``alone`` and ``veto``
    as :data:`ALONE` and :data:`VETO` (the training script weighs other values on
    cross-validated scores).

    The judge holds a text of several sentences on its own only when one sentence,
    weighed alone, also reaches ``alone``: a harm sits in a sentence, while the judge's
    word weights pile up over the many sentences of ordinary chat."""
    reading, score = weighing.reading, weighing.score
    evidence = [*reading.evidence, "embedding"] if weighing.embedded else list(reading.evidence)
    concern = bool(set(reading.found) - _EVERYDAY or evidence or reading.classes & CONCERN_CLASSES)
    likeliest = score if weighing.sentence is None else min(score, weighing.sentence)
    held: list[str] = []
    if not reading.excused:
        if likeliest >= alone and concern:
            held = ["judge", *evidence]
        elif evidence and score >= veto:
            held = evidence
    if "structural" in reading.evidence and "structural" not in held:
        held.append("structural")
    if reading.rules:
        held.append("rule")
    return tuple(held)


def sentences(text: str) -> list[str]:
    """``text`` cut after each ``.``, ``!``, ``?`` or ``;`` followed by a space or a line
    break (the parts the judge weighs one by one)."""
    return [part for part in _SENTENCE_END.split(text) if part.strip()]


def weigh(
    text: str,
    source: str,
    vector: Sequence[float] | None,
    embedder_id: str | None,
    *,
    least: float = VETO,
) -> Weighing:
    """What :func:`signals` weighs for ``text``. :func:`assess` is this and
    :func:`signals`; ``scripts/poisoning_conversation_holds.py`` asks :func:`signals` at
    other thresholds. The sentences are weighed only when the whole text's probability
    reaches ``least`` (the lowest ``alone`` it will be asked at: under it, no sentence can
    change what :func:`signals` says)."""
    reading = read(text, source)
    weights = judges()
    chosen = weights.pick(vector, embedder_id)
    judge = chosen or weights.lexical
    # one conversion for both models (an embedder may hand over numpy scalars)
    values = [float(v) for v in vector] if chosen is not None and vector is not None else None
    score = judge.score(reading.digests, values)
    embedded = values is not None and embedding_evidence(values, source, reading)
    parts = sentences(text) if score >= least else []
    sentence = None
    if len(parts) > 1:
        sentence = max(judge.score(read(part, source).digests, values) for part in parts)
    return Weighing(reading, score, embedded, "embedding" if chosen else "lexical", sentence)


def assess(
    text: str,
    source: str,
    *,
    vector: Sequence[float] | None = None,
    embedder_id: str | None = None,
) -> Assessment:
    """Run every signal on ``text`` (already redacted: no PII or secret reaches here) and
    let the judge (:mod:`.poisoning_judge`) weigh them.

    The text is held when the judge's probability reaches :data:`ALONE` (for a text of
    several sentences, on one of them weighed alone too) and the text speaks of
    something of concern (:data:`CONCERN_CLASSES`); when another signal fired
    and the judge's probability is at least :data:`VETO`; when a structural rule fired
    (:mod:`.poisoning_rules`) or untrusted content speaks of authority or to the agent
    (:func:`structural`): those two hold whatever the judge says, since no memory may
    grant authority or instruct the agent. Nothing but a structural rule holds a text
    that speaks of authority only as denied or of a control only as kept. ``vector`` is the
    installed embedder's vector of ``text``; it counts only when that embedder is the
    default model the judge was trained with.
    """
    weighing = weigh(text, source, vector, embedder_id, least=ALONE)
    reading = weighing.reading
    return Assessment(
        signals(weighing),
        reading.found,
        weighing.score,
        weighing.judged_by,
        reading.pattern,
        reading.frames,
        reading.rules,
    )
