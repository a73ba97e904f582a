"""Typed, path-aware access to parsed TOML: every error names the file and the field.

scenarios/foo.toml: requests[3].max_tokens: must be an integer ≥ 0, got -2
"""

from __future__ import annotations

import math


def _finite(value: object) -> bool:
    """A real number a float can hold (bools, NaN, infinities and 400-digit ints are not)."""
    if type(value) is float:
        return math.isfinite(value)
    return type(value) is int and abs(value) < 2**1023


def shorten(text: str, width: int = 60) -> str:
    """At most `width` characters, so a hostile value cannot flood a message."""
    return text if len(text) <= width else text[: width - 1] + "…"


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

    def int(self, key: str, default: object = ..., minimum: int | None = None, maximum: int | None = None) -> int:
        value = self.raw(key, default)
        if value is None and default is None:
            return None
        if (
            type(value) is not int
            or (minimum is not None and value < minimum)
            or (maximum is not None and value > maximum)
        ):
            bounds = [f"≥ {minimum}"] if minimum is not None else []
            bounds += [f"≤ {maximum}"] if maximum is not None else []
            raise self.fail(key, "must be an integer" + (" " + " and ".join(bounds) if bounds else ""), value)
        return value

    def number(self, key: str, default: object = ..., minimum: float = 0.0, maximum: float | None = None) -> float:
        value = self.raw(key, default)
        if not _finite(value) or value < minimum or (maximum is not None and value > maximum):
            upper = f" and ≤ {maximum}" if maximum is not None else ""
            raise self.fail(key, f"must be a finite number ≥ {minimum}{upper}", value)
        return float(value)

    def str(self, key: str, default: object = ..., choices: tuple[str, ...] | None = None) -> str:
        value = self.raw(key, default)
        if not isinstance(value, str) or (choices is not None and value not in choices):
            expected = f"one of {', '.join(map(repr, choices))}" if choices else "a string"
            raise self.fail(key, f"must be {expected}", value)
        return value

    def bool(self, key: str, default: object = ...) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, "must be true or false", value)
        return value

    def tokens(self, key: str, default: object = ..., allow_empty: bool = True) -> list[int]:
        value = self.raw(key, default)
        if not isinstance(value, list) or any(type(t) is not int or not -(2**63) <= t < 2**63 for t in value):
            raise self.fail(key, "must be a list of integer token ids", value)
        if not value and not allow_empty:
            raise self.fail(key, "must not be empty", value)
        return value

    def stop_sequences(self, key: str) -> list[list[int]] | None:
        value = self.raw(key, None)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, list) for item in value):
            raise self.fail(key, "must be a list of token lists such as [[7, 8], [3, 3, 4]]", value)
        for i, item in enumerate(value):
            if not item or any(type(t) is not int for t in item):
                raise self.fail(f"{key}[{i}]", "must be a non-empty list of integer token ids", item)
        return value

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
