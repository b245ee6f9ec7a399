"""Instruction-like text: what an untrusted source must not slip into memory unreviewed.

Text is normalised first so casing, spacing, look-alike letters and invisible characters
do not hide it: Unicode NFKC, case folding, zero-width characters removed, common
Cyrillic and Greek look-alikes mapped to Latin, markdown emphasis (``_ * ~ ` ``) dropped,
letters spaced out one by one or joined by dots (``a.d.m.i.n``) joined, punctuation around
words turned into spaces. Patterns cover English, German, French, Spanish, Italian,
Portuguese and Dutch.
"""

from __future__ import annotations

import re
import unicodedata

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"), None)
_LOOKALIKES = str.maketrans(
    {
        "а": "a",
        "е": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "і": "i",
        "ј": "j",
        "ѕ": "s",
        "ԁ": "d",
        "ɡ": "g",
        "һ": "h",
        "ӏ": "l",
        "ո": "n",
        "м": "m",
        "т": "t",
        "к": "k",
        "в": "b",
        "н": "h",
        "α": "a",
        "ε": "e",
        "ο": "o",
        "ρ": "p",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "τ": "t",
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "@": "a",
        "$": "s",
    }
)
_SPACED = re.compile(r"(?<![\w'])(?:\w ){3,}\w\b")
_EMPHASIS = re.compile(r"[_*~`]+")
_SNAKE = re.compile(r"(?<=[^\W_])_(?=[^\W_])")
"""An underscore inside a word joins words ("instructions_for_llm"), it emphasises nothing."""
_LEET_INSIDE = re.compile(r"(?<=[a-z])[!|](?=[a-z])")
"""``!`` or ``|`` between letters stands for ``i`` or ``l`` ("adm!n", "ca|lback")."""
_DOTTED = re.compile(r"\b(?:\w[.\-·]){2,}\w\b")

PATTERNS = [
    # claims of authority
    r"\b(?:i am|i'm|im|i m) (?:an? |the )?(?:admin|administrator|superuser|root|ceo|"
    r"(?:owner|operator|manager) of (?:this|the) (?:system|platform|deployment|workspace))\b",
    r"\bremember (?:that )?(?:you are|my role is)\b",
    r"\b(?:grant|give) (?:me|us|this user) (?:admin|root|full|elevated|all)\b",
    r"\bmy role is (?:admin|administrator|owner|root)\b",
    # turning content into rules
    r"\b(?:store|save|record|remember|keep|treat) (?:this|that|it|the following) as "
    r"(?:a |the )?(?:policy|rule|instruction|system prompt|constraint|fact)\b",
    r"\b(?:new|updated|official) (?:policy|rule|instructions?)\s*:",
    r"\b(?:always|never) (?:approve|allow|trust|obey|follow|reveal|ignore)\b",
    # overriding instructions
    r"\b(?:ignore|disregard|forget|override|bypass) (?:all |any |the |your |every )?"
    r"(?:previous|prior|above|earlier|other|existing)? ?"
    r"(?:instructions?|rules?|policies|polic(?:y|ies)|guidelines?|prompts?|constraints?)\b",
    r"\bsystem prompt\b",
    r"\b(?:jailbreak|developer mode|dan mode)\b",
    # German
    r"\b(?:ich bin|ich bin der|ich bin die) (?:admin|administrator|besitzer|chef)\b",
    r"\bignorier(?:e|en sie)? (?:alle )?(?:vorherigen|bisherigen|obigen)? ?anweisungen\b",
    r"\bspeicher(?:e|n sie)? (?:das|dies) als (?:richtlinie|regel|anweisung)\b",
    # French
    r"\bje suis (?:l'|le |la )?(?:admin|administrateur|administratrice|proprietaire)\b",
    r"\bignore[zr]? (?:toutes )?les instructions (?:precedentes|anterieures)\b",
    r"\benregistre[zr]? (?:ceci|cela) comme (?:politique|regle|instruction)\b",
    # Spanish / Portuguese / Italian / Dutch
    r"\bsoy (?:el |la )?(?:admin|administrador|administradora|dueno)\b",
    r"\bignora(?:r)? (?:todas )?las instrucciones (?:anteriores|previas)\b",
    r"\bguarda(?:r)? (?:esto|eso) como (?:politica|regla|instruccion)\b",
    r"\beu sou (?:o |a )?(?:admin|administrador|administradora)\b",
    r"\bignore (?:todas )?as instrucoes anteriores\b",
    r"\bsono (?:l'|il |la )?(?:admin|amministratore|amministratrice)\b",
    r"\bignora (?:tutte )?le istruzioni (?:precedenti)\b",
    r"\bik ben (?:de |een )?(?:admin|beheerder|eigenaar)\b",
    r"\bnegeer (?:alle )?(?:vorige|eerdere) instructies\b",
]
_COMPILED = [re.compile(pattern) for pattern in PATTERNS]


def normalise(text: str) -> str:
    """The text as the patterns see it (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    if not text.isascii():  # ASCII has no accents to strip
        text = "".join(
            ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)
        )
    text = _SNAKE.sub(" ", text.casefold())
    text = _EMPHASIS.sub("", text)
    text = _DOTTED.sub(lambda m: re.sub(r"[.\-·]", "", m.group(0)), text)
    text = text.translate(_LOOKALIKES)
    text = _LEET_INSIDE.sub(lambda m: "i" if m.group(0) == "!" else "l", text)
    text = _SPACED.sub(lambda m: m.group(0).replace(" ", ""), text)
    text = re.sub(r"[^\w':]+", " ", text)
    text = _SPACED.sub(lambda m: m.group(0).replace(" ", ""), text)
    return re.sub(r"\s+", " ", text).strip()


def looks_like_instruction(text: str, *, plain: str | None = None) -> str | None:
    """The pattern an instruction-like text matched, or ``None``; ``plain``: the text
    already normalised, if the caller has it."""
    plain = normalise(text) if plain is None else plain
    for pattern in _COMPILED:
        if pattern.search(plain):
            return pattern.pattern
    return None
