"""The checks every value passes at the public boundary, before anything touches storage.

One walk (:func:`check_value`) refuses what either backend would choke on or store
wrongly: text with lone surrogates (invalid UTF-8 from a terminal or a broken string) or
NUL characters, text longer than :data:`MAX_TEXT`, integers outside 64 bits, NaN and
infinities, non-string mapping keys and nesting deeper than :data:`MAX_DEPTH`. Rules by
parameter name (:data:`RULES`) add what a name always means across the API: a ``limit``
is a positive count, a ``ttl_s`` a finite positive duration, a ``*_days`` at least one day.

:func:`guarded` applies both to every public method of a service class, so a new method
is checked without anyone remembering to; the result of a failed check is
:class:`~tether.errors.InvalidInput` naming the field, raised before the method runs, so
nothing is changed. Canonical JSON (:mod:`tether.canonical`) runs the same walk on what it
stores, and the storage layer on every query parameter, so both backends refuse the same
values the same way.
"""

from __future__ import annotations

import enum
import functools
import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, timedelta
from pathlib import PurePath
from typing import Any, ParamSpec, TypeVar
from uuid import UUID

from pydantic import BaseModel, ValidationError

from tether.errors import InvalidInput

MAX_DEPTH = 64
"""Deepest nesting of lists and mappings accepted anywhere (state, answers, values)."""
MAX_TEXT = 1_000_000
"""Most characters of any one string (specific fields have their own, lower limits)."""
MAX_ID = 256
"""Most characters of an identifier (any ``*_id`` parameter, a key, a scope id)."""
INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
MAX_LIMIT = 100_000

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
Rule = Callable[[str, Any], None]
_SCALARS = (bool, datetime, date, timedelta, UUID, enum.Enum, PurePath, bytes, type(None))


def check_text(field: str, value: str, *, max_chars: int = MAX_TEXT) -> None:
    """Refuse text that is not valid Unicode for storage, holds NUL, or is too long."""
    if len(value) > max_chars:
        raise InvalidInput(f"{field} is {len(value)} characters long: at most {max_chars}")
    if "\x00" in value:
        raise InvalidInput(
            f"{field} holds a NUL character (\\x00) at position {value.index(chr(0))}: remove it"
        )
    if value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"{field} is not valid text: a lone surrogate at position {exc.start} (invalid "
            "UTF-8 in the input, or a broken string); pass valid UTF-8"
        ) from None


def _check_number(field: str, value: float) -> None:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput(f"{field} is {value}: numbers must be finite")
    elif not INT_MIN <= value <= INT_MAX:
        raise InvalidInput(f"{field} is out of range: integers must fit in 64 bits")


def check_value(field: str, value: Any, *, depth: int = 0) -> None:
    """Walk ``value`` and refuse anything no backend can store faithfully.

    Mappings, sequences, sets and pydantic models are walked; other objects (workflows,
    callables, principals, which check themselves) are code, not data, and are left alone.
    A first walk builds no field names (a state of a thousand items would build a
    thousand); only a value it finds wrong is walked again to name the culprit.
    """
    if not _storable(value, depth):
        _name_problem(field, value, depth)


def _storable(value: Any, depth: int) -> bool:
    """Whether :func:`_name_problem` would find nothing wrong with ``value``."""
    kind = type(value)
    if kind is str or isinstance(value, str):
        return (
            len(value) <= MAX_TEXT
            and "\x00" not in value
            and (value.isascii() or _encodable(value))
        )
    if kind is int or kind is float:
        return math.isfinite(value) if kind is float else INT_MIN <= value <= INT_MAX
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int):
        return INT_MIN <= value <= INT_MAX
    if depth >= MAX_DEPTH:
        return False
    if kind is dict or isinstance(value, Mapping):
        return _storable_keys(value) and _storable_items(value.values(), depth + 1)
    if kind is list or isinstance(value, (list, tuple, set, frozenset)):
        return _storable_items(value, depth + 1)
    if isinstance(value, BaseModel):
        extra = value.__pydantic_extra__ or {}
        return _storable_items((item for _, item in value), depth + 1) and _storable_items(
            extra.values(), depth + 1
        )
    return True


def _storable_items(items: Iterable[Any], depth: int) -> bool:
    """:func:`_storable` of each item, the common leaves decided inline (a call per
    item is most of the walk's cost)."""
    for item in items:
        kind = type(item)
        if kind is str:
            if len(item) > MAX_TEXT or "\x00" in item or not (item.isascii() or _encodable(item)):
                return False
        elif kind is int:
            if not INT_MIN <= item <= INT_MAX:
                return False
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif item is not None and kind is not bool and not _storable(item, depth):
            return False
    return True


def _storable_keys(mapping: Mapping[Any, Any]) -> bool:
    for key in mapping:
        if type(key) is not str and not isinstance(key, str):
            return False
        if len(key) > MAX_TEXT or "\x00" in key or not (key.isascii() or _encodable(key)):
            return False
    return True


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _name_problem(field: str, value: Any, depth: int) -> None:
    """The walk that names what is wrong: raises for the first value it refuses."""
    kind = type(value)
    if kind is int or kind is float:
        _check_number(field, value)
    elif isinstance(value, str):
        check_text(field, value)
    elif isinstance(value, _SCALARS):
        return
    elif isinstance(value, (int, float)):
        _check_number(field, value)
    elif depth >= MAX_DEPTH:
        raise InvalidInput(f"{field} is nested more than {MAX_DEPTH} levels deep")
    elif kind is dict or isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInput(
                    f"{field} has a {type(key).__name__} key ({key!r}): mapping keys must "
                    "be strings"
                )
            check_text(f"{field} key", key)
            _name_problem(f"{field}.{key}"[:200], item, depth + 1)
    elif kind is list or isinstance(value, (list, tuple, set, frozenset)):
        for index, item in enumerate(value):
            _name_problem(f"{field}[{index}]", item, depth + 1)
    elif isinstance(value, BaseModel):
        for name, item in value:
            _name_problem(f"{field}.{name}", item, depth + 1)
        for name, item in (value.__pydantic_extra__ or {}).items():
            _name_problem(f"{field}.{name}", item, depth + 1)


def check_params(params: Mapping[str, Any]) -> None:
    """The storage net: every parameter bound to a query is a storable scalar.

    It runs on every statement of the step path, so the common cases are decided by exact
    type with C-level scans (ASCII text of storable length without NUL, an int64), and
    only a suspect value takes the detailed check that names the problem.
    """
    for name, value in params.items():
        kind = type(value)
        if kind is str:
            if len(value) > MAX_TEXT or "\x00" in value or not value.isascii():
                check_text(name, value)
        elif kind is int:
            if not INT_MIN <= value <= INT_MAX:
                raise InvalidInput(f"{name} is out of range: integers must fit in 64 bits")
        elif value is None or kind is bool or kind is bytes:
            continue
        elif kind is float:
            if not math.isfinite(value):
                raise InvalidInput(f"{name} is {value}: numbers must be finite")
        elif kind is list or kind is tuple:
            for item in value:
                check_value(name, item)
        elif isinstance(value, str):
            check_text(name, value)
        elif (
            isinstance(value, int)
            and not isinstance(value, bool)
            and not INT_MIN <= value <= INT_MAX
        ):
            raise InvalidInput(f"{name} is out of range: integers must fit in 64 bits")


# --- rules by parameter name ------------------------------------------------------------


def _integer(field: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{field} must be an integer, not {type(value).__name__}")
    if not low <= value <= high:
        raise InvalidInput(f"{field} is {value}: use {low} to {high}")


def integer(low: int, high: int = INT_MAX, *, optional: bool = False) -> Rule:
    """An integer in ``low..high`` (``None`` too when ``optional``)."""

    def rule(field: str, value: Any) -> None:
        if value is None and optional:
            return
        _integer(field, value, low, high)

    return rule


def number(
    low: float, high: float = math.inf, *, above: bool = False, optional: bool = False
) -> Rule:
    """A finite number in ``low..high`` (strictly above ``low`` when ``above``)."""

    def rule(field: str, value: Any) -> None:
        if value is None and optional:
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidInput(f"{field} must be a number, not {type(value).__name__}")
        if not math.isfinite(value) or value < low or value > high or (above and value == low):
            bound = f"above {low}" if above else f"at least {low}"
            upper = f" and at most {high}" if math.isfinite(high) else ""
            raise InvalidInput(f"{field} is {value}: use a finite number {bound}{upper}")

    return rule


def identifier(field: str, value: Any) -> None:
    """An id: 1 to :data:`MAX_ID` characters, not blank (``None`` where allowed)."""
    if value is None:
        return
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be text, not {type(value).__name__}")
    if not value.strip():
        raise InvalidInput(f"{field} is empty: give an id")
    check_text(field, value, max_chars=MAX_ID)


def one_of(kind: type[enum.Enum], *, optional: bool = True) -> Rule:
    """A member of ``kind`` or one of its values, named in the error when it is neither."""

    def rule(field: str, value: Any) -> None:
        if (value is None and optional) or isinstance(value, kind):
            return
        try:
            kind(value)
        except (ValueError, TypeError):
            valid = ", ".join(str(member.value) for member in kind)
            raise InvalidInput(f"{field} {value!r} is not one of: {valid}") from None

    return rule


def each_of(kind: type[enum.Enum]) -> Rule:
    """A sequence (or ``None``) whose every item is a member of ``kind`` or its value."""
    member = one_of(kind, optional=False)

    def rule(field: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise InvalidInput(f"{field} must be a list, not {type(value).__name__}")
        for index, item in enumerate(value):
            member(f"{field}[{index}]", item)

    return rule


def pairs_of(kind: type[enum.Enum]) -> Rule:
    """A sequence of ``(member of kind, id)`` pairs, e.g. memory scopes."""
    member = one_of(kind, optional=False)

    def rule(field: str, value: Any) -> None:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise InvalidInput(f"{field} must be a list of (kind, id) pairs")
        for index, item in enumerate(value):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise InvalidInput(f"{field}[{index}] must be a (kind, id) pair")
            member(f"{field}[{index}]", item[0])
            identifier(f"{field}[{index}]", item[1])

    return rule


RULES: dict[str, Rule] = {
    "limit": integer(1, MAX_LIMIT),
    "batch": integer(1, MAX_LIMIT),
    "count": integer(0, MAX_LIMIT),
    "max_tokens": integer(1, 10_000_000),
    "budget": integer(1, 10_000_000),
    "max_steps": integer(1, 10_000_000, optional=True),
    "after_seq": integer(0),
    "from_seq": integer(0),
    "to_seq": integer(0, optional=True),
    "before_seq": integer(0, optional=True),
    "through_seq": integer(0),
    "retention_days": integer(1, 365_000, optional=True),
    "decay_after_days": integer(1, 365_000),
    "ttl_s": number(0, above=True, optional=True),
    "confidence": number(0, 1),
    "min_confidence": number(0, 1),
    "lexical_weight": number(0, 1),
    "scope_id": identifier,
    "purpose": identifier,
}
"""What a parameter of this name must hold, wherever it appears in the public API."""


def _rule_for(name: str) -> Rule | None:
    if name in RULES:
        return RULES[name]
    return identifier if name.endswith("_id") else None


_CONCRETE = frozenset({str, bytes, int, float, bool, type(None), list, tuple, dict, set, frozenset})
"""Types that are never one-shot iterables (decided without the slower ABC checks)."""


def _materialised(value: Any) -> Any:
    """A one-shot iterable (a generator) as a list, so checking it does not consume it."""
    if type(value) in _CONCRETE:
        return value
    if isinstance(value, Iterable) and not isinstance(
        value, (str, bytes, Mapping, list, tuple, set, frozenset, BaseModel, range)
    ):
        return list(value)
    return value


def validation_message(exc: ValidationError, field: str | None = None) -> str:
    """A pydantic error as one line naming each field, without echoing the input."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        path = ".".join(str(part) for part in error["loc"])
        where = ".".join(part for part in (field, path) if part) or exc.title
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems)


def checked(func: Callable[P, R], rules: Mapping[str, Rule] | None = None) -> Callable[P, R]:
    """``func`` with every argument walked and its named rules applied before it runs.

    A :class:`pydantic.ValidationError` raised inside (a model built from an argument)
    comes out as :class:`InvalidInput`.
    """
    signature = inspect.signature(func)
    extra = dict(rules or {})
    named = {name: extra.get(name) or _rule_for(name) for name in signature.parameters}
    names = tuple(signature.parameters)
    simple = all(
        p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in signature.parameters.values()
    )
    positional = sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in signature.parameters.values())

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if simple and len(args) <= positional and not kwargs.keys() & names[: len(args)]:
            # The common call, read without Signature.bind (it costs more than the checks).
            arguments: dict[str, Any] = dict(zip(names, args, strict=False))
            arguments.update(kwargs)
            if arguments.keys() - named.keys():
                arguments = dict(signature.bind(*args, **kwargs).arguments)
        else:
            arguments = dict(signature.bind(*args, **kwargs).arguments)
        changed = False
        for name, value in arguments.items():
            if name == "self":
                continue
            materialised = _materialised(value)
            if materialised is not value:
                arguments[name] = value = materialised
                changed = True
            rule = named[name]
            if rule is not None:
                rule(name, value)
            check_value(name, value)
        try:
            if changed:
                bound = signature.bind_partial()
                bound.arguments.update(arguments)
                return func(*bound.args, **bound.kwargs)
            return func(*args, **kwargs)
        except ValidationError as exc:
            raise InvalidInput(validation_message(exc)) from None

    wrapper.__tether_checked__ = True  # type: ignore[attr-defined]
    return wrapper


def rules(**named: Rule) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Rules for one method's parameters, on top of :data:`RULES` (e.g. an enum's values)."""

    def mark(func: Callable[P, R]) -> Callable[P, R]:
        func.__tether_rules__ = named  # type: ignore[attr-defined]
        return func

    return mark


def guarded(cls: type[T]) -> type[T]:
    """Check the arguments of every public method of ``cls`` (see :func:`checked`).

    Methods whose name ends in ``_txn`` take an open transaction from inside Tether and
    are left alone; so are properties.
    """
    for name, member in list(vars(cls).items()):
        if name.startswith("_") or name.endswith("_txn") or not inspect.isfunction(member):
            continue
        if getattr(member, "__tether_checked__", False):
            continue
        setattr(cls, name, checked(member, getattr(member, "__tether_rules__", None)))
    return cls
