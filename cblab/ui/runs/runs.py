"""Cached runs: a scenario (built-in or uploaded) with the user's overrides, or an uploaded log.

Everything heavy sits behind one cache shared by all sessions (`cblab/ui/cache.py`), keyed on
plain arguments and bounded by the bytes it holds, so moving the step slider or playing
never re-runs the engine and a class cannot fill the server's memory.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import logging
from dataclasses import dataclass
from functools import cached_property

import streamlit as st

from cblab.ui.cache import SizedCache
from cblab.ui.runs import run_cache
from cblab.ui.runs.stage_wire import compress, inflate
from engine import EventLog
from engine.analysis.frames import encode, outline
from engine.analysis.hardware import cost_model
from engine.analysis.metrics import CostModel, request_metrics, step_metrics, summary
from engine.analysis.quiz import Question
from engine.analysis.replay import Replay
from engine.core.block_prompt import BlockPrompt
from engine.core.log.events import EventKind
from engine.lab.engine_settings import ENGINE_SETTINGS
from engine.lab.limits import MAX_FILE_BYTES, check_loaded_log, is_long
from engine.lab.quizzes import questions
from engine.lab.scenario import Scenario, ScenarioError, parse_scenario, resolve_scenario
from engine.lab.shared_cache import shared_cache
from engine.lab.simulate import simulate
from engine.lab.trace_upload import TRACE_SUFFIXES, uploaded_trace

MAX_UPLOAD_BYTES = MAX_FILE_BYTES  # uploads above this are refused with a message
RUNS = SizedCache(max_bytes=768 * 2**20, long_lived=True)  # every session's runs together


class UserError(Exception):
    """A problem the user caused (bad text, bad upload); shown with st.error, never a traceback."""


class Keep(enum.Enum):
    """An override that keeps the scenario's own value (where None means something: no KV pool)."""

    KEEP = "keep"


KEEP = Keep.KEEP


@dataclass(frozen=True)
class Overrides:
    """The user's changes to a scenario, as plain hashable values: one field per setting of the
    sidebar (`cblab/ui/controls/settings.py`), so one per engine setting (tests/test_engine_settings.py checks)."""

    batch_size: int | None = None
    stop_token: int | None = None
    clear_stop_token: bool = False
    batching: str | None = None
    padded: bool | None = None
    fill_timeout: int | None = None  # static batching: steps an empty batch waits to fill (0: runs at once)
    stop_sequences: tuple[tuple[int, ...], ...] = ()  # added to every request
    model_seed: int | None = None
    stop_chance: float | None = None
    workload_count: int | None = None
    workload_seed: int | None = None
    # memory (engine.core.config.EngineConfig's names); KEEP: the scenario's own, None: off
    kv_blocks: int | None | Keep = KEEP
    block_size: int | Keep = KEEP
    kv_policy: str | Keep = KEEP
    token_budget: int | None | Keep = KEEP
    prefix_caching: bool | Keep = KEEP
    kv_watermark: float | Keep = KEEP


MEMORY = tuple(s.name for s in ENGINE_SETTINGS if s.group == "memory")  # the Overrides fields set as they are


@dataclass
class Run:
    """One simulated (or loaded) run and everything the views draw from it."""

    log: EventLog
    replay: Replay
    steps: object  # pandas DataFrame, step_metrics
    requests: object  # pandas DataFrame, request_metrics
    scenario: Scenario | None  # None for an uploaded event log
    digest: str  # names the run (the stage keeps its place per run)
    frames: dict  # what the stage plays (engine.analysis.frames.encode); of a long run, its outline
    wire: bytes  # the frames as the stage receives them, compressed once per run (cblab/ui/runs/stage_wire.py)

    @property
    def long(self) -> bool:
        """Too long for the stage to play whole: it plays a window, picked on an overview (stage/long_run.py)."""
        return is_long(len(self.steps), len(self.log))

    @cached_property
    def summary(self) -> dict:
        return summary(self.log, self.cost)

    @cached_property
    def questions(self) -> list[Question]:
        """The scenario's predictions about this run, asked on every rerun and built once (ScenarioError
        naming `quiz[i].field` if one does not fit the run: `engine.lab.quizzes.questions`); the whole-run
        kinds read `steps`, priced with the same cost model."""
        return questions(self.scenario, self.replay, self.steps)

    @property
    def cost(self) -> CostModel:
        """The cost model that priced `steps` and `requests`: the scenario's (a loaded log: the default)."""
        return cost_model(self.scenario.cost) if self.scenario is not None else CostModel()

    @property
    def undelivered(self) -> int:
        """Requests that arrived but were never evicted (a log that stops mid-run)."""
        return int(self.requests.finish_step.isna().sum())

    def nbytes(self) -> int:
        """An estimate of the memory this run holds: columns, token lists, indices and frames. A trace's prompt
        (a BlockPrompt) holds three numbers a named block, not a list of its tokens: counted as tokens, the
        Azure code trace's 17.6M prompt tokens came to 1 GB, over the whole cache, so its run was made again
        for every page."""
        log = self.log
        columns = sum(c.itemsize * len(c) for c in (log.step, log.kind, log.slot, log.request, log.value, log.detail))
        prompts = [info.prompt for info in log.requests]
        tokens = log.kind.count(EventKind.EMIT) + sum(len(p) for p in prompts if not isinstance(p, BlockPrompt))
        blocks = sum(len(p.ids) for p in prompts if isinstance(p, BlockPrompt))
        frames = sum(int(f.memory_usage(index=True).sum()) for f in (self.steps, self.requests))
        narration = sum(len(s) + 60 for sentences in self.frames["narration"].values() for s in sentences)
        return 2 * columns + 60 * tokens + 24 * blocks + frames + narration + 600 * len(log.requests) + len(self.wire)


def parse_stop_token(text: str) -> int | None:
    """`"0"` -> 0; an empty field (or `none`) -> None: no stop token. Raises UserError otherwise."""
    text = text.strip()
    if text.lower() in ("", "none"):
        return None
    try:
        return int(text)
    except ValueError:
        raise UserError(
            f"The stop token ({text!r}) is not an integer token id: write one, e.g. 0, or leave it empty for none"
        ) from None


def parse_stop_sequences(text: str) -> tuple[tuple[int, ...], ...]:
    """`"7 8; 3 3 4"` -> ((7, 8), (3, 3, 4)). Raises UserError with what is wrong."""
    sequences = []
    for i, part in enumerate(text.split(";")):
        if not part.strip():
            continue
        try:
            sequences.append(tuple(int(token) for token in part.replace(",", " ").split()))
        except ValueError:
            raise UserError(
                f"Stop sequence {i + 1} ({part.strip()!r}) is not a list of integer token ids: "
                "write token ids separated by spaces, and sequences separated by ';', e.g. 7 8; 3 3 4"
            ) from None
    return tuple(sequences)


def scenario_digest(scenario: Scenario) -> str:
    """A key for Streamlit's caches, which cannot hash a Scenario (its fields are plain values)."""
    return hashlib.sha256(repr(scenario).encode()).hexdigest()


def apply_overrides(scenario: Scenario, o: Overrides) -> Scenario:
    """The scenario with the sidebar's settings. A run they change loses the lesson's captions,
    predictions and reveal, which were written for the lesson's own run (the generated narration
    says what this one does)."""
    changed = _with_settings(scenario, o)
    return changed if changed == scenario else dataclasses.replace(changed, captions={}, quizzes=(), reveal="")


def _with_settings(scenario: Scenario, o: Overrides) -> Scenario:
    engine = {
        k: v for k, v in (("batch_size", o.batch_size), ("batching", o.batching), ("padded", o.padded)) if v is not None
    }
    if o.fill_timeout is not None:
        engine["fill_timeout"] = o.fill_timeout or None
    if o.clear_stop_token or o.stop_token is not None:
        engine["stop_token"] = None if o.clear_stop_token else o.stop_token
    engine |= {key: getattr(o, key) for key in MEMORY if getattr(o, key) is not KEEP}
    scenario = scenario.with_engine(**engine)
    model = {k: v for k, v in (("seed", o.model_seed), ("stop_chance", o.stop_chance)) if v is not None}
    if model:
        scenario = dataclasses.replace(scenario, model=dataclasses.replace(scenario.model, **model))
    if scenario.workload is not None:
        workload = {k: v for k, v in (("count", o.workload_count), ("seed", o.workload_seed)) if v is not None}
        if workload:
            scenario = dataclasses.replace(scenario, workload=dataclasses.replace(scenario.workload, **workload))
    if o.stop_sequences:
        extra = [list(s) for s in o.stop_sequences]
        requests = tuple(
            dataclasses.replace(r, stop_sequences=(r.stop_sequences or []) + extra) for r in scenario.requests
        )
        scenario = dataclasses.replace(scenario, explicit_requests=requests, workload=None)
    return scenario


def _run(log: EventLog, scenario: Scenario | None, digest: str, wire: bytes | None = None) -> Run:
    """Everything the views draw from `log`; `wire`: its frames as compressed before (from the run cache)."""
    replay = Replay(log)
    cost = cost_model(scenario.cost) if scenario is not None else CostModel()  # (as Run.cost)
    steps = step_metrics(log, cost)
    if scenario is not None:  # carried in the log's header, so a downloaded log keeps its words
        log.vocabulary = dict(scenario.vocabulary)
    if wire is not None:
        frames = inflate(wire)
    elif is_long(len(steps), len(log)):  # the stage gets windows of it (cblab/ui/stage/long_run.py)
        frames = outline(replay)
    else:
        frames = encode(replay, scenario.captions if scenario else {})
    wire = compress(frames) if wire is None else wire
    return Run(log, replay, steps, request_metrics(log, cost, steps), scenario, digest, frames, wire)


def scenario_run(name: str, toml_text: str | None, overrides: Overrides) -> Run:
    """A built-in scenario (`toml_text` None) or an uploaded one, with overrides, run once (a built-in
    one's run is also kept on disk: cblab/ui/runs/run_cache.py)."""

    def make() -> Run:
        scenario = resolve_scenario(name) if toml_text is None else parse_scenario(toml_text, name)
        scenario = apply_overrides(scenario, overrides)
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:16]
        kept = run_cache.key(scenario_digest(scenario)) if toml_text is None else None
        found = run_cache.load(kept) if kept else None
        if found is not None:
            return _run(found[0], scenario, digest, wire=found[1])
        with st.spinner("Running the engine…"):
            run = _run(simulate(scenario), scenario, digest)
        if kept:
            run_cache.store_later(kept, run.log, run.wire)
        return run

    key = ("scenario", name, None if toml_text is None else hashlib.sha256(toml_text.encode()).hexdigest(), overrides)
    return RUNS.get(key, make, Run.nbytes)


def log_run(jsonl_text: str, digest: str) -> Run:
    """An uploaded event log, replayed without the engine. `digest` names the entry."""

    def make() -> Run:
        with st.spinner("Loading the event log…"):
            log = EventLog.from_jsonl(jsonl_text)
            check_loaded_log(log)
            if not len(log):
                raise ValueError("the event log has a header but no events to replay")
            return _run(log, None, digest[:16])

    return RUNS.get(("log", digest), make, Run.nbytes)


def uploaded_bytes(upload) -> bytes:
    """An uploaded file's bytes; UserError if too big."""
    data = upload.getvalue()
    if len(data) > MAX_UPLOAD_BYTES:
        raise UserError(
            f"{upload.name}: the file is {len(data) / 1e6:.1f} MB; the limit is {MAX_UPLOAD_BYTES / 1e6:.0f} MB"
        )
    return data


def uploaded_text(upload) -> tuple[str, str]:
    """The text and a digest of an uploaded file; UserError if too big or not UTF-8."""
    data = uploaded_bytes(upload)
    try:
        return data.decode("utf-8"), hashlib.sha256(data).hexdigest()
    except UnicodeDecodeError:
        raise UserError(f"{upload.name}: not a UTF-8 text file") from None


def is_event_log(upload) -> bool:
    """An uploaded event log (replayed as recorded): a .jsonl file whose first line names a `format`, as the log's
    header does (a wrong one is then reported as such). Any other .jsonl is a trace (Mooncake's)."""
    if upload is None or not upload.name.endswith(".jsonl"):
        return False
    return b'"format"' in upload.getvalue()[:400].split(b"\n", 1)[0]


def is_trace(upload) -> bool:
    """An uploaded request trace: Mooncake's JSONL, Azure's CSV, either compressed (engine/lab/trace_upload.py)."""
    return upload is not None and upload.name.endswith(TRACE_SUFFIXES) and not is_event_log(upload)


def uploaded_scenario(upload) -> Scenario | None:
    """The uploaded scenario as written, or a trace's (None for a log, or a file that does not parse: `load`
    reports why)."""
    if upload is None or not (upload.name.endswith(".toml") or is_trace(upload)):
        return None
    try:
        if is_trace(upload):
            return trace_scenario(upload)
        text, _ = uploaded_text(upload)
        return parse_scenario(text, upload.name)
    except Exception:  # whatever it is, `load` reports it as a message
        return None


def trace_scenario(upload) -> Scenario:
    """An uploaded trace's scenario, read and checked once per file (its digest) for the whole class."""
    data = uploaded_bytes(upload)
    return _trace_scenario(upload.name, hashlib.sha256(data).hexdigest(), data)


@shared_cache(maxsize=16)
def _trace_scenario(filename: str, digest: str, data: bytes) -> Scenario:
    return uploaded_trace(data, filename)


def trace_run(upload, overrides: Overrides) -> Run:
    """An uploaded trace replayed through the engine, within the app's limits."""
    scenario = apply_overrides(trace_scenario(upload), overrides)

    def make() -> Run:
        with st.spinner(f"Replaying {upload.name}…"):
            return _run(simulate(scenario), scenario, digest[:16])

    digest = scenario_digest(scenario)
    return RUNS.get(("trace", digest), make, Run.nbytes)


def load(name: str, upload, overrides: Overrides) -> Run:
    """The run to show; every failure the user can cause becomes a UserError."""
    try:
        if upload is None:
            return scenario_run(name, None, overrides)
        if is_trace(upload):
            return trace_run(upload, overrides)
        text, digest = uploaded_text(upload)
        if upload.name.endswith(".jsonl"):
            return log_run(text, digest)
        return scenario_run(upload.name, text, overrides)
    except UserError:
        raise
    except (ScenarioError, ValueError, TypeError) as exc:
        raise UserError(str(exc)) from None
    except Exception as exc:  # input that passes every check but still cannot be shown: a message, not a traceback
        logging.getLogger(__name__).exception("a run could not be shown")
        where = upload.name if upload is not None else name
        raise UserError(f"{where}: cannot be shown ({type(exc).__name__}: {exc})") from None
