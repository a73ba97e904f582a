"""Argument checks shared by the engine and `generate`: each error names its field."""

from __future__ import annotations

from collections.abc import Callable

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # token ids are stored in 64-bit columns


def check_int(name: str, value: object, minimum: int | None = None) -> int:
    if type(value) is not int:  # bool is not a token count
        raise TypeError(f"{name}: must be an int, got {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {value}")
    return value


def check_token(name: str, value: object) -> int:
    check_int(name, value)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{name}: token ids must fit in 64 bits, got {value}")
    return value


def check_tokens(name: str, value: object) -> list[int]:
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}: must be a list of int token ids, got {type(value).__name__}")
    for i, token in enumerate(value):
        check_token(f"{name}[{i}]", token)
    return list(value)


def check_stop_sequences(name: str, value: object) -> tuple[tuple[int, ...], ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}: must be a list of token lists, got {type(value).__name__}")
    sequences = []
    for i, sequence in enumerate(value):
        tokens = check_tokens(f"{name}[{i}]", sequence)
        if not tokens:
            raise ValueError(f"{name}[{i}]: a stop sequence must not be empty")
        sequences.append(tuple(tokens))
    return tuple(sequences)


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
