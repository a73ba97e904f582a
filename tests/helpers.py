"""Factories and recording mock models shared by the tests."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from engine import BatchInferenceEngine
from engine.analysis.replay import Replay

Snapshot = tuple[dict[int, str], tuple[str, ...]]  # (slot_table, waiting) after one step


class ScriptModel:
    """Continues each prompt with a fixed script: `{prompt tuple: [tokens...]}`.

    Past the end of its script a row gets `filler`. Records every call (copies).
    """

    def __init__(self, scripts: dict[tuple[int, ...], list[int]], filler: int = 99):
        self.scripts = scripts
        self.filler = filler
        self.calls: list[list[list[int]]] = []
        self.masks: list[list[bool]] = []

    def _next(self, prefix: list[int]) -> int:
        prompt = max((p for p in self.scripts if tuple(prefix[: len(p)]) == p), key=len, default=None)
        if prompt is None:
            raise KeyError(f"no script for prefix {prefix}")
        script, i = self.scripts[prompt], len(prefix) - len(prompt)
        return script[i] if i < len(script) else self.filler

    def generate_next_tokens(self, batch_prefixes: list[list[int]]) -> list[int]:
        self.calls.append([list(p) for p in batch_prefixes])
        return [self._next(p) for p in batch_prefixes]

    def generate_next_tokens_padded(self, batch_prefixes, active_mask):
        self.calls.append([list(p) for p in batch_prefixes])
        self.masks.append(list(active_mask))
        return [self._next(p) if active else "garbage" for p, active in zip(batch_prefixes, active_mask)]


def filler_model(*prompts: int, filler: int = 7) -> ScriptModel:
    """A ScriptModel that answers `filler` to each one-token prompt in `prompts`."""
    return ScriptModel({(prompt,): [] for prompt in prompts}, filler=filler)


class HashModel:
    """Next token = a hash of the *whole* prefix, so crossed rows give different answers."""

    def __init__(self, vocab_size: int = 6):
        self.vocab_size = vocab_size
        self.calls: list[list[list[int]]] = []
        self.masks: list[list[bool]] = []

    def token(self, prefix: list[int]) -> int:
        digest = hashlib.blake2b(repr(prefix).encode(), digest_size=4).digest()
        return int.from_bytes(digest, "little") % self.vocab_size

    def generate_next_tokens(self, batch_prefixes):
        self.calls.append([list(p) for p in batch_prefixes])
        return [self.token(p) for p in batch_prefixes]

    def generate_next_tokens_padded(self, batch_prefixes, active_mask):
        self.calls.append([list(p) for p in batch_prefixes])
        self.masks.append(list(active_mask))
        return [self.token(p) if active else -12345 for p, active in zip(batch_prefixes, active_mask)]


class FlakyModel:
    """Wraps a model; call number `n` (0-based, counting attempts) fails as `faults[n]` says.

    Fault kinds: "raise", "short" (one token missing), "long", "float", "bool", "none" and "huge"
    (2**63: every row answers that value), and "last bool" (the last row answers True).
    """

    def __init__(self, inner, faults: dict[int, str]):
        self.inner, self.faults, self.attempts = inner, dict(faults), 0

    def _answer(self, answer: list[int]) -> list:
        fault = self.faults.get(self.attempts)
        self.attempts += 1
        if fault == "raise":
            raise RuntimeError("injected fault")
        if fault == "short":
            return answer[:-1]
        if fault == "long":
            return [*answer, 1]
        if fault in ("float", "bool", "none", "huge"):
            bad = {"float": 1.5, "bool": True, "none": None, "huge": 2**63}[fault]
            return [bad] * len(answer)
        if fault == "last bool":
            return [*answer[:-1], True]
        return answer

    def generate_next_tokens(self, batch_prefixes):
        return self._answer(self.inner.generate_next_tokens(batch_prefixes))

    def generate_next_tokens_padded(self, batch_prefixes, active_mask):
        return self._answer(self.inner.generate_next_tokens_padded(batch_prefixes, active_mask))


@dataclass
class Spec:
    """One request of a generated workload."""

    prompt: list[int]
    max_tokens: int
    stop_sequences: list[list[int]] | None = None
    arrival_step: int | None = None
    cancel_at: int | None = None  # cancel before this step (None: never)


@dataclass
class Outcome:
    engine: BatchInferenceEngine
    results: dict[str, list[int]] = field(default_factory=dict)  # request id -> callback value
    calls: dict[str, int] = field(default_factory=dict)  # request id -> callback count
    streamed: dict[str, list[int]] = field(default_factory=dict)  # request id -> on_token values
    ids: list[str] = field(default_factory=list)  # in submission order
    snapshots: dict[int, Snapshot] = field(default_factory=dict)  # step -> state after it (run_specs)


def make_engine(model=None, batch_size: int = 2, stop_token: int | None = 0, **options) -> BatchInferenceEngine:
    return BatchInferenceEngine(model if model is not None else HashModel(), batch_size, stop_token, **options)


def submit_specs(engine: BatchInferenceEngine, specs: list[Spec], *, stream: bool = False) -> Outcome:
    """Submit every spec with recording callbacks (and `on_token` when `stream`)."""
    outcome = Outcome(engine)
    for spec in specs:
        box: dict = {}

        def deliver(tokens, box=box):
            outcome.results[box["id"]] = list(tokens)
            outcome.calls[box["id"]] = outcome.calls.get(box["id"], 0) + 1

        def on_token(token, box=box):
            outcome.streamed.setdefault(box["id"], []).append(token)

        rid = engine.submit_request(
            spec.prompt,
            spec.max_tokens,
            deliver,
            spec.stop_sequences,
            arrival_step=spec.arrival_step,
            on_token=on_token if stream else None,
        )
        box["id"] = rid
        outcome.ids.append(rid)
    return outcome


def run_specs(engine: BatchInferenceEngine, specs: list[Spec], *, stream: bool = False) -> Outcome:
    """Submit every spec and step to the end, cancelling requests on cue."""
    outcome = submit_specs(engine, specs, stream=stream)
    cancels: dict[int, list[str]] = {}
    for rid, spec in zip(outcome.ids, specs):
        if spec.cancel_at is not None:
            cancels.setdefault(spec.cancel_at, []).append(rid)

    def cancel_due():
        for step in sorted(step for step in cancels if step <= engine.clock):
            for rid in cancels.pop(step):
                engine.cancel(rid)

    record_steps(engine, cancel_due, into=outcome.snapshots)
    return outcome


class Recorder:
    """Submits requests under chosen ids with recording callbacks; counts every delivery."""

    def __init__(self, engine: BatchInferenceEngine):
        self.engine = engine
        self.results: dict[str, list[int]] = {}  # request id -> callback value
        self.calls: dict[str, int] = {}  # request id -> callback count

    def callback(self, name: str, then: Callable[[], object] | None = None):
        """A callback recording the delivery to `name`, then calling `then()` (which may raise)."""

        def deliver(tokens):
            self.results[name] = list(tokens)
            self.calls[name] = self.calls.get(name, 0) + 1
            if then is not None:
                then()

        return deliver

    def submit(self, name: str, prompt, max_tokens, stops=None, *, then=None, **options) -> str:
        callback = self.callback(name, then)
        return self.engine.submit_request(prompt, max_tokens, callback, stops, request_id=name, **options)


def recording_engine(model, batch_size: int = 1, stop_token: int | None = None, **options):
    """An engine (no stop token unless given) and a Recorder submitting to it."""
    engine = make_engine(model, batch_size, stop_token, **options)
    return engine, Recorder(engine)


# -- reading the event log -------------------------------------------------------------------
def events(engine: BatchInferenceEngine, kind: str | None = None) -> list:
    return [e for e in engine.event_log if kind is None or e.kind == kind]


def evict_reasons(engine: BatchInferenceEngine) -> dict[str, str]:
    return {e.request_id: e.reason for e in events(engine, "evict")}


def admits(engine: BatchInferenceEngine) -> list[tuple[int, int, str]]:
    return [(e.step, e.slot, e.request_id) for e in events(engine, "admit")]


def stop_matches(engine: BatchInferenceEngine) -> list[tuple[int, str, int, tuple[int, ...]]]:
    return [(e.step, e.request_id, e.sequence_index, e.sequence) for e in events(engine, "stop_match")]


# -- stepping with snapshots, checked against the replay ---------------------------------------
def record_steps(
    engine: BatchInferenceEngine,
    before_step: Callable[[], object] | None = None,
    into: dict[int, Snapshot] | None = None,
) -> dict[int, Snapshot]:
    """Step to the end, calling `before_step()` first each time; record every step's Snapshot in `into`.

    An exception from a step propagates; what was recorded so far stays in `into`.
    """
    snaps = {} if into is None else into
    while True:
        if before_step is not None:
            before_step()
        if not engine.step():
            return snaps
        snaps[engine.clock - 1] = (dict(engine.slot_table), tuple(engine.waiting))


def assert_replay_matches(engine: BatchInferenceEngine, snaps: dict[int, Snapshot]) -> None:
    """The replay of the engine's log shows the recorded slot table and queue at every step."""
    replay = Replay(engine.event_log)
    for step, (table, waiting) in snaps.items():
        if step >= len(replay):
            assert table == {} and waiting == ()
            continue
        state = replay[step]
        live = {i: s.request_id for i, s in enumerate(state.slots) if s is not None and s.finish_reason is None}
        assert live == table, f"step {step}"
        assert state.waiting == waiting, f"step {step}"


class Upload:
    """Stands in for Streamlit's UploadedFile."""

    def __init__(self, name: str, data: bytes):
        self.name, self.data = name, data

    def getvalue(self) -> bytes:
        return self.data


def start_app(**query):
    """The app under Streamlit's AppTest, opened at these query parameters and run once."""
    import pathlib

    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(str(pathlib.Path(__file__).resolve().parent.parent / "app.py"), default_timeout=120)
    for key, value in query.items():
        app.query_params[key] = str(value)
    return app.run()
