"""Value checks, one set for the whole project: the engine's arguments, a scenario's TOML
fields and an event log's JSON fields are all checked here, with one wording.

Each check takes `where` (the field's name, as its caller names it: `max_tokens`,
`x.toml: requests[3].max_tokens`, `line 7: position`) and returns the checked value or
raises `InvalidType` (a TypeError) or `InvalidValue` (a ValueError), whose message reads

    x.toml: requests[3].max_tokens: must be an integer ≥ 0, got -2
    max_tokens: must be an integer ≥ 0, got float 1.5

(the value's type is named when the type is what is wrong).
"""

from __future__ import annotations

import marshal
import math
from array import array
from collections.abc import Callable

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # token ids are stored in 64-bit columns
MAX_STEP = 2**31 - 1  # steps, slots and positions are stored in 32-bit columns
MAX_ARRIVAL_STEP = 2**30  # the latest arrival step, leaving 2**30 steps for the run to finish in
MAX_ENGINE_BATCH_SIZE = 65_536  # the Python API; scenarios and logs have a lower limit (engine/lab/limits.py)


class InvalidType(TypeError):
    """A value of the wrong type; the message names the field."""


class InvalidValue(ValueError):
    """A value of the right type outside what the field allows; the message names the field."""


def shorten(text: str, width: int = 60) -> str:
    """At most `width` characters, so a hostile value cannot flood a message."""
    return text if len(text) <= width else text[: width - 1] + "…"


def wrong_type(where: str, rule: str, value: object) -> InvalidType:
    return InvalidType(f"{where}: {rule}, got {type(value).__name__} {shorten(repr(value))}")


def wrong_value(where: str, rule: str, value: object) -> InvalidValue:
    return InvalidValue(f"{where}: {rule}, got {shorten(repr(value))}")


def _bounds(minimum: float | None, maximum: float | None) -> str:
    parts = [f"≥ {minimum}"] if minimum is not None else []
    parts += [f"≤ {maximum}"] if maximum is not None else []
    return " " + " and ".join(parts) if parts else ""


def int_like(value: object) -> int | None:
    """`value` as a Python int if it is one or an integer type such as numpy.int64; else None.

    Booleans (Python's or numpy's) are not integers here.
    """
    if type(value) is int:
        return value
    index = getattr(type(value), "__index__", None)
    if index is None or isinstance(value, bool) or "bool" in type(value).__name__:
        return None
    try:
        return index(value)
    except TypeError:
        return None


def check_int(where: str, value: object, minimum: int | None = None, maximum: int | None = None) -> int:
    """An int (a bool is not a count). SPEED: the rule's words are built only for a message."""
    if type(value) is not int or (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        rule = "must be an integer" + _bounds(minimum, maximum)
        raise (wrong_value if type(value) is int else wrong_type)(where, rule, value)
    return value


def check_number(where: str, value: object, minimum: float | None = None, maximum: float | None = None) -> float:
    """A finite int or float (no bool, NaN, infinity or an int too big for a float)."""
    rule = "must be a finite number" + _bounds(minimum, maximum)
    if type(value) not in (int, float):
        raise wrong_type(where, rule, value)
    if (
        not (math.isfinite(value) if type(value) is float else abs(value) < 2**1023)
        or (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
    ):
        raise wrong_value(where, rule, value)
    return float(value)


def check_str(where: str, value: object) -> str:
    if not isinstance(value, str):
        raise wrong_type(where, "must be a string", value)
    return value


def check_choice(where: str, value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise wrong_value(where, f"must be one of {', '.join(map(repr, choices))}", value)
    return value


def check_bool(where: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise wrong_type(where, "must be true or false", value)
    return value


def check_callable(where: str, value: object) -> Callable | None:
    if value is not None and not callable(value):
        raise wrong_type(where, "must be callable or None", value)
    return value


def check_token(where: str, value: object) -> int:
    """A token id: an integer (numpy integers too) that fits in 64 bits."""
    rule = "must be a 64-bit integer token id"
    token = int_like(value)
    if token is None:
        raise wrong_type(where, rule, value)
    if not INT64_MIN <= token <= INT64_MAX:
        raise wrong_value(where, rule, value)
    return token


def check_tokens(where: str, value: object, allow_empty: bool = True) -> list[int]:
    """A new list of Python ints; one C-level conversion checks type and range on the fast path."""
    if not isinstance(value, (list, tuple)):
        raise wrong_type(where, "must be a list of integer token ids", value)
    if not value and not allow_empty:
        raise wrong_value(where, "must not be empty", value)
    try:
        if bool not in map(type, value):
            return array("q", value).tolist()
    except (TypeError, OverflowError):
        pass
    return [check_token(f"{where}[{i}]", token) for i, token in enumerate(value)]


_checked_stops: dict[bytes, tuple[tuple[int, ...], ...]] = {}  # SPEED: marshal bytes -> checked form
MAX_CHECKED_STOPS = 256  # distinct stop lists remembered


def check_stop_sequences(where: str, value: object) -> tuple[tuple[int, ...], ...]:
    """The stop sequences as a tuple of non-empty tuples of token ids.

    SPEED: a workload usually passes the same stop lists to every request, so a list already
    checked is recognised by its `marshal` bytes (one C-level pass, which tells 7 from 7.0
    and from True) instead of being checked token by token again.
    """
    if value is None:
        return ()
    try:
        key = marshal.dumps(value, 2)  # version 2: no back-references, a quarter faster, the same type codes
    except (ValueError, TypeError):  # numpy integers and other objects: the full check below
        key = None
    checked = _checked_stops.get(key)
    if checked is not None:
        return checked
    if not isinstance(value, (list, tuple)) or not all(isinstance(s, (list, tuple)) for s in value):
        raise wrong_type(where, "must be a list of token lists such as [[7, 8], [3, 3, 4]]", value)
    checked = tuple(tuple(check_tokens(f"{where}[{i}]", s, allow_empty=False)) for i, s in enumerate(value))
    if key is not None:
        if len(_checked_stops) >= MAX_CHECKED_STOPS:
            _checked_stops.clear()
        _checked_stops[key] = checked
    return checked


def parse_text(loads, text: str, syntax_error: type[Exception]):
    """`loads(text)`; a parser's failure becomes one ValueError holding just the reason: bad
    syntax, nesting past the parser's recursion limit, or an integer of more than 4,300 digits."""
    try:
        return loads(text)
    except syntax_error as exc:
        raise ValueError(getattr(exc, "msg", None) or str(exc)) from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError as exc:
        raise ValueError(str(exc)) from None
