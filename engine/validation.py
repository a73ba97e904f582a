"""Argument checks shared by the engine and `generate`: each error names its field."""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Callable

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # token ids are stored in 64-bit columns
MAX_STEP = 2**31 - 1  # steps, slots and positions are stored in 32-bit columns
MAX_ARRIVAL_STEP = 2**30  # the latest arrival step, leaving 2**30 steps for the run to finish in
MAX_ENGINE_BATCH_SIZE = 65_536  # the Python API; scenarios and logs have a lower limit (engine/limits.py)


def int_like(value: object) -> int | None:
    """`value` as a Python int if it is one or an integer type such as numpy.int64; else None.

    Booleans (Python's or numpy's) are not tokens.
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


def check_int(name: str, value: object, minimum: int | None = None, maximum: int | None = None) -> int:
    if type(value) is not int:  # bool is not a count
        raise TypeError(f"{name}: must be an int, got {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}: must be <= {maximum}, got {value}")
    return value


def check_token(name: str, value: object) -> int:
    token = int_like(value)
    if token is None:
        raise TypeError(f"{name}: must be an int, got {type(value).__name__} {value!r}")
    if not INT64_MIN <= token <= INT64_MAX:
        raise ValueError(f"{name}: token ids must fit in 64 bits, got {token}")
    return token


def check_tokens(name: str, value: object) -> list[int]:
    """A new list of Python ints; one C-level conversion checks type and range on the fast path."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}: must be a list of int token ids, got {type(value).__name__}")
    try:
        if bool not in map(type, value):
            return array("q", value).tolist()
    except (TypeError, OverflowError):
        pass
    return [check_token(f"{name}[{i}]", token) for i, token in enumerate(value)]


_checked_stops: dict[bytes, tuple[tuple[int, ...], ...]] = {}  # SPEED: marshal bytes -> checked form
MAX_CHECKED_STOPS = 256  # distinct stop lists remembered


def check_stop_sequences(name: str, value: object) -> tuple[tuple[int, ...], ...]:
    """The stop sequences as a tuple of tuples.

    SPEED: a workload usually passes the same stop lists to every request, so a list already
    checked is recognised by its `marshal` bytes (one C-level pass, which tells 7 from 7.0
    and from True) instead of being checked token by token again.
    """
    if value is None:
        return ()
    try:
        key = marshal.dumps(value)
    except (ValueError, TypeError):  # numpy integers and other objects: the full check below
        key = None
    checked = _checked_stops.get(key)
    if checked is not None:
        return checked
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}: must be a list of token lists, got {type(value).__name__}")
    sequences = []
    for i, sequence in enumerate(value):
        tokens = check_tokens(f"{name}[{i}]", sequence)
        if not tokens:
            raise ValueError(f"{name}[{i}]: a stop sequence must not be empty")
        sequences.append(tuple(tokens))
    checked = tuple(sequences)
    if key is not None:
        if len(_checked_stops) >= MAX_CHECKED_STOPS:
            _checked_stops.clear()
        _checked_stops[key] = checked
    return checked


def check_callable(name: str, value: object) -> Callable | None:
    if value is not None and not callable(value):
        raise TypeError(f"{name}: must be callable or None, got {type(value).__name__}")
    return value


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{name}: must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name}: must be True or False, got {value!r}")
    return value
