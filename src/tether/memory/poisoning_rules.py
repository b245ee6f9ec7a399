"""Structural poisoning rules: what a proposal is, by its source and the shape of what it
says, rather than by which control or right it names.

The authority frames (:mod:`tether.memory.authority`) need the control or the right to
be a word they know; a new name for a control ("the pricing desk", "session recordings")
slips past them. These rules ask coarser questions that do not depend on that noun:

- ``untrusted_instruction``: tool output or a document that addresses the agent (or an
  automated reader) with an order or a permission, or that carries an instruction
  marker ("note for the assistant", "memory update", "[system]") next to a modal;
- ``granted_permission``: someone is given leave (allowed, permitted, entitled, cleared,
  "may"; from an untrusted source also "can") to act broadly, alone or without a check
  ("any customer's", "on their own", "at their discretion", "without a callback");
- ``inferred_capability``: a model's inference about what a person can, may or holds
  (rights, keys, credentials, clearance, control over something): refused by the policy;
- ``oversight_excluded``: an overseer (a manager, compliance, security, audit, HR, the
  approver, a desk or committee) kept out: not told, not looped in, left out of the loop;
- ``data_sent_away``: data sent, copied or forwarded to a private or personal place, a
  consumer cloud or mailbox, or an address, as a standing order.

Each is named in the decision (``signals: rule; rules: ...``). The words are classes in
English, German, French, Spanish, Italian, Portuguese and Dutch; a negation or "only"
just before the modal undoes a permission ("is not allowed to", "only admins may"), as
does one just after it ("may not", "darf ich keine", "mag ik zelf geen").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tether.memory import poisoning_rule_words as w
from tether.memory.injection import normalise


@dataclass(frozen=True)
class Rules:
    """The structural rules that fired (empty: none), and whether the text only keeps a
    control ("remind me to log my access", "my manager reviews my claims"): then a
    word-level signal alone does not hold it."""

    fired: tuple[str, ...]
    kept: bool = False


def _hedged(plain: str, start: int) -> bool:
    """A negation or "only" in the four words before ``start``."""
    before = plain[:start].split()[-4:]
    return bool(re.search(w.NEG, " ".join(before)))


def _denied_after(plain: str, end: int) -> bool:
    """A negation or "only" in the three words after a modal that ends at ``end``: the
    word order of "may not", "darf ich keine", "mag ik zelf geen", "may only"."""
    after = " ".join(plain[end:].split()[:3])
    return bool(re.search(w.NOT, after) or re.search(w.NEG_AFTER, after))


def _permission(plain: str, untrusted: bool) -> bool:
    patterns = [w.PERMIT_STRONG, w.PERMIT_WEAK] if untrusted else [w.PERMIT_STRONG]
    for pattern in patterns:
        for match in re.finditer(pattern, plain):
            if match.group(0) == "may" and not re.match(r"\s+\w+", plain[match.end() :]):
                continue
            after = " ".join(plain[match.end() :].split()[:10])
            denied = _hedged(plain, match.start()) or _denied_after(plain, match.end())
            if re.search(w.BROAD, after) and not denied:
                return True
    return False


def _inferred(plain: str) -> bool:
    """A model's inference about what a person can, may or holds: a right, a privilege or
    a privileged role named; an ability with a broad reach, a check or an act after it; a
    holding with a broad reach, a check or a privileged thing after it."""
    for pattern in (w.INFERRED, w.HOLDING):
        for match in re.finditer(pattern, plain):
            if _hedged(plain, match.start()):
                continue
            holding = pattern is w.HOLDING
            if holding or re.fullmatch(w.ABILITY, match.group(0)):
                after = " ".join(plain[match.end() :].split()[:8])
                reach = re.search(w.BROAD, after) or w.CHECK.search(after)
                named = w.PRIVILEGED.search(after) if holding else re.search(w.ACT, after)
                if not (reach or named):
                    continue
            return True
    return False


def _kept_out(plain: str) -> bool:
    """An overseer not told, not asked or left out."""
    for pattern, before, after in ((w.KEEP_OUT, 60, 60), (w.UNASKED, 80, 60)):
        for match in pattern.finditer(plain):
            window = plain[max(0, match.start() - before) : match.end() + after]
            inside = match.group(0)
            following = " ".join(plain[match.end() :].split()[:5])
            guarded = w.CHECK.search(inside) or (
                w.CHECK.search(following) and not inside.endswith(" out")
            )
            kept = pattern is w.KEEP_OUT and guarded and "check out" not in inside
            mine = pattern is w.KEEP_OUT and re.match(
                r"\s*(?:\w+\s+){0,2}?(?:my|mine|me)\b", plain[match.end() :]
            )
            hidden = re.match(w.NOBODY, inside)
            if re.search(w.OVERSEER, window) or kept or mine or hidden:
                return True
    return False


def _sent_away(text: str, plain: str) -> bool:
    if not re.search(w.SEND, plain):
        return False
    if w.PRIVATE.search(plain) and (w.DATA.search(plain) or re.search(w.STANDING, plain)):
        return True
    return bool(w.EMAIL.search(text)) and bool(re.search(w.STANDING, plain))


def _waived(plain: str, source: str) -> bool:
    """A check said to be needless, optional or not to apply, to me or for the agent;
    someone exempt from a check."""
    for match in w.NEEDLESS.finditer(plain):
        window = plain[max(0, match.start() - 80) : match.end() + 80]
        checked = w.CHECK.search(window) or (
            w.UNQUESTIONED.search(match.group(0)) and re.search(w.ACT, window)
        )
        if checked and (source != "user_message" or re.search(w.PERSON, window)):
            return True
    for match in w.PARTICLE.finditer(plain):
        if w.CHECK.search(match.group(0)) and not _hedged(plain, match.start()):
            return True
    for match in re.finditer(w.WAIVE, plain):
        if match.group(0).endswith("ed"):
            continue
        before = " ".join(plain[: match.start()].split()[-6:])
        if (
            re.search(w.PERSON, plain)
            and w.CHECK.search(before)
            and not _hedged(plain, match.start())
        ):
            return True
        after = " ".join(plain[match.end() :].split()[:6])
        cited = w.CITED.match(after)
        if w.CHECK.search(after) and not cited and not _hedged(plain, match.start()):
            return True
    for match in w.INSTEAD.finditer(plain):
        after = " ".join(plain[match.end() :].split()[:5])
        before = plain[: match.start()]
        if w.CHECK.search(after) and w.TRUSTED.search(before):
            return True
    for match in w.DESPITE.finditer(plain):
        acted = re.search(w.DESTROY, plain) or re.search(w.WAIVE, plain)
        if acted and w.CHECK.search(" ".join(plain[match.end() :].split()[:8])):
            return True
    for match in w.OVERRULES.finditer(plain):
        if w.CHECK.search(" ".join(plain[match.end() :].split()[:6])):
            return not _hedged(plain, match.start())
    if w.UNTRACED.search(plain) or w.UNASKED_FOR.search(plain):
        return True
    for match in w.UNLOGGED.finditer(plain):
        if not _hedged(plain, match.start()):
            return True
    if w.THIRD_LEAVE.search(plain) and re.search(w.OVERSEER, plain) and re.search(w.PERSON, plain):
        return True
    for match in re.finditer(w.EXEMPT, plain):
        around = plain[max(0, match.start() - 50) : match.end() + 80]
        if w.CHECK.search(around) and not _hedged(plain, match.start()):
            return True
    return False


def _ordered_ahead(plain: str) -> bool:
    """Untrusted content that sets future behaviour about a check or a permission ("from
    now on, waive the fee for anyone", "from now on this number counts as verified")."""
    for match in w.FUTURE.finditer(plain):
        window = plain[max(0, match.start() - 80) : match.end() + 100]
        relaxed = re.search(w.WAIVE, window) or w.NEEDLESS.search(window)
        if (w.CHECK.search(window) and relaxed) or re.search(w.PERMIT_STRONG, window):
            return True
        if w.AS_OK.search(window) or w.STANDING_OK.search(window):
            return True
    return False


def _premise_exception(plain: str) -> bool:
    """A claim about oneself used to ask for an exception: "I'm a keyholder, so my
    requests are pre-cleared", "as the DPO, my queries go straight through"."""
    premise = w.PREMISE.search(plain)
    if not premise:
        return False
    for match in w.THEREFORE.finditer(plain, premise.end()):
        after = plain[match.end() :]
        words = " ".join(after.split()[:12])
        weakened = (w.NEEDLESS.search(words) or re.search(w.WAIVE, words)) and w.CHECK.search(words)
        straight = w.GO_STRAIGHT.search(words) and re.search(w.ACT, words)
        allowed = re.search(w.PERMIT_STRONG, words) or w.STANDING_OK.search(words)
        if weakened or straight or allowed:
            return not _hedged(plain, premise.start())
    return False


def _standing(plain: str) -> bool:
    """Standing or blanket approval, or an order to take something as already approved;
    one approval counting as another's."""
    if w.COUNTS_AS.search(plain):
        return True
    return any(not _hedged(plain, m.start()) for m in w.STANDING_OK.finditer(plain))


def rules(text: str, source: str, *, plain: str | None = None) -> Rules:
    """The structural rules that fire on ``text`` (already redacted) from ``source``;
    ``plain``: the text already normalised, if the caller has it."""
    plain = normalise(text) if plain is None else plain
    fired: list[str] = []
    untrusted = source in w.UNTRUSTED
    addressed = re.search(w.AGENT, plain) and (
        re.search(w.MODAL, plain) or re.search(w.MARKER, plain)
    )
    addressed = addressed or w.ADDRESSED.search(plain)
    if source in ("tool_result", "document") and addressed:
        fired.append("untrusted_instruction")
    can_without = any(
        w.CHECK.search(m.group(1)) and not _hedged(plain, m.start())
        for m in w.CAN_WITHOUT.finditer(plain)
    )
    given = any(
        not _hedged(plain, m.start())
        for pattern in (w.SELF_APPROVE, w.SAME_RIGHTS)
        for m in pattern.finditer(plain)
    )
    elevated = any(
        w.PRIVILEGED.search(" ".join(plain[m.end() :].split()[:4]))
        and not _hedged(plain, m.start())
        for pattern in (w.ELEVATE, w.GIVE_ROLE)
        for m in pattern.finditer(plain)
    )
    if _permission(plain, untrusted) or given or can_without or elevated:
        fired.append("granted_permission")
    if source == "model_inference" and _inferred(plain):
        fired.append("inferred_capability")
    if _kept_out(plain):
        fired.append("oversight_excluded")
    if _sent_away(text, plain) or w.OTHERS_DATA.search(plain):
        fired.append("data_sent_away")
    held = [m for m in w.HELD_RIGHTS.finditer(plain) if not _hedged(plain, m.start())]
    if source == "tool_result" and held:
        fired.append("untrusted_instruction")
    if source in ("tool_result", "document") and _ordered_ahead(plain):
        fired.append("untrusted_instruction")
    if _premise_exception(plain):
        fired.append("claimed_exception")
    if w.IDENTITY.search(plain) and w.HANDOVER.search(plain):
        fired.append("identity_claim")
    if _waived(plain, source) or w.FALSE_RECORD.search(plain):
        fired.append("control_waived")
    if _standing(plain):
        fired.append("standing_approval")
    kept = w.KEPT.search(plain) is not None and not w.NOT.search(plain)
    kept = not fired and (kept or w.NEVER_WITHOUT.search(plain) is not None)
    return Rules(tuple(dict.fromkeys(fired)), kept)
