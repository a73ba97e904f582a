"""Event log ⇄ records and JSON Lines, with strict validation of what is loaded.

A loaded file may come from a user's upload, so every problem is reported as a
`ValueError` naming the line and the reason, never as a crash deeper down: fields are
checked for type and range (everything must fit the log's columns), and the events must
tell a possible story (`_Structure`), so whatever loads also replays.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from .events import (
    FORMAT,
    KIND_BY_LABEL,
    NONE,
    REASON_BY_LABEL,
    VERSION,
    EventKind,
    EventLog,
    LogSettings,
    RequestInfo,
    mask_bits,
)
from .limits import MAX_BATCH_SIZE, parse_text
from .validation import INT64_MAX, INT64_MIN, MAX_STEP


def event_records(log: EventLog):
    """Yield one dict per event, with the request table's fields on `arrive` events."""
    for i, event in enumerate(log):
        record = {name: getattr(event, name) for name in event.__slots__}
        if event.kind == "arrive":
            info = log.requests[log.request[i]]
            record.update(
                prompt=list(info.prompt),
                max_tokens=info.max_tokens,
                stop_sequences=[list(s) for s in info.stop_sequences],
            )
        yield record


def _compact(record: dict) -> dict:
    out = {}
    for key, value in record.items():
        if value is None and key not in ("slot", "request_id"):
            continue
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


def dump_jsonl(log: EventLog) -> str:
    settings = {k: v for k, v in asdict(log.settings).items() if v is not None or k == "stop_token"}
    lines = [json.dumps({"format": FORMAT, "version": VERSION, **settings})]
    lines.extend(json.dumps(_compact(record)) for record in event_records(log))
    return "\n".join(lines) + "\n"


class _Line:
    """One parsed line, with typed getters that raise `ValueError` naming the field."""

    def __init__(self, number: int, data: object):
        if not isinstance(data, dict):
            raise ValueError(f"line {number}: expected a JSON object")
        self.number, self.data = number, data

    def fail(self, field: str, problem: str) -> ValueError:
        got = repr(self.data.get(field))
        got = got if len(got) <= 60 else got[:59] + "…"
        return ValueError(f"line {self.number}: {field}: {problem}, got {got}")

    def int(self, field: str, *, optional: bool = False, minimum: int | None = None, small: bool = False):
        """An integer field; `small` ones are stored in 32-bit columns (steps, slots, positions)."""
        value = self.data.get(field)
        if value is None and optional:
            return None
        if type(value) is not int or (minimum is not None and value < minimum):
            raise self.fail(field, "must be an integer" + (f" >= {minimum}" if minimum is not None else ""))
        if not (-(2**31) <= value <= MAX_STEP if small else INT64_MIN <= value <= INT64_MAX):
            raise self.fail(field, "is out of range (" + ("below 2**31" if small else "beyond 64 bits") + ")")
        return value

    def ints(self, field: str) -> tuple[int, ...]:
        value = self.data.get(field)
        if not isinstance(value, list) or any(type(t) is not int or not INT64_MIN <= t <= INT64_MAX for t in value):
            raise self.fail(field, "must be a list of 64-bit integers")
        return tuple(value)

    def str(self, field: str) -> str:
        value = self.data.get(field)
        if not isinstance(value, str):
            raise self.fail(field, "must be a string")
        return value


def _settings(line: _Line) -> LogSettings:
    if line.data.get("format") != FORMAT:
        raise ValueError(f"line 1: not an event log (expected a header with format {FORMAT!r})")
    if line.data.get("version") != VERSION:
        raise line.fail("version", f"unsupported version (this reader knows {VERSION})")
    batching = line.str("batching")
    if batching not in ("continuous", "static"):
        raise line.fail("batching", "must be 'continuous' or 'static'")
    padded = line.data.get("padded")
    if not isinstance(padded, bool):
        raise line.fail("padded", "must be true or false")
    batch_size = line.int("batch_size", minimum=1, small=True)
    if batch_size > MAX_BATCH_SIZE:
        raise line.fail("batch_size", f"must be <= {MAX_BATCH_SIZE}")
    model = line.data.get("model")
    if model is not None and not isinstance(model, str):
        raise line.fail("model", "must be a string")
    return LogSettings(batch_size, line.int("stop_token", optional=True), batching, padded, model)


def load_jsonl(text: str) -> EventLog:
    rows = [(n, raw) for n, raw in enumerate(text.splitlines(), 1) if raw.strip()]
    if not rows:
        raise ValueError("the file is empty: expected an event log header line")
    log, structure = None, _Structure()
    for number, raw in rows:
        line = _Line(number, _parse(number, raw))
        try:
            if log is None:
                log = EventLog(_settings(line))
            else:
                _load_event(log, line)
                structure.check(log, line)
        except ValueError as exc:
            message = str(exc)
            raise ValueError(message if message.startswith("line ") else f"line {number}: {message}") from None
        except (TypeError, KeyError, IndexError, OverflowError) as exc:  # a last resort: still names the line
            raise ValueError(f"line {number}: cannot be read ({type(exc).__name__}: {exc})") from None
    return log


def _parse(number: int, raw: str) -> object:
    try:
        return parse_text(json.loads, raw, json.JSONDecodeError)
    except ValueError as exc:
        raise ValueError(f"line {number}: not valid JSON ({exc})") from None


class _Structure:
    """Checks that the events tell a possible story, so a replay of the file cannot fail later:
    a request is admitted once into a free slot, emits only from its own slot, in order,
    after its step's one model call and from a row that call had active, and is delivered once."""

    def __init__(self):
        self.owner: dict[int, int] = {}  # slot -> request index
        self.slot_of: dict[int, int] = {}  # request index -> slot
        self.admitted: set[int] = set()
        self.done: set[int] = set()
        self.emitted: dict[int, int] = {}  # request index -> tokens so far
        self.call_step, self.call_mask, self.call_rows_left = -1, 0, 0  # the latest model call

    def check(self, log: EventLog, line: _Line) -> None:
        i = len(log) - 1
        kind, slot, request = EventKind(log.kind[i]), log.slot[i], log.request[i]
        name = log.request_id(request)
        if request != NONE and request in self.done and kind is not EventKind.ERROR:
            raise line.fail("request_id", f"{name} was already delivered")
        if kind is EventKind.ADMIT:
            if slot == NONE or slot in self.owner:
                raise line.fail("slot", "an admission needs a free slot")
            if request in self.admitted:
                raise line.fail("request_id", f"{name} is admitted twice")
            self.owner[slot], self.slot_of[request] = request, slot
            self.admitted.add(request)
        elif kind is EventKind.MODEL_CALL:
            if self.call_step == log.step[i]:
                raise line.fail("kind", f"step {log.step[i]} already has its model call")
            self.call_step, self.call_mask, self.call_rows_left = log.step[i], log.blobs[log.b[i]], log.a[i]
            if self.call_mask.bit_count() > self.call_rows_left:
                raise line.fail("rows", "must count every active row of the mask")
        elif kind in (EventKind.EMIT, EventKind.STOP_MATCH):
            if slot == NONE or self.owner.get(slot) != request:
                raise line.fail("slot", f"{name} does not hold this slot")
            if kind is EventKind.EMIT:
                if self.call_step != log.step[i]:
                    raise line.fail("kind", "an emit needs a model call earlier in its step")
                if not self.call_mask >> slot & 1 or self.call_rows_left == 0:
                    raise line.fail("slot", "this step's model call had no active row in this slot")
                self.call_rows_left -= 1
                position = log[i].position
                if position != self.emitted.get(request, 0):
                    raise line.fail("position", f"expected position {self.emitted.get(request, 0)} for {name}")
                self.emitted[request] = position + 1
        elif kind is EventKind.EVICT:
            if slot != self.slot_of.get(request, NONE):  # NONE: it must hold no slot
                raise line.fail("slot", f"{name} is evicted from a slot it does not hold")
            if slot != NONE:
                del self.owner[slot], self.slot_of[request]
            self.done.add(request)


def _load_event(log: EventLog, line: _Line) -> None:
    label = line.data.get("kind")
    kind = KIND_BY_LABEL.get(label) if isinstance(label, str) else None
    if kind is None:
        raise line.fail("kind", f"must be one of {sorted(KIND_BY_LABEL)}")
    step = line.int("step", minimum=0, small=True)
    if len(log) and step < log.step[-1]:
        raise line.fail("step", f"steps must not go back (previous event is at step {log.step[-1]})")
    slot = line.int("slot", optional=True, minimum=0, small=True)
    slot = NONE if slot is None else slot
    if slot >= log.settings.batch_size:
        raise line.fail("slot", f"must be below batch_size {log.settings.batch_size}")
    if kind is EventKind.ARRIVE:
        stops = line.data.get("stop_sequences", [])
        if not isinstance(stops, list) or any(
            not isinstance(s, list) or not s or any(type(t) is not int for t in s) for s in stops
        ):
            raise line.fail("stop_sequences", "must be a list of non-empty lists of integers")
        if any(not INT64_MIN <= t <= INT64_MAX for s in stops for t in s):
            raise line.fail("stop_sequences", "must hold 64-bit integers")
        request_id = line.str("request_id")
        if request_id in log.request_index:
            raise line.fail("request_id", "arrives twice")
        info = RequestInfo(
            request_id, line.ints("prompt"), line.int("max_tokens", minimum=0), tuple(tuple(s) for s in stops)
        )
        log.arrive(step, info)
        return
    request = NONE
    if kind is not EventKind.MODEL_CALL:
        request_id = line.data.get("request_id")
        if request_id is not None and not isinstance(request_id, str):
            raise line.fail("request_id", "must be a string or null")
        if request_id is not None:
            request = log.request_index.get(request_id, NONE)
            if request == NONE:
                raise line.fail("request_id", "names a request with no earlier arrive event")
        elif kind is not EventKind.ERROR:
            raise line.fail("request_id", "is required for this kind")
    if kind is EventKind.MODEL_CALL:
        mask = line.data.get("active_mask")
        if (
            not isinstance(mask, list)
            or len(mask) != log.settings.batch_size
            or any(not isinstance(m, bool) for m in mask)
        ):
            raise line.fail("active_mask", f"must be a list of {log.settings.batch_size} booleans")
        log.model_call(step, line.int("rows", minimum=1, small=True), mask_bits(mask))
    elif kind is EventKind.ERROR:
        log.error(step, slot, request, line.str("message"))
    elif kind is EventKind.EMIT:
        position = line.int("position", minimum=0, small=True)
        if position + len(log.requests[request].prompt) + 1 > MAX_STEP:
            raise line.fail("position", "is beyond what a 32-bit column holds")
        log.emit(step, slot, request, line.int("token"), position)
    elif kind is EventKind.STOP_MATCH:
        index = line.int("sequence_index", minimum=-1)
        if index >= len(log.requests[request].stop_sequences):
            raise line.fail("sequence_index", "names no stop sequence of this request")
        log.append(step, kind, slot, request, index)
    elif kind is EventKind.EVICT:
        reason = REASON_BY_LABEL.get(line.data.get("reason"))
        if reason is None:
            raise line.fail("reason", f"must be one of {sorted(REASON_BY_LABEL)}")
        log.append(step, kind, slot, request, reason)
    else:
        log.append(step, kind, slot, request)
