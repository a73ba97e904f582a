"""Scenarios: TOML walkthroughs a teacher can copy and edit without reading Python.

A scenario holds a title and a lesson, the engine settings, the model (the built-in
`SimulatedLLM`, or a `scripted` model that fixes each request's continuation), an
optional vocabulary and per-step captions, and either an explicit `[[requests]]` list or
a generated `[workload]`. `scenarios/README.md` documents every field. Loading checks
every field; a bad file raises `ScenarioError` with one line naming the file and field.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from ..analysis.hardware import COST_MODELS
from ..core.validation import INT64_MAX, INT64_MIN, parse_text
from .engine_settings import BY_NAME, ENGINE_SETTINGS, EngineSetting
from .limits import (
    MAX_ARRIVAL_STEP,
    MAX_FILE_BYTES,
    MAX_LENGTH,
    MAX_PRIORITY,
    MAX_REPLICAS,
    MAX_REQUESTS,
    REPLICA_SIGNALS,
    check_batch_sizes,
    read_capped,
)
from .quizzes import parse_quizzes
from .real_servers import parse_callouts
from .scenario_types import EngineConfig, ModelConfig, ReplicaConfig, RequestSpec, Scenario, WorkloadConfig
from .scenario_work import check_work
from .shared_cache import shared_cache
from .toml_reader import ScenarioError, Table
from .trace_workload import TraceWorkload, parse_trace
from .workload_table import parse_workload

# The lessons' folder: an installed wheel's copy (engine/lab/scenarios, which pyproject.toml's package-dir fills
# from the repository's scenarios/), else a checkout's scenarios/, which teachers edit (an editable install too).
_INSTALLED = Path(__file__).resolve().parent / "scenarios"
SCENARIO_DIR = _INSTALLED if _INSTALLED.is_dir() else Path(__file__).resolve().parents[2] / "scenarios"
TRACE_DIR = SCENARIO_DIR / "traces"  # whole-trace replays (`trace-*`): reference runs for the CLI, not lessons
COURSE_FILE = "course.toml"  # the course's order of the scenarios (engine/lab/course.py), not a scenario
INT_KEY = re.compile(r"-?[0-9]{1,19}")  # a [vocabulary] or [captions] key: an int64 written in quotes


def list_scenarios(directory: Path = SCENARIO_DIR) -> list[Path]:
    """The course's scenarios (each one a lesson)."""
    return sorted(path for path in directory.glob("*.toml") if path.name != COURSE_FILE)


def trace_scenarios() -> list[Path]:
    """The whole-trace replays: built-in scenarios that are not lessons (an hour of a real service each)."""
    return sorted(TRACE_DIR.glob("*.toml"))


def resolve_scenario(name_or_path: str | Path) -> Scenario:
    """Load a scenario by path, or by the name of a built-in one (`part2-slot-refill`)."""
    path = Path(name_or_path)
    if not path.exists():
        stem = path.name.removesuffix(".toml")
        builtin = next((d / f"{stem}.toml" for d in (SCENARIO_DIR, TRACE_DIR) if (d / f"{stem}.toml").exists()), None)
        if path.parent == Path(".") and builtin is not None:
            path = builtin
        else:
            names = ", ".join(p.stem for p in [*list_scenarios(), *trace_scenarios()])
            raise ScenarioError(f"{name_or_path}: no such scenario file (built-in scenarios: {names})")
    if path.resolve().parent == SCENARIO_DIR:  # the app asks on every rerun: each version of a file is read once
        stat = path.stat()
        return _builtin(path.name, stat.st_mtime_ns, stat.st_size)
    return load_scenario(path)


@shared_cache(maxsize=256)
def _builtin(filename: str, mtime_ns: int, size: int) -> Scenario:
    """A built-in scenario (a Scenario is frozen, so one copy serves every caller)."""
    return load_scenario(SCENARIO_DIR / filename)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate one scenario file; raises ScenarioError (one line) on any problem."""
    path = Path(path)
    try:
        text = read_capped(path).decode("utf-8")
    except ValueError as exc:  # over the size limit, or not UTF-8
        reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc).removeprefix(f"{path}: ")
        raise ScenarioError(f"{path}: cannot read the file ({reason})") from None
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    folder = path.resolve().parent
    builtin = folder in (SCENARIO_DIR, TRACE_DIR)
    source = f"{folder.relative_to(SCENARIO_DIR.parent)}/{path.name}" if builtin else str(path)  # built-ins: short
    return parse_scenario(text, source, name=path.stem, folder=folder)


def parse_scenario(
    text: str, source: str = "<scenario>", name: str = "scenario", folder: Path | None = None
) -> Scenario:
    """Check every field, then the run's worst case against the limits (engine/lab/limits.py). `folder`: where
    the scenario's file is, for a trace file it names (None: pasted or uploaded text names no file)."""
    if len(text) > MAX_FILE_BYTES:
        raise ScenarioError(f"{source}: the text is larger than the limit of {MAX_FILE_BYTES / 2**20:g} MB")
    try:
        data = parse_text(tomllib.loads, text, tomllib.TOMLDecodeError)
    except ValueError as exc:
        raise ScenarioError(f"{source}: not valid TOML ({exc})") from None
    top = Table(source, data)
    title = top.str("title")
    lesson = top.str("lesson", "")
    reveal = top.str("reveal", "")
    cost = top.str("cost", "default", choices=COST_MODELS)
    engine = _engine(top.table("engine") or Table(source, {}, "engine"))
    model = _model(top.table("model") or Table(source, {}, "model"), engine)
    vocabulary = _int_keyed(top, "vocabulary", lambda t, k: t.str(k))
    captions = _int_keyed(top, "captions", lambda t, k: t.str(k))
    explicit = [_request(t, model) for t in top.tables("requests", MAX_REQUESTS)] if top.has("requests") else None
    trace = _trace(top.table("workload"), folder) if top.has("workload") and _has_trace(top) else None
    workload = parse_workload(top.table("workload")) if top.has("workload") and trace is None else None
    quizzes = parse_quizzes(top, {r.request_id for r in explicit or []}, _unnamed(explicit, workload))
    real_servers = parse_callouts(top)
    sweep = _sweep(top.table("sweep")) if top.has("sweep") else None
    replicas = _replicas(top.table("replicas"), trace is not None) if top.has("replicas") else None
    top.check_no_unknown_keys()
    if (explicit is None) == (workload is None and trace is None):
        raise top.fail("requests", "give either [[requests]] or a [workload] table, not both or neither")
    if explicit is not None and not explicit:
        raise top.fail("requests", "must list at least one request")
    if model.kind == "scripted" and explicit is None:
        raise top.fail("model.kind", "'scripted' needs an explicit [[requests]] list with scripts")
    _check_ids(top, explicit or [])
    scenario = Scenario(
        name,
        source,
        title,
        lesson,
        engine,
        model,
        tuple(explicit) if explicit else None,
        workload,
        vocabulary,
        captions,
        cost,
        quizzes=quizzes,
        real_servers=real_servers,
        reveal=reveal,
        sweep=sweep,
        replicas=replicas,
        trace=trace,
    )
    check_work(scenario)
    return scenario


def _has_trace(top: Table) -> bool:
    workload = top.data["workload"]
    return isinstance(workload, dict) and "trace" in workload


def _trace(t: Table, folder: Path | None) -> TraceWorkload:
    """`[workload.trace]`, alone in its `[workload]` (a trace gives the requests; nothing is generated)."""
    others = sorted(set(t.data) - {"trace"})
    if others:
        raise t.fail(others[0], "cannot go with [workload.trace]: the trace gives every request")
    return parse_trace(t.table("trace", required=True), folder)


def _engine(t: Table) -> EngineConfig:
    """`[engine]` (and `[engine.kv]`): one key per setting of engine_settings.py, within its limits there."""
    tables = {"": t}
    values: dict[str, object] = {}
    for setting in ENGINE_SETTINGS:
        section, _, key = setting.toml_path.rpartition(".")
        if section not in tables:
            tables[section] = t.table(section) or Table(t.source, {}, t.where(section))
        values[setting.name] = _engine_value(tables[section], key, setting, values)
    try:
        config = EngineConfig(**values)
    except ValueError as exc:  # settings that only go together (prefix caching needs a paged pool): name the key
        name, _, problem = str(exc).partition(": ")
        section, _, key = BY_NAME[name].toml_path.rpartition(".") if name in BY_NAME else ("", "", name)
        raise tables.get(section, t).fail(key, problem) from None
    for table in reversed(tables.values()):  # (a sub-table's unknown keys first)
        table.check_no_unknown_keys()
    return config


def _engine_value(t: Table, key: str, setting: EngineSetting, values: dict[str, object]) -> object:
    default = None if setting.optional else setting.default
    if setting.kind == "bool":
        return t.bool(key, default)
    if setting.kind == "choice":
        return t.str(key, default, choices=setting.choices)
    if setting.kind == "fraction":
        return t.fraction(key, default, setting.low, setting.high)
    low = setting.low if setting.at_least is None else max(setting.low, values[setting.at_least])
    return t.int(key, default, minimum=low, maximum=setting.high)


def _model(t: Table, engine: EngineConfig) -> ModelConfig:
    kind = t.str("kind", "simulated", choices=("simulated", "scripted"))
    config = ModelConfig(
        kind=kind,
        seed=t.int("seed", 0, minimum=INT64_MIN, maximum=INT64_MAX),
        vocab_size=t.int("vocab_size", 1000, minimum=2, maximum=INT64_MAX),
        eos_token=t.int(
            "eos_token", engine.stop_token if engine.stop_token is not None else 0, minimum=INT64_MIN, maximum=INT64_MAX
        ),
        stop_chance=t.number("stop_chance", 0.1, maximum=1.0),
        filler=t.int("filler", 1, minimum=INT64_MIN, maximum=INT64_MAX),
        fail_calls=tuple(t.tokens("fail_calls", [])),
    )
    if any(call < 0 for call in config.fail_calls):
        raise t.fail("fail_calls", "must list model-call numbers ≥ 0", list(config.fail_calls))
    t.check_no_unknown_keys()
    return config


def _request(t: Table, model: ModelConfig) -> RequestSpec:
    request_id = t.raw("id", None)
    if request_id is not None and not isinstance(request_id, str):
        raise t.fail("id", "must be a string", request_id)
    spec = RequestSpec(
        request_id=request_id,
        prompt=t.tokens("prompt"),
        max_tokens=t.int("max_tokens", minimum=0),  # the work check (engine/lab/limits.py) bounds it
        stop_sequences=t.stop_sequences("stop_sequences"),
        arrival_step=t.int("arrival_step", None, minimum=0, maximum=MAX_ARRIVAL_STEP),
        cancel_step=t.int("cancel_step", None, minimum=0, maximum=MAX_ARRIVAL_STEP),
        stream=t.bool("stream", False),
        script=t.tokens("script") if model.kind == "scripted" else None,
        priority=t.int("priority", 0, minimum=-MAX_PRIORITY, maximum=MAX_PRIORITY),
    )
    if model.kind != "scripted" and t.has("script"):
        raise t.fail("script", "is only used with [model] kind = 'scripted'")
    t.check_no_unknown_keys()
    return spec


def _int_keyed(top: Table, key: str, read) -> dict[int, str]:
    t = top.table(key)
    if t is None:
        return {}
    out = {}
    for k in list(t.data):
        if not INT_KEY.fullmatch(k) or not INT64_MIN <= int(k) <= INT64_MAX:
            raise t.fail(k, 'keys must be integers (write them in quotes, e.g. "7" = "the")')
        out[int(k)] = read(t, k)
    return out


def _sweep(t: Table) -> tuple[int, ...]:
    """`[sweep] batch_sizes = [1, 2, 4, ...]`: the points of engine/lab/sweep.py."""
    try:
        sizes = check_batch_sizes(f"{t.source}: {t.where('batch_sizes')}", t.raw("batch_sizes"))
    except ValueError as exc:
        raise ScenarioError(str(exc)) from None
    t.check_no_unknown_keys()
    return sizes


def _replicas(t: Table, trace: bool) -> ReplicaConfig:
    """`[replicas]`: the router and autoscaler of engine/lab/replicas.py; every key optional. With a trace, a fixed
    number of replicas, `initial` alone (engine/lab/trace_replicas.py)."""
    initial = t.int("initial", 1, minimum=1, maximum=MAX_REPLICAS)
    if trace:
        others = sorted(set(t.data) - {"initial"})
        if others:
            raise t.fail(others[0], "a trace runs on a fixed number of replicas, `initial`, each on its own clock")
        return ReplicaConfig(initial=initial, max=initial)
    signal = t.str("signal", "queue_depth", choices=REPLICA_SIGNALS)
    config = ReplicaConfig(
        initial=initial,
        max=t.int("max", max(initial, 4), minimum=initial, maximum=MAX_REPLICAS),
        signal=signal,
        threshold=t.number(
            "threshold", 4.0 if signal == "queue_depth" else 0.9, maximum=None if signal == "queue_depth" else 1.0
        ),
        window=t.int("window", 5, minimum=1, maximum=MAX_LENGTH),
        startup_steps=t.int("startup_steps", 0, minimum=0, maximum=MAX_LENGTH),
        idle_steps=t.int("idle_steps", 0, minimum=0, maximum=MAX_LENGTH),
    )
    t.check_no_unknown_keys()
    return config


def _unnamed(explicit: list[RequestSpec] | None, workload: WorkloadConfig | None) -> int:
    """How many requests the engine names (r0, r1, ...)."""
    return workload.request_count if workload is not None else sum(r.request_id is None for r in explicit or [])


def _check_ids(top: Table, requests: list[RequestSpec]) -> None:
    seen: dict[str, int] = {}
    for i, spec in enumerate(requests):
        if spec.request_id is None:
            continue
        if spec.request_id in seen:
            raise top.fail(f"requests[{i}].id", f"repeats requests[{seen[spec.request_id]}].id", spec.request_id)
        seen[spec.request_id] = i


__all__ = [
    "EngineConfig",
    "ModelConfig",
    "RequestSpec",
    "Scenario",
    "ScenarioError",
    "WorkloadConfig",
    "list_scenarios",
    "load_scenario",
    "parse_scenario",
    "resolve_scenario",
]
