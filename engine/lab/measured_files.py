"""Figures the benchmarks store for the lessons to grade from: this machine's speed measurements, as the
lesson "Will it run in time?" reads them, and the engine's cache curve over a whole trace.

Three files in `engine/lab/measurements/`, written by the benchmarks and never fetched:

- `vectorised.json` (`python benchmarks/vectorised.py --write`): ns a token of the loop engine
  (`engine.BatchInferenceEngine`) and of the NumPy vectorised one at 8 to 100,000 rows, and the
  fewest rows at which the vectorised one is faster;
- `slow_zoo.json` (`python benchmarks/slow_zoo.py --write`): each slow-but-correct engine's ns
  a token along its axis, beside the reference (the loop engine again) and the plain loop, and
  the seconds each would take at the axis's largest size. Its engines are keyed by name;
- `cache_curve.json` (`python benchmarks/cache_curve.py --write`): the engine's prefix hit rate over a
  whole Mooncake trace at each cache capacity, beside the trace's own LRU figure, and with an unbounded
  cache (engine/lab/cache_curve.py). Deterministic: a rerun writes the same figures.

`CBL_MEASUREMENTS`, if set, names another folder to read them from (the tests' fixtures).
A file is read like any upload: a missing, oversized or malformed one is a `MeasurementError`
whose one-line message says what is wrong and which command writes the file, never a traceback.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

MEASUREMENTS = Path(__file__).parent / "measurements"
MEASUREMENTS_ENV = "CBL_MEASUREMENTS"  # a folder to read instead, if set (the tests' fixtures)
VECTORISED, SLOW, CACHE_CURVE = "vectorised.json", "slow_zoo.json", "cache_curve.json"
WRITERS = {
    VECTORISED: "python benchmarks/vectorised.py --write",
    SLOW: "python benchmarks/slow_zoo.py --write",
    CACHE_CURVE: "python benchmarks/cache_curve.py --write",
}
MAX_BYTES = 200_000  # a measurements file is a few kB
MAX_POINTS = 64  # sizes on one axis
MAX_ENGINES = 32
ENGINE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,59}")  # a class name or a slug ("scans-every-request")


class MeasurementError(ValueError):
    """A measurements file that cannot be used; the message is one line, for people."""


@dataclass(frozen=True)
class Vectorised:
    measured_on: str
    load: float  # the machine's load average while measuring
    cpu: str
    rows: tuple[int, ...]
    loop_ns: tuple[float | None, ...]  # ns a token of the loop engine at each row count (None: not run)
    vectorised_ns: tuple[float | None, ...]
    crossover_rows: int | None  # the fewest rows measured at which the vectorised engine is faster (None: never)


@dataclass(frozen=True)
class SlowEngine:
    name: str
    axis: str  # "requests", "answer length", ...
    unit: str  # what a size counts
    sizes: tuple[int, ...]
    ns: tuple[float | None, ...]  # ns a token at each size (None: not run, too slow)
    reference_ns: tuple[float | None, ...]
    plain_ns: tuple[float | None, ...]
    seconds: float  # the whole run at the axis's largest size
    reference_seconds: float


@dataclass(frozen=True)
class SlowEngines:
    measured_on: str
    load: float
    engines: dict[str, SlowEngine]


@dataclass(frozen=True)
class CacheCurve:
    measured_on: str
    trace: str  # a built-in trace (engine/lab/trace_file.py)
    capacities: tuple[int, ...]  # cache capacities in tokens, increasing
    engine_hit_rate: tuple[float | None, ...]  # at each capacity: prompt tokens hit / prompt tokens
    trace_hit_rate: tuple[float | None, ...]  # the trace's LRU over hash ids, no batching
    unbounded_engine_hit_rate: float  # the maximum: a cache that never evicts
    unbounded_trace_hit_rate: float


def read_cache_curve(directory: Path | None = None) -> CacheCurve:
    data, field = _read(directory, CACHE_CURVE)
    capacities = _sizes(field, data, "capacities")
    return CacheCurve(
        _text(field, data, "measured_on"),
        _text(field, data, "trace"),
        capacities,
        _figures(field, data, "engine_hit_rate", len(capacities)),
        _figures(field, data, "trace_hit_rate", len(capacities)),
        _number(field, data, "unbounded_engine_hit_rate"),
        _number(field, data, "unbounded_trace_hit_rate"),
    )


def read_vectorised(directory: Path | None = None) -> Vectorised:
    data, field = _read(directory, VECTORISED)
    rows = _sizes(field, data, "rows")
    return Vectorised(
        _text(field, data, "measured_on"),
        _number(field, data, "load"),
        _text(field, data, "cpu"),
        rows,
        _figures(field, data, "loop_ns_per_token", len(rows)),
        _figures(field, data, "vectorised_ns_per_token", len(rows)),
        None if data.get("crossover_rows", 0) is None else int(_number(field, data, "crossover_rows")),
    )


def read_slow_engines(directory: Path | None = None) -> SlowEngines:
    data, field = _read(directory, SLOW)
    engines = data.get("engines")
    if not isinstance(engines, dict) or not 0 < len(engines) <= MAX_ENGINES:
        raise MeasurementError(f"{field('engines')}: must be a table of 1 to {MAX_ENGINES} engines")
    return SlowEngines(
        _text(field, data, "measured_on"),
        _number(field, data, "load"),
        {name: _slow_engine(field, name, table) for name, table in engines.items()},
    )


def _slow_engine(field, name: str, data: object) -> SlowEngine:
    if not isinstance(data, dict) or not ENGINE_NAME.fullmatch(name):
        raise MeasurementError(f"{field('engines')}: {name[:60]!r} must be an engine's name with a table")
    inner = lambda key: field(f"engines.{name}.{key}")  # noqa: E731
    sizes = _sizes(inner, data, "sizes")
    return SlowEngine(
        name,
        _text(inner, data, "axis"),
        _text(inner, data, "unit"),
        sizes,
        *(_figures(inner, data, key, len(sizes)) for key in ("ns_per_token", "reference_ns_per_token")),
        _figures(inner, data, "plain_ns_per_token", len(sizes)),
        _number(inner, data, "seconds_at_target"),
        _number(inner, data, "reference_seconds_at_target"),
    )


def _read(directory: Path | None, name: str):
    path = (directory or Path(os.environ.get(MEASUREMENTS_ENV) or MEASUREMENTS)) / name
    where = f"engine/lab/measurements/{name}" if path.parent == MEASUREMENTS else str(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise MeasurementError(f"{where}: larger than {MAX_BYTES:,} bytes")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        does = "replays the whole trace" if name == CACHE_CURVE else "measures this machine"
        raise MeasurementError(f"{where} is missing: `{WRITERS[name]}` {does} and writes it") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MeasurementError(f"{where}: cannot be read ({str(exc)[:120]}); `{WRITERS[name]}` rewrites it") from None
    if not isinstance(data, dict):
        raise MeasurementError(f"{where}: must hold a JSON object")
    return data, lambda key: f"{where}: {key}"


def _text(field, data: dict, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value or len(value) > 200:
        raise MeasurementError(f"{field(key)}: must be a short text")
    return value


def _number(field, data: dict, key: str) -> float:
    value = data.get(key)
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        raise MeasurementError(f"{field(key)}: must be a number ≥ 0")
    return float(value)


def _sizes(field, data: dict, key: str) -> tuple[int, ...]:
    value = data.get(key)
    ok = isinstance(value, list) and 0 < len(value) <= MAX_POINTS and all(type(v) is int and v > 0 for v in value)
    if not ok or value != sorted(set(value)):
        raise MeasurementError(f"{field(key)}: must be 1 to {MAX_POINTS} increasing whole numbers above 0")
    return tuple(value)


def _figures(field, data: dict, key: str, count: int) -> tuple[float | None, ...]:
    value = data.get(key)
    positive = lambda v: type(v) in (int, float) and math.isfinite(v) and v > 0  # noqa: E731
    if not isinstance(value, list) or len(value) != count or not all(v is None or positive(v) for v in value):
        raise MeasurementError(f"{field(key)}: must be {count} figures above 0 (null where not run)")
    return tuple(None if v is None else float(v) for v in value)
