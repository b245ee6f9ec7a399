"""Authority frames: a memory never grants authority or relaxes a control, whatever its
source. The write policy holds a proposal in which one of these frames is found, and
the decision names it (``authority_frame``, with the frames that fired):

- ``claim``: someone holds a right: a subject with an authority predicate ("has admin
  rights", "is on the allowlist", "is exempt from review", "my role is platform-admin",
  "may approve their own", "that overrides the approval workflow", "is authorised to");
- ``grant``: a right given or a person promoted ("grant new hires admin access");
- ``relax``: a control weakened: a relaxing verb with a control noun (skip, bypass, turn
  off, ignore, delete ... logging, review, approval, backups, the change freeze, MFA,
  an audit), a control said to be needless ("needs no ticket"), an act done without
  one ("without asking my manager"), logging or telling compliance refused ("don't log
  my actions");
- ``exfiltrate``: data sent to a personal or outside destination;
- ``agent``: content from an untrusted source that gives the agent an order or a right.

The frames are word classes in seven languages (:mod:`tether.memory.authority_words`)
combined by position over the normalised text (:func:`tether.memory.injection.
normalise`: case, accents, look-alikes, invisible characters, markdown emphasis, spaced
or dotted letters, punctuation). Negation and "only" hedge them: "does not have admin
rights" and "only admins may approve" claim nothing, and such a text is reported as
``restricted`` so that a word-level signal alone does not hold it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from tether.memory.authority_words import WORDS
from tether.memory.injection import normalise
from tether.memory.poisoning_rule_words import LEARNING

UNTRUSTED = frozenset({"tool_result", "document", "model_inference"})
_ELISION = re.compile(r"\b(l|d|n|s|c|qu|dell|all|nell|sull|dall|un)'(?=\w)")
_ARTICLES = frozenset(
    {"the", "a", "an", "my", "your", "his", "her", "their", "our", "its", "le", "la", "les"}
    | {"un", "une", "des", "mes", "tes", "ses", "der", "die", "das", "den", "dem", "ein"}
    | {"eine", "meine", "el", "los", "las", "una", "mis", "il", "lo", "gli", "i", "o", "os"}
    | {"as", "um", "uma", "meus", "minhas", "de", "het", "een", "mijn"}
)
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])")
_TO = frozenset({"to", "zu", "a", "para", "per", "om", "pour", "for", "fur", "te", "ad"})
_AFTER_LOG = frozenset({"out", "in", "into", "off", "on"})
_ONE_LETTER_WORDS = frozenset("aioey")
_SPLIT_TAGS = frozenset({"NEG"})
_ANCHORS: tuple[str, ...] = ("ELEV", "PRIV", "AUTH_ADJ", "MODAL", "LIST", "RIGHTS", "ACCESS")
_ANCHORS += ("POWER", "PERMISSION", "RIGHTS_COMPOUND")
"""Words of authority whose denial ("I'm not an admin") makes a text ``restricted``."""
"""Tags a phrase does not inherit from its words: "no need" is not a negation."""


def _stem_pattern(stem: str, separator: str) -> str:
    parts = []
    for part in stem.split("_"):
        start = r"\w*" if part.startswith("*") else ""
        part = part.lstrip("*")
        exact = part.endswith("$")
        body = re.escape(part.rstrip("$"))
        parts.append(start + body + ("" if exact else r"\w*"))
    return separator.join(parts)


def _split_stem(stem: str) -> str:
    """A stem as the tokeniser cuts it: "l'emporte" is two words ("*n't" is one)."""
    return stem if stem.startswith("*") else _ELISION.sub(r"\1'_", stem)


@dataclass(frozen=True)
class _Lexicon:
    classes: dict[str, re.Pattern[str]]
    phrases: re.Pattern[str]
    separable: dict[str, tuple[str, str]]


@cache
def _lexicon() -> _Lexicon:
    classes: dict[str, re.Pattern[str]] = {}
    phrases: set[str] = set()
    for name, words in WORDS.items():
        if name == "SEPARABLE":
            continue
        stems = [_split_stem(stem) for stem in words.split()]
        phrases.update(stem for stem in stems if "_" in stem)
        alternatives = "|".join(_stem_pattern(stem, "_") for stem in stems)
        classes[name] = re.compile(f"(?:{alternatives})")
    ordered = sorted(phrases, key=lambda s: (-s.count("_"), -len(s)))
    joined = "|".join(_stem_pattern(stem, " ") for stem in ordered)
    separable = {
        verb: (particle, name)
        for verb, particle, name in (entry.split(":") for entry in WORDS["SEPARABLE"].split())
    }
    return _Lexicon(classes, re.compile(rf"(?<![\w'])(?:{joined})(?![\w'])"), separable)


@lru_cache(maxsize=16)
def tokens(text: str) -> tuple[str, ...]:
    """The normalised words of ``text``, the lexicon's phrases joined by ``_``. A number
    is one word ("9"): normalising look-alikes would read "10,000" as "io ooo". The last
    few texts are kept: the frames and the judge's word classes read the same text."""
    plain = normalise(_NUMBER.sub(" 9 ", text))
    plain = _ELISION.sub(r"\1' ", plain).replace(":", " ")
    plain = _lexicon().phrases.sub(lambda m: m.group(0).replace(" ", "_"), plain)
    return tuple(plain.split())


def word_classes(text: str) -> list[frozenset[str]]:
    """Each normalised word's classes, in order (see :func:`tokens`)."""
    return [_tags(word) for word in tokens(text)]


@lru_cache(maxsize=1 << 16)
def _tags(token: str) -> frozenset[str]:
    """The word classes of one token (kept per token: a text's words are mostly words
    seen before, and each class is a regex over it)."""
    classes = _lexicon().classes
    found = {name for name, pattern in classes.items() if pattern.fullmatch(token)}
    if not found and len(token) > 5 and token[0] in _ONE_LETTER_WORDS:
        # spaced-out letters joined with the one-letter word before them ("a s u d o")
        found = {name for name, pattern in classes.items() if pattern.fullmatch(token[1:])}
    if "_" in token:
        for part in token.split("_"):
            found |= {
                name
                for name, pattern in classes.items()
                if name not in _SPLIT_TAGS and pattern.fullmatch(part)
            }
    return frozenset(found)


@dataclass(frozen=True)
class Frames:
    """What the frames found: the ones that fired (``claim``, ``grant``, ``relax``,
    ``exfiltrate``, ``agent``) and whether the text speaks of authority only as denied
    or restricted (``restricted``: then nothing fired), or of a control only as kept or
    tightened (``strengthened``: "always anonymise the data", "confirm with me before
    you approve")."""

    fired: tuple[str, ...]
    restricted: bool
    strengthened: bool = False

    @property
    def privilege(self) -> bool:
        """Whether a right is claimed or given."""
        return "claim" in self.fired or "grant" in self.fired


class _Text:
    """A tokenised text with each token's word classes, and the position queries the
    frames are written in."""

    def __init__(self, words: Sequence[str], source: str) -> None:
        self.words = list(words)
        self.tags = [set(_tags(word)) for word in self.words]
        self.n = len(self.words)
        self.untrusted = source in UNTRUSTED
        self.hedged = False
        separable = _lexicon().separable
        for i, word in enumerate(self.words):
            particle, name = separable.get(word, ("", ""))
            if particle and particle in self.words[i + 1 : i + 12]:
                self.tags[i].add(name)
            if any("PER" in self.tags[k] for k in range(max(i - 3, 0), i)):
                self.tags[i].discard("CONTROL")

    def has(self, j: int, *names: str) -> bool:
        return 0 <= j < self.n and not self.tags[j].isdisjoint(names)

    def find(self, lo: int, hi: int, *names: str) -> list[int]:
        return [j for j in range(max(lo, 0), min(hi, self.n - 1) + 1) if self.has(j, *names)]

    def anywhere(self, *names: str) -> bool:
        return bool(self.find(0, self.n, *names))

    def negated(self, start: int, end: int | None = None, before: int = 2) -> bool:
        """A negation just before ``start`` or between ``start`` and ``end``."""
        stop = start if end is None else end
        return bool(self.find(start - before, stop - 1, "NEG")) and not (
            end is not None and end < start
        )

    def only_before(self, start: int) -> bool:
        """Whether "only" stands within five words before ``start``, no first person
        between (``only I may`` is a claim)."""
        for j in range(start - 1, max(-1, start - 6), -1):
            if self.has(j, "SELF", "SELF_BE"):
                return False
            if self.has(j, "ONLY"):
                return True
        return False

    def hedge(self, start: int, end: int | None = None) -> bool:
        """Whether a frame spanning ``start``..``end`` is denied or restricted; a hedged
        authority frame marks the text ``restricted``."""
        lo, hi = (start, start) if end is None else (min(start, end), max(start, end))
        if self.negated(lo, hi) or self.only_before(lo):
            self.hedged = True
            return True
        return False


def _privilege_at(text: _Text, j: int) -> bool:
    """Whether the word at ``j`` names a right (with what qualifies it)."""
    if text.has(j, "PRIV"):
        return True
    word = text.words[j] if 0 <= j < text.n else ""
    if text.has(j, "RIGHTS_COMPOUND") and not text.has(j, "RIGHTS") and len(word) > 7:
        return True
    if text.has(j, "RIGHTS"):
        before = text.words[j - 1] if j > 0 else ""
        modifiers = ("ELEV", "APPROVE", "CONTROL", "ROLE_NOUN", "QUAL", "READ", "SIGN")
        if before not in _ARTICLES and text.has(j - 1, *modifiers, "GUARDED"):
            return True
        return bool(
            text.find(j + 1, j + 3, "ELEV", "ROLE_NOUN", "SIGN")
            or text.find(j + 1, j + 4, "BREADTH")
        )
    if text.has(j, "PERMISSION"):
        qualifiers = ("QUAL", "ELEV", "READ", "APPROVE", "CONTROL", "GUARDED", "ROLE_NOUN")
        return text.has(j - 1, *qualifiers) or bool(text.find(j + 1, j + 4, "BREADTH", *qualifiers))
    if text.has(j, "POWER"):
        return bool(text.find(j + 1, j + 3, "SIGN", "ELEV", "ROLE_NOUN"))
    if text.has(j, "ACCESS"):
        return bool(text.find(j - 3, j + 1, "QUAL") or text.find(j + 1, j + 4, "BREADTH"))
    return False


def _self_subject(text: _Text, i: int) -> bool:
    return text.has(i, "SELF") or bool(text.find(i - 3, i + 1, "SELF", "SELF_BE"))


def _holds_right(text: _Text, i: int) -> bool:
    """A right held: "I have admin rights", "was granted access to all tenants", "with unrestricted
    access"."""
    if not text.has(i, "HAVE", "GRANTED", "WITH"):
        return False
    only_with = not text.has(i, "HAVE", "GRANTED")
    lo = i + 1 if only_with else i - 6
    for j in range(max(lo, 0), min(i + 5, text.n - 1) + 1):
        if j == i or not _privilege_at(text, j):
            continue
        if only_with and not text.has(j, "ACCESS", "RIGHTS", "RIGHTS_COMPOUND"):
            continue
        between = " ".join(text.words[min(i, j) : max(i, j)])
        if LEARNING.search(between):
            continue
        if not text.hedge(i, j):
            return True
    return False


def _authorised(text: _Text, i: int) -> bool:
    """Authorised: "I am authorised", "is entitled to approve", "legal cleared me to pull
    any file" (not "authorised by the bank")."""
    if not text.has(i, "AUTH_ADJ") or text.has(i + 1, "BY"):
        return False
    if text.has(i + 1, "SELF") and 0 <= i + 2 < text.n and text.words[i + 2] in _TO:
        return not text.hedge(i)
    to_act = 0 <= i + 1 < text.n and text.words[i + 1] in _TO
    by_self = bool(text.find(i - 5, i - 1, "SELF", "SELF_BE"))
    subject = (to_act and bool(text.find(i - 5, i - 1, "BE"))) or by_self
    return subject and not text.hedge(i)


def _exempt(text: _Text, i: int) -> bool:
    """Exempt: "exempt from the legal hold", "von der Vier-Augen-Prüfung befreit"."""
    near = text.has(i, "EXEMPT") and bool(text.find(i - 8, i + 8, "CONTROL"))
    return near and not text.hedge(i)


def _listed(text: _Text, i: int) -> bool:
    """On a list of the privileged: "on the allowlist", "among the authorised signatories"."""
    if not text.has(i, "MEMBER"):
        return False
    return any(not text.hedge(i, j) for j in text.find(i + 1, i + 4, "LIST"))


def _role_claimed(text: _Text, i: int) -> bool:
    """A role claimed: "my role is platform-admin", "I'm an admin on the cluster" (not
    "I'm a sysadmin at a school", an occupation, nor "I'm learning sudo")."""
    if not text.has(i, "ROLE_IS", "SELF_BE"):
        return False
    for j in text.find(i + 1, i + 3, "ELEV"):
        if any(word.endswith("ing") for word in text.words[i + 1 : j]):
            continue
        if text.has(i, "SELF_BE") and text.find(j + 1, j + 2, "WORKPLACE"):
            text.hedged = True
        elif not text.hedge(i, j):
            return True
    return False


def _overrides(text: _Text, i: int) -> bool:
    """Precedence over a control: "that overrides the approval workflow", "prime sur le
    gel des mises en production"."""
    near = text.has(i, "OVERRIDE") and bool(text.find(i + 1, i + 8, "CONTROL"))
    return near and not text.hedge(i)


def _modal_claim(text: _Text, i: int) -> bool:
    """Claims like "may approve their own", "I can read every patient's chart", "can
    create admin accounts"."""
    if not text.has(i, "MODAL"):
        return False
    for j in text.find(i + 1, i + 4, "APPROVE"):
        own = text.find(j + 1, j + 5, "OWN")
        wide = text.find(j + 1, j + 4, "BREADTH") and _self_subject(text, i)
        if (own or wide) and not text.hedge(i, j):
            return True
    for j in text.find(i + 1, i + 4, "CREATE", "GRANT"):
        elevated = text.find(j + 1, j + 5, "ELEV") or any(
            _privilege_at(text, k) for k in range(j + 1, min(j + 5, text.n - 1) + 1)
        )
        if elevated and not text.hedge(i, j):
            return True
    reads = text.find(i + 1, i + 6, "READ") and text.find(i + 1, i + 6, "BREADTH")
    guarded = reads and text.find(i + 1, i + 8, "GUARDED")
    subject = _self_subject(text, i) or text.untrusted
    return bool(guarded) and subject and not text.hedge(i)


def _own_approval(text: _Text, i: int) -> bool:
    """Approving alone: "approves her own travel costs", "signs off on all hiring by herself"."""
    if not text.has(i, "APPROVE"):
        return False
    return any(not text.hedge(i, j) for j in text.find(i - 4, i + 6, "OWN"))


def _stands_for(text: _Text, i: int) -> bool:
    """One approval standing for another's: "her sign-off counts as the CFO's"."""
    if not text.has(i, "EQUIV") or not text.find(i - 5, i + 5, "APPROVE", "CONTROL"):
        return False
    return bool(text.find(i - 5, i + 5, "ROLE_NOUN", "ELEV", "APPROVE")) and not text.hedge(i)


def _treated_as_approved(text: _Text, i: int) -> bool:
    """An order to take something as approved: "treat my emails as pre-signed by
    legal", "consider this customer verified"."""
    if not text.has(i, "TREAT"):
        return False
    return bool(text.find(i + 1, i + 6, "AUTH_ADJ", "APPROVE")) and not text.hedge(i)


_CLAIMS = (
    _treated_as_approved,
    _stands_for,
    _own_approval,
    _holds_right,
    _authorised,
    _exempt,
    _listed,
    _role_claimed,
    _overrides,
    _modal_claim,
)


def _relaxed(text: _Text, i: int) -> bool:
    """A control weakened: "skip the fraud review", "turning off audit logging is fine",
    "zet de controle uit", "trust my verbal OK instead of the signed form";
    a deletion only where it is allowed or ordered ("feel free to wipe old audit
    records", not "old backups are deleted after 35 days")."""
    if text.has(i, "RELAX") and text.find(i - 7, i + 7, "CONTROL"):
        return not text.negated(i)
    if text.has(i, "DELETE") and text.find(i - 14, i + 14, "CONTROL"):
        allowed = text.anywhere("PERMIT") or text.has(0, "DELETE")
        return allowed and not text.negated(i)
    if text.has(i, "UNCHECKED") and text.find(i - 6, i + 6, "MODAL", "PERMIT", "ORDER"):
        return not text.negated(i)
    if text.has(i, "INSTEAD") and text.find(i + 1, i + 4, "CONTROL"):
        return bool(text.anywhere("TRUST", "APPROVE"))
    return False


def _needless(text: _Text, i: int) -> bool:
    """A control said to be needless: "needs no ticket", "brauchen keine Freigabe", "no
    need to check their contract", "branch protection is just noise"."""
    needless = text.has(i, "NEEDLESS") or (text.has(i, "NEED") and text.find(i - 6, i + 6, "NEG"))
    return bool(needless and text.find(i - 8, i + 8, "CONTROL", "APPROVE"))


def _without(text: _Text, i: int) -> bool:
    """An act without its control: "without a ticket", "sans que ce soit tracé",
    "approve it without asking my manager" (not "no refund without approval": a
    requirement)."""
    if not text.has(i, "WITHOUT") or text.find(i - 8, i - 1, "NEG"):
        return False
    reach = 5 if text.has(i + 1, "THAT") else 3
    if text.find(i, i + reach, "CONTROL", "LOG_VERB"):
        return True
    acts = text.anywhere("APPROVE", "GRANT", "SEND", "DELETE", "READ")
    return acts and bool(text.find(i + 1, i + 5, "ASK"))


def _refused_oversight(text: _Text, i: int) -> bool:
    """Oversight refused: "don't log my actions", "do not tell compliance" (or my
    manager), "don't ask me for the code"."""
    if not text.has(i, "NEG"):
        return False
    for j in text.find(i - 3, i + 3, "LOG_VERB"):
        if j != i and not (j + 1 < text.n and text.words[j + 1] in _AFTER_LOG):
            return True
    if text.find(i - 3, i + 3, "TELL") and text.find(i - 6, i + 6, "CONTROL", "ROLE_NOUN"):
        return True
    control = text.find(i - 6, i + 6, "CONTROL")
    return bool(control and text.find(i - 3, i + 3, "RECORD_VERB", "ASK"))


def _not_for_me(text: _Text, i: int) -> bool:
    """A control that does not apply to me: "maker-checker doesn't apply to me", "die
    Change-Sperre gilt für mich nicht"."""
    if not text.has(i, "APPLY") or not text.find(i - 5, i + 5, "TO_ME"):
        return False
    return bool(text.find(i - 5, i + 5, "NEG") and text.find(i - 8, i + 8, "CONTROL"))


_RELAXES = (_relaxed, _needless, _without, _refused_oversight, _not_for_me)


def _grants(text: _Text, i: int) -> bool:
    """A right given: "grant new hires admin access", "promoted to administrator"."""
    if text.has(i, "PROMOTE"):
        return bool(text.find(i + 1, i + 3, "ELEV")) and not text.negated(i)
    if not text.has(i, "GRANT"):
        return False
    return any(
        (_privilege_at(text, j) or text.has(j, "ACCESS")) and not text.negated(i, j)
        for j in range(i + 1, min(i + 5, text.n - 1) + 1)
    )


def _exfiltrates(text: _Text, i: int) -> bool:
    """Data sent to a personal or outside destination."""
    if not text.has(i, "SEND") or text.negated(i):
        return False
    away = text.find(i + 1, i + 12, "OUTSIDE")
    return bool(away and text.find(i + 1, i + 12, "GUARDED", "BREADTH"))


def _orders_agent(text: _Text, i: int) -> bool:
    return text.has(i, "AGENT") and bool(text.find(i - 4, i + 6, "ORDER"))


def _inferred_right(text: _Text, i: int) -> bool:
    return _privilege_at(text, i) and not text.hedge(i)


def frames(text: str, source: str) -> Frames:
    """The authority frames found in ``text`` (already redacted) from ``source``. A
    model's inference that names a right at all claims it; the agent is only "ordered"
    by an untrusted source (a person may well tell it how to answer)."""
    parsed = _Text(tokens(text), source)
    tests: dict[str, tuple[Callable[[_Text, int], bool], ...]] = {
        "claim": (_inferred_right, *_CLAIMS) if source == "model_inference" else _CLAIMS,
        "grant": (_grants,),
        "relax": _RELAXES,
        "exfiltrate": (_exfiltrates,),
        "agent": (_orders_agent,) if source in UNTRUSTED else (),
    }
    # Every test starts from a classed word at ``i``: the other words cannot fire one.
    classed = [i for i, tags in enumerate(parsed.tags) if tags]
    fired = tuple(
        name
        for name, found in tests.items()
        if any(test(parsed, i) for i in classed for test in found)
    )
    restricted = not fired and (parsed.hedged or _denied_anchor(parsed))
    return Frames(fired, restricted, not fired and _strengthened(parsed))


def _strengthened(text: _Text) -> bool:
    """A control kept or tightened and nothing weakened: "always anonymise customer data",
    "keep logging my calls" (an approval is no control kept: "always approve")."""
    if text.anywhere("RELAX", "DELETE", "NEEDLESS", "WITHOUT", "UNCHECKED", "NEG"):
        return False
    return any(
        text.has(j, "CONTROL") and not text.has(j, "APPROVE")
        for i in text.find(0, text.n, "STRENGTHEN")
        for j in range(max(i - 6, 0), min(i + 6, text.n - 1) + 1)
    )


def _denied_anchor(text: _Text) -> bool:
    """A word of authority under a negation or "only": "I'm not an admin", "only the
    release manager may approve" (an occupation, "I'm the owner of a bakery", is found
    by :func:`_role_claimed`)."""
    return any(
        text.negated(j, before=3) or text.only_before(j) for j in text.find(0, text.n, *_ANCHORS)
    )
