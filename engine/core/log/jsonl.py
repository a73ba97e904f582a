"""Event log ⇄ records and JSON Lines, with strict validation of what is loaded.

A loaded file may come from a user's upload, so every problem is reported as a
`ValueError` naming the line and the reason, never as a crash deeper down: fields are
checked for type and range (everything must fit the log's columns), and the events must
tell a possible story (`_Structure`), so whatever loads also replays.

`log` below is an `EventLog`; this module never imports that class (the log imports
this module, and `EventLog.from_jsonl` passes its class in), so the two stay one-way.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict

from ..block_prompt import BlockPrompt
from ..config import KV_POLICIES, EngineConfig
from ..validation import (
    INT64_MAX,
    INT64_MIN,
    MAX_ENGINE_BATCH_SIZE,
    MAX_STEP,
    InvalidType,
    InvalidValue,
    check_bool,
    check_choice,
    check_int,
    check_number,
    check_stop_sequences,
    check_str,
    check_token,
    check_tokens,
    parse_text,
    shorten,
)
from .events import ABSENT, FORMAT, KIND_BY_LABEL, REASON_BY_LABEL, VERSION, EventKind, RequestInfo, mask_bits
from .pool_replay import PoolReplay

WORD_KEY = re.compile(r"-?[0-9]{1,19}")  # a vocabulary key: a token id, as JSON object keys are strings
MAX_WORD = 200  # characters in one vocabulary word


def event_records(log):
    """Yield one dict per event, with the request table's fields on `arrive` events."""
    for i, event in enumerate(log):
        record = {name: getattr(event, name) for name in event.__slots__}
        if event.kind == "arrive":
            info = log.requests[log.request[i]]
            record.update(
                **_prompt_record(info.prompt),
                max_tokens=info.max_tokens,
                stop_sequences=[list(s) for s in info.stop_sequences],
            )
            if info.priority:  # only when not 0: a FIFO log reads as it always did
                record["priority"] = info.priority
        yield record


def _prompt_record(prompt) -> dict:
    """An arrival's prompt: its tokens, or a `BlockPrompt`'s named blocks (`prompt_blocks`, a trace's prompt)."""
    if type(prompt) is BlockPrompt:
        return {"prompt_blocks": {"vocab_size": prompt.vocab_size, "blocks": prompt.pairs()}}
    return {"prompt": list(prompt)}


def _compact(record: dict) -> dict:
    out = {}
    for key, value in record.items():
        if value is None and key not in ("slot", "request_id"):
            continue
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


MEMORY_FIELDS = ("kv_blocks", "block_size", "kv_policy", "token_budget")  # in the header only when in play


def dump_jsonl(log) -> str:
    settings = asdict(log.config)
    if not log.config.memory:
        settings = {k: v for k, v in settings.items() if k not in MEMORY_FIELDS}
    if log.config.fill_timeout is None:  # in the header only when set
        del settings["fill_timeout"]
    if not log.config.prefix_caching:  # (so are these two)
        del settings["prefix_caching"]
    if not log.config.kv_watermark:
        del settings["kv_watermark"]
    header = {"format": FORMAT, "version": VERSION, **settings}
    if log.model is not None:
        header["model"] = log.model
    if log.vocabulary:
        header["vocabulary"] = {str(token): word for token, word in sorted(log.vocabulary.items())}
    lines = [json.dumps(header)]
    lines.extend(json.dumps(_compact(record)) for record in event_records(log))
    return "\n".join(lines) + "\n"


class _Line:
    """One parsed line, with typed getters that raise `ValueError` naming the field."""

    def __init__(self, number: int, data: object):
        if not isinstance(data, dict):
            raise ValueError(f"line {number}: expected a JSON object")
        self.number, self.data = number, data

    def fail(self, field: str, problem: str) -> ValueError:
        """A problem with how this field fits the rest of the log."""
        return ValueError(f"line {self.number}: {field}: {problem}, got {shorten(repr(self.data.get(field)))}")

    def _checked(self, check, field: str, *args, optional: bool = False):
        value = self.data.get(field)
        if value is None and optional:
            return None
        try:
            return check(f"line {self.number}: {field}", value, *args)
        except (InvalidType, InvalidValue) as exc:
            raise ValueError(str(exc)) from None

    def int(self, field: str, *, minimum: int, maximum: int = INT64_MAX, optional: bool = False) -> int:
        """An integer field; steps, slots and positions are stored in 32 bits (maximum=MAX_STEP)."""
        return self._checked(check_int, field, minimum, maximum, optional=optional)

    def token(self, field: str, *, optional: bool = False) -> int:
        return self._checked(check_token, field, optional=optional)

    def tokens(self, field: str) -> tuple[int, ...]:
        return tuple(self._checked(check_tokens, field))

    def prompt(self) -> tuple[int, ...] | BlockPrompt:
        """An arrival's `prompt`, or its `prompt_blocks` ({"vocab_size": v, "blocks": [[name, length], ...]})."""
        named = self.data.get("prompt_blocks")
        if named is None:
            return self.tokens("prompt")
        if not (isinstance(named, dict) and set(named) == {"vocab_size", "blocks"} and type(named["blocks"]) is list):
            raise self.fail("prompt_blocks", 'must be {"vocab_size": v, "blocks": [[name, length], ...]}')
        try:
            return BlockPrompt(named["blocks"], named["vocab_size"])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"line {self.number}: prompt_blocks: {exc}") from None

    def str(self, field: str) -> str:
        return self._checked(check_str, field)


def _header(line: _Line) -> tuple[EngineConfig, str | None, dict[int, str]]:
    if line.data.get("format") != FORMAT:
        raise ValueError(f"line 1: not an event log (expected a header with format {FORMAT!r})")
    if line.data.get("version") != VERSION:
        raise line.fail("version", f"unsupported version (this reader knows {VERSION})")
    batching = line._checked(check_choice, "batching", ("continuous", "static"))
    padded = line._checked(check_bool, "padded")
    batch_size = line.int("batch_size", minimum=1, maximum=MAX_ENGINE_BATCH_SIZE)
    model = line._checked(check_str, "model", optional=True)
    config = EngineConfig(
        batch_size,
        line.token("stop_token", optional=True),
        batching,
        padded,
        kv_blocks=line.int("kv_blocks", minimum=1, maximum=MAX_STEP, optional=True),
        block_size=line.int("block_size", minimum=1, maximum=MAX_STEP, optional=True) or 16,
        kv_policy=line._checked(check_choice, "kv_policy", KV_POLICIES, optional=True) or "paged",
        token_budget=line.int("token_budget", minimum=batch_size, maximum=MAX_STEP, optional=True),
        fill_timeout=line.int("fill_timeout", minimum=0, maximum=MAX_STEP, optional=True),
        prefix_caching=line._checked(check_bool, "prefix_caching", optional=True) or False,
        kv_watermark=line._checked(check_number, "kv_watermark", optional=True) or 0.0,
    )
    return config, model, _vocabulary(line)


def _vocabulary(line: _Line) -> dict[int, str]:
    words = line.data.get("vocabulary", {})
    if not isinstance(words, dict) or any(
        not WORD_KEY.fullmatch(k) or not isinstance(w, str) or len(w) > MAX_WORD for k, w in words.items()
    ):
        raise line.fail("vocabulary", f"must map token ids to words of at most {MAX_WORD} characters")
    return {int(k): w for k, w in words.items()}


def load_jsonl(text: str, log_class):
    rows = [(n, raw) for n, raw in enumerate(text.splitlines(), 1) if raw.strip()]
    if not rows:
        raise ValueError("the file is empty: expected an event log header line")
    log, structure = None, _Structure()
    for number, raw in rows:
        line = _Line(number, _parse(number, raw))
        try:
            if log is None:
                log = log_class(*_header(line))
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
    a request is admitted into a free slot (again only after a preemption), emits only from
    its own slot, in order, after its step's one model call and from a row that call had
    active, holds only blocks nobody else holds (but cached blocks it hit, right after its
    admission), gives back what it holds, and is delivered once; an evicted block is taken by the
    very next event. With prefix caching, the pool replay (`pool_replay.py`) checks every block's
    story besides: which are free, cached, shared, and in what order they are handed out."""

    def __init__(self):
        self.owner: dict[int, int] = {}  # slot -> request index
        self.slot_of: dict[int, int] = {}  # request index -> slot
        self.admitted: set[int] = set()
        self.done: set[int] = set()
        self.emitted: dict[int, int] = {}  # request index -> tokens so far
        self.call_step, self.call_mask, self.call_rows_left = -1, 0, 0  # the latest model call
        self.holders: dict[int, set[int]] = {}  # physical block -> the requests whose table holds it
        self.held: dict[int, list[int]] = {}  # request index -> its block table
        self.previous: tuple[EventKind, int, int] | None = None  # the last event: (kind, request, block)
        self.pool: PoolReplay | None = None  # with prefix caching: the pool, to check each block's story

    def check(self, log, line: _Line) -> None:
        i = len(log) - 1
        kind, slot, request = EventKind(log.kind[i]), log.slot[i], log.request[i]
        self._check_structure(log, line, i, kind, slot, request)
        if log.config.prefix_caching:
            if self.pool is None:
                self.pool = PoolReplay(log.config.kv_blocks, log.config.block_size)
            problem = self.pool.apply(log, i)
            if problem:
                raise line.fail("block", problem)

    def _check_structure(self, log, line: _Line, i: int, kind: EventKind, slot: int, request: int) -> None:
        previous, self.previous = self.previous, (kind, request, log.value[i])
        if (
            previous is not None
            and previous[0] is EventKind.KV_EVICT
            and (kind, request, log.value[i])
            != (
                EventKind.KV_ALLOC,
                *previous[1:],
            )
        ):
            raise line.fail("kind", f"a kv_evict must be followed by the kv_alloc of its block {previous[2]}")
        name = log.request_id(request)
        if request != ABSENT and request in self.done and kind not in (EventKind.ERROR, EventKind.KV_FREE):
            raise line.fail("request_id", f"{name} was already delivered")
        if kind is EventKind.ADMIT:
            if slot == ABSENT or slot in self.owner:
                raise line.fail("slot", "an admission needs a free slot")
            if request in self.admitted:
                raise line.fail("request_id", f"{name} is admitted twice")
            self.owner[slot], self.slot_of[request] = request, slot
            self.admitted.add(request)
        elif kind is EventKind.MODEL_CALL:
            if self.call_step == log.step[i]:
                raise line.fail("kind", f"step {log.step[i]} already has its model call")
            self.call_step, self.call_rows_left = log.step[i], log.value[i]
            self.call_mask = log.call_at(i)[0]
            if self.call_mask.bit_count() > self.call_rows_left:
                raise line.fail("rows", "must count every active row of the mask")
        elif kind in (EventKind.PREEMPT, EventKind.PREFILL, EventKind.KV_ALLOC, EventKind.PREFIX_HIT):
            if slot == ABSENT or self.owner.get(slot) != request:
                raise line.fail("slot", f"{name} does not hold this slot")
            if kind is EventKind.PREEMPT:  # it leaves its slot and may be admitted again
                del self.owner[slot], self.slot_of[request]
                self.admitted.discard(request)
            elif kind is not EventKind.PREFILL:
                self._take(line, kind, request, log.value[i], previous, name, log)
        elif kind is EventKind.KV_FREE:
            if log.value[i] != len(self.held.get(request, ())):
                raise line.fail("blocks", f"{name} holds {len(self.held.get(request, ()))} blocks")
            for block in self.held.pop(request, ()):
                self.holders[block].discard(request)
        elif kind in (EventKind.EMIT, EventKind.STOP_MATCH):
            if slot == ABSENT or self.owner.get(slot) != request:
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
            if slot != self.slot_of.get(request, ABSENT):  # ABSENT: it must hold no slot
                raise line.fail("slot", f"{name} is evicted from a slot it does not hold")
            if slot != ABSENT:
                del self.owner[slot], self.slot_of[request]
            self.done.add(request)

    def _take(self, line: _Line, kind: EventKind, request: int, block: int, previous, name, log) -> None:
        """A `kv_alloc` takes a block nobody holds; a `prefix_hit` (right after its row's admission) may take
        one other rows hold too (whether it holds those tokens is the pool replay's check)."""
        holders = self.holders.setdefault(block, set())
        if kind is EventKind.KV_ALLOC and holders:
            raise line.fail("block", f"block {block} is already held by {log.request_id(min(holders))}")
        after_admission = previous is not None and previous[0] in (EventKind.ADMIT, EventKind.PREFIX_HIT)
        if kind is EventKind.PREFIX_HIT and not (after_admission and previous[1] == request):
            raise line.fail("kind", f"a prefix_hit comes right after {name}'s admit (or its other hits)")
        holders.add(request)
        self.held.setdefault(request, []).append(block)


def _load_event(log, line: _Line) -> None:
    kind = KIND_BY_LABEL[line._checked(check_choice, "kind", tuple(sorted(KIND_BY_LABEL)))]
    step = line.int("step", minimum=0, maximum=MAX_STEP)
    if len(log) and step < log.step[-1]:
        raise line.fail("step", f"steps must not go back (previous event is at step {log.step[-1]})")
    slot = line.int("slot", optional=True, minimum=0, maximum=MAX_STEP)
    slot = ABSENT if slot is None else slot
    if slot >= log.config.batch_size:
        raise line.fail("slot", f"must be below batch_size {log.config.batch_size}")
    if kind is EventKind.ARRIVE:
        stops = line._checked(check_stop_sequences, "stop_sequences", optional=True) or ()
        request_id = line.str("request_id")
        if request_id in log.request_index:
            raise line.fail("request_id", "arrives twice")
        priority = line.int("priority", minimum=INT64_MIN, optional=True) or 0
        info = RequestInfo(request_id, line.prompt(), line.int("max_tokens", minimum=0), stops, priority)
        log.arrive(step, info)
        return
    request = ABSENT
    if kind is not EventKind.MODEL_CALL:
        request_id = line.data.get("request_id")
        if request_id is not None:
            line.str("request_id")
            request = log.request_index.get(request_id, ABSENT)
            if request == ABSENT:
                raise line.fail("request_id", "names a request with no earlier arrive event")
        elif kind is not EventKind.ERROR:
            raise line.fail("request_id", "is required for this kind")
    if kind is EventKind.MODEL_CALL:
        mask = line.data.get("active_mask")
        if (
            not isinstance(mask, list)
            or len(mask) != log.config.batch_size
            or any(not isinstance(m, bool) for m in mask)
        ):
            raise line.fail("active_mask", f"must be a list of {log.config.batch_size} booleans")
        rows = line.int("rows", minimum=0 if log.config.memory else 1, maximum=MAX_STEP)
        prefill = line.int("prefill_tokens", minimum=0, maximum=MAX_STEP, optional=not log.config.memory)
        log.model_call(step, rows, mask_bits(mask), prefill)
    elif kind is EventKind.ERROR:
        log.error(step, slot, request, line.str("message"))
    elif kind is EventKind.EMIT:
        log.emit(step, slot, request, line.token("token"), line.int("position", minimum=0, maximum=MAX_STEP))
    elif kind is EventKind.STOP_MATCH:
        index = line.int("sequence_index", minimum=-1)
        if index >= len(log.requests[request].stop_sequences):
            raise line.fail("sequence_index", "names no stop sequence of this request")
        log.append(step, kind, slot, request, index)
    elif kind is EventKind.EVICT:
        reason = REASON_BY_LABEL[line._checked(check_choice, "reason", tuple(sorted(REASON_BY_LABEL)))]
        log.append(step, kind, slot, request, reason)
    elif kind in MEMORY_KINDS:
        if not log.config.memory:
            raise line.fail("kind", "needs a log with kv_blocks or token_budget in its header")
        if kind in CACHE_KINDS and not log.config.prefix_caching:
            raise line.fail("kind", "needs a log with prefix_caching in its header")
        field, maximum = MEMORY_KINDS[kind]
        value = line.int(field, minimum=0, maximum=(log.config.kv_blocks or 1) - 1 if maximum is None else maximum)
        computed = line.int("computed", minimum=0, maximum=MAX_STEP) if kind is EventKind.PREFILL else 0
        log.append(step, kind, slot, request, value, computed)
    else:
        log.append(step, kind, slot, request)


MEMORY_KINDS = {  # kind -> (its field, the field's maximum; None: below kv_blocks)
    EventKind.PREFILL: ("tokens", MAX_STEP),
    EventKind.KV_ALLOC: ("block", None),
    EventKind.KV_FREE: ("blocks", MAX_STEP),
    EventKind.PREEMPT: ("recompute", MAX_STEP),
    EventKind.PREFIX_HIT: ("block", None),
    EventKind.KV_EVICT: ("block", None),
}
CACHE_KINDS = (EventKind.PREFIX_HIT, EventKind.KV_EVICT)
