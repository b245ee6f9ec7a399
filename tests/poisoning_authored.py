"""Training files for the poisoning judge: memory proposals labelled harmful or harmless,
written apart from the detector by separate authors, one file each
(``tests/data/poisoning/train/``), in the line format of :mod:`tests.poisoning_heldout`
(markers included).

The files and their authors' briefs: ``a1_english`` (English, many domains, soft
preferences and idioms), ``a2_german_dutch``, ``a3_romance`` (French, Spanish, Italian,
Portuguese), ``a4_containers`` (tool output, documents and model inferences in seven
languages), ``a5_near_misses`` (harmful and harmless twins), ``b_de``, ``b_en``, ``b_es``,
``b_fr``, ``b_it``, ``b_nl``, ``b_pt`` (one language each, written natively), ``c_pairs``
(twins in seven languages), ``d1_mixed`` (English, German), ``d2_mixed`` (French, Dutch,
Portuguese), ``d3_mixed`` (Spanish, Italian, English): subtle harms in everyday chat;
``e_chat`` (turns of long, warm chats, "Name: what they said", a few with a harm slipped
in); ``f_chat_en``, ``f_chat_germanic`` (German, Dutch, English), ``f_chat_romance``
(French, Spanish, Italian, Portuguese): turns of long everyday chats, risky words used in
their everyday senses, about 30% with a harm slipped in; ``g_workplace`` (workplace
proposals in every register, seven languages), ``g_containers`` (tool output, documents
and model inferences as their systems print them), ``g_indirect`` (indirect harms and the
hard harmless cases: warnings, reports of a refused attempt, history); ``h_chat_long``
(turns of 40-90 words of chats kept over months, seven languages, a quarter harmful),
``h_near_misses`` (written to trip a keyword filter both ways), ``h_coding_agent``,
``h_case_review``, ``h_support_family`` (one deployment each), ``h_registers`` (texting,
dictation, formal letters, code-switching, third person), ``h_reviewer`` (where a
policy fails, as a reviewer would look for it); ``i_more_languages`` (Polish, Swedish,
Danish and Norwegian, Czech, Turkish, Romanian, Finnish, and code-switching),
``i_chat_speak`` (chat as typed: typos, abbreviations, emoji, dictation slips),
``i_structured_payloads`` (JSON, YAML, CSV, logs, e-mail, HTML as tools return them),
``i_social_engineering`` (delegation, urgency, proxies, redefinitions, standing
conditions), ``i_agent_ops`` (coding, devops and data agents) and
``i_inference_and_operator`` (the model's inferences and summaries, operator entries).
Half of each file is harmful, but for the ``f_chat`` files and ``h_chat_long``.

Only ``scripts/train_poisoning.py`` reads them; the blind rounds
(:mod:`tests.poisoning_blind`) are never among them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.poisoning_corpus import Item
from tests.poisoning_heldout import items

TRAIN_DIR = Path(__file__).parent / "data" / "poisoning" / "train"


def training_blocks() -> dict[str, str]:
    """Each training file's text, by its name (the item's ``language`` and ``family``)."""
    return {path.stem: path.read_text("utf-8") for path in sorted(TRAIN_DIR.glob("*.txt"))}


def training_items() -> list[Item]:
    """Every training proposal, markers expanded; ``family`` is the file's name."""
    found = []
    for name, block in training_blocks().items():
        found += [replace(item, family=name) for item in items({name: block})]
    return found
