"""Typed, path-aware access to parsed TOML: every error names the file and the field.

scenarios/foo.toml: requests[3].max_tokens: must be an integer ≥ 0, got -2

The checks themselves are the engine's (`engine/core/validation.py`), so a field reads
the same whether it comes from a file, a log or a Python call.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.validation import (
    InvalidType,
    InvalidValue,
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_stop_sequences,
    check_str,
    check_tokens,
    shorten,
)


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message is one line, for people."""


class Table:
    """A TOML table with the dotted path that led to it, so errors can point at fields."""

    def __init__(self, source: str, data: dict, path: str = ""):
        self.source, self.data, self.path = source, data, path
        self.used: set[str] = set()

    def where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, problem: str, value: object = ...) -> ScenarioError:
        got = "" if value is ... else f", got {shorten(repr(value))}"
        return ScenarioError(f"{self.source}: {self.where(shorten(key))}: {problem}{got}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: object = ...) -> object:
        self.used.add(key)
        if key not in self.data:
            if default is ...:
                raise self.fail(key, "is required")
            return default
        return self.data[key]

    def _checked(self, check: Callable, key: str, default: object, *args, **kwargs):
        value = self.raw(key, default)
        if value is None and default is None:
            return None
        try:
            return check(f"{self.source}: {self.where(shorten(key))}", value, *args, **kwargs)
        except (InvalidType, InvalidValue) as exc:
            raise ScenarioError(str(exc)) from None

    def int(self, key: str, default: object = ..., minimum: int | None = None, maximum: int | None = None) -> int:
        return self._checked(check_int, key, default, minimum, maximum)

    def number(self, key: str, default: object = ..., minimum: float = 0.0, maximum: float | None = None) -> float:
        return self._checked(check_number, key, default, minimum, maximum)

    def fraction(self, key: str, default: object, low: float, below: float) -> float:
        """A number from `low` up to, not including, `below`."""
        value = self.number(key, default, minimum=low)
        if not value < below:
            raise self.fail(key, f"must be a number ≥ {low:g} and below {below:g}", value)
        return value

    def str(self, key: str, default: object = ..., choices: tuple[str, ...] | None = None) -> str:
        if choices is None:
            return self._checked(check_str, key, default)
        return self._checked(check_choice, key, default, choices)

    def bool(self, key: str, default: object = ...) -> bool:
        return self._checked(check_bool, key, default)

    def tokens(self, key: str, default: object = ..., allow_empty: bool = True) -> list[int]:
        return self._checked(check_tokens, key, default, allow_empty)

    def stop_sequences(self, key: str) -> list[list[int]] | None:
        checked = self._checked(check_stop_sequences, key, None)
        return None if checked is None else [list(s) for s in checked]

    def table(self, key: str, required: bool = False) -> Table | None:
        value = self.raw(key, ... if required else None)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(key, "must be a table", value)
        return Table(self.source, value, self.where(key))

    def tables(self, key: str, maximum: int) -> list[Table]:
        value = self.raw(key, [])
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise self.fail(key, "must be an array of tables ([[" + key + "]])")
        if len(value) > maximum:
            raise self.fail(key, f"has {len(value):,} tables; the limit is {maximum:,}")
        return [Table(self.source, item, self.where(f"{key}[{i}]")) for i, item in enumerate(value)]

    def check_no_unknown_keys(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            known = ", ".join(sorted(self.used))
            raise self.fail(unknown[0], f"unknown key (known here: {known})")
