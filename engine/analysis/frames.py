"""A run's frames for a player: everything the stage draws at any step, encoded once and compactly.

The stage (cblab/ui/stage/stage_component) plays a run in the browser, so it gets the whole run at
once, as plain lists that grow with the events, never with steps x slots:

- `requests`: per request its id, prompt length and generated tokens; `colours`: an index each;
- `occupancy`: [slot, request, first step, last step, how] per stretch a request held a
  slot; how: 0 it still holds it when the log ends, 1 evicted after its last step's model
  call, 2 it left at the next step's start (cancelled or preempted);
- `emits`: [request, first step, count] runs of consecutive steps at which it got a token;
- `stops`: [request, step, tokens] per completed stop: the tail to outline, from then on;
- `partial`: [request, step] cells after which a stop sequence is part-way matched;
- `waits`: [request, from, until, order] stretches in the queue (the queue after admission);
- `preempted`: [request, step] per preemption (it left its slot at that step's start);
- `busy`: the steps that have events (between them, the clock jumped: idle);
- `calls`: [step, rows sent, padded rows] per model call; `faults`: steps whose call failed;
- `narration`: the sentences of every busy step (a scenario's caption replaces them);
- `prefills`: [request, step, tokens, computed] per prefill (a run with a pool or a token budget);
- `kv`: the KV pool's changes, only for a run with a pool (both in kv_frames.py).

On the wire (`for_the_wire`), the narration's sentences are sent once each: `sentences`
lists them, and `narration` gives each step's sentences as indices into it (a long run
says "The model is called with 40 rows." thousands of times).

Colours are chosen so that neighbouring slots at the same time, and one slot's successive
occupants, never share one.

`outline` is all of this but the requests' tokens, `partial` and the narration: what a long run
keeps (engine/lab/limits.py, `is_long`), whose stage gets a window of it at a time, made with
those three for the window's steps alone (window_frames.py).
"""

from __future__ import annotations

import numpy as np

from ..core.log.events import ABSENT, EventKind
from ..core.stops import NO_MATCH, stop_matcher
from .array_sets import unique
from .colours import colours
from .kv_frames import kv_section, prefill_records
from .narration import narrate
from .replay import FOREVER, Replay

STILL_THERE, AFTER_CALL, NEXT_STEP = 0, 1, 2


def encode(replay: Replay, captions: dict[int, str] | None = None) -> dict:
    """The frames of `replay`'s run, as JSON-ready lists."""
    log, captions, frames = replay.log, captions or {}, outline(replay)
    generated = [replay.outputs.generated(info.request_id) for info in log.requests]
    for request, tokens in zip(frames["requests"], generated):
        request["tokens"] = tokens
    frames["partial"] = _partial(log, frames["emits"], generated)
    frames["narration"] = {
        str(step): [captions[step]] if step in captions else narrate(replay, step, log.vocabulary)
        for step in frames["busy"]
    }
    return frames


def outline(replay: Replay) -> dict:
    """The frames without what grows with the tokens or the steps' words: no request's `tokens`, no
    `partial`, an empty `narration`. A long run keeps this, and the stage gets a window of it
    (window_frames.py), whose tokens and narration are made for the window's steps alone."""
    log = replay.log
    steps, kinds, requests = (
        _column(c, dt, log) for c, dt in ((log.step, np.int32), (log.kind, np.int8), (log.request, np.int32))
    )
    occupancy = _occupancy(replay)
    kv = kv_section(log, steps, kinds, requests)
    return {
        "version": 1,
        "slots": log.config.batch_size,
        "steps": len(replay),
        "padded": log.config.padded,
        "batching": log.config.batching,
        "requests": [{"id": info.request_id, "prompt": len(info.prompt)} for info in log.requests],
        "colours": colours(occupancy, len(log.requests)),
        "occupancy": occupancy,
        "emits": _emit_runs(steps, kinds, requests),
        "stops": _stops(log, steps, kinds, requests),
        "partial": [],
        "waits": [list(row) for row in replay.waits()],
        "preempted": [[int(requests[i]), int(steps[i])] for i in np.flatnonzero(kinds == EventKind.PREEMPT)],
        "busy": unique(steps).tolist(),
        "calls": _calls(log, steps, kinds),
        "faults": sorted({int(steps[i]) for i in np.flatnonzero(kinds == EventKind.ERROR) if requests[i] == ABSENT}),
        "prefills": prefill_records(log, steps, kinds, requests),
        **({"kv": kv} if kv is not None else {}),
        "words": {str(token): word for token, word in log.vocabulary.items()},
        "narration": {},
    }


def for_the_wire(frames: dict) -> dict:
    """The frames as the stage receives them: each distinct sentence once (see the module docstring)."""
    index: dict[str, int] = {}
    narration = {step: [index.setdefault(s, len(index)) for s in said] for step, said in frames["narration"].items()}
    return {**frames, "narration": narration, "sentences": list(index)}


def _column(values, dtype, log) -> np.ndarray:
    return np.frombuffer(values, dtype).astype(np.int64) if len(log) else np.zeros(0, np.int64)


def _occupancy(replay: Replay) -> list[list[int]]:
    """Every stretch a request held a slot, with how it ended (see the module docstring)."""
    log, out = replay.log, []
    kinds, slots = (np.frombuffer(c, dt) for c, dt in ((log.kind, np.int8), (log.slot, np.int32)))
    leaves = np.flatnonzero(((kinds == EventKind.EVICT) | (kinds == EventKind.PREEMPT)) & (slots != ABSENT)).tolist()
    left_early = {(log.slot[i], log.request[i], log.step[i]) for i in leaves}
    for slot, held in enumerate(replay.occupancies()):
        for o in held:
            if o.last >= FOREVER:
                how, last = STILL_THERE, len(replay) - 1
            else:
                how, last = (NEXT_STEP if (slot, o.request, o.last + 1) in left_early else AFTER_CALL), o.last
                if (slot, o.request, o.last) in left_early:
                    how = AFTER_CALL
            out.append([slot, o.request, o.start, last, how])
    return out


def _emit_runs(steps, kinds, requests) -> list[list[int]]:
    """[request, first step, count] per run of consecutive steps at which a request emitted."""
    emits = np.flatnonzero(kinds == EventKind.EMIT)
    order = emits[np.lexsort((steps[emits], requests[emits]))]
    request, step = requests[order], steps[order]
    if not len(order):
        return []
    starts = np.flatnonzero(np.r_[True, (request[1:] != request[:-1]) | (step[1:] != step[:-1] + 1)])
    counts = np.diff(np.r_[starts, len(order)])
    return np.column_stack([request[starts], step[starts], counts]).tolist()


def _stops(log, steps, kinds, requests) -> list[list[int]]:
    out = []
    for i in np.flatnonzero(kinds == EventKind.STOP_MATCH).tolist():
        index, request = log.value[i], int(requests[i])
        length = 1 if index == -1 else len(log.requests[request].stop_sequences[index])
        out.append([request, int(steps[i]), length])
    return out


def _partial(log, emits: list[list[int]], generated: list[list[int]]) -> list[list[int]]:
    """Cells after whose token some stop sequence is part-way matched (not yet completed)."""
    at: dict[int, list[int]] = {}
    for request, first, count in emits:
        at.setdefault(request, []).extend(range(first, first + count))
    out = []
    for request, emit_steps in at.items():
        stops = log.requests[request].stop_sequences
        if not stops:
            continue
        matcher, state = stop_matcher(stops), 0
        for step, token in zip(emit_steps, generated[request]):
            state = matcher.advance(state, token)
            if state and matcher.matched(state) == NO_MATCH:
                out.append([request, step])
    return out


def _calls(log, steps, kinds) -> list[list[int]]:
    out = []
    for i in np.flatnonzero(kinds == EventKind.MODEL_CALL).tolist():
        bits, _ = log.call_at(i)
        out.append([int(steps[i]), log.value[i], log.value[i] - bits.bit_count()])
    return out
