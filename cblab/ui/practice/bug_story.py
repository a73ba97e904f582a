"""A step's narration for one side of a pair of runs, told from that engine's own log.

The step's narration (`narrate`) is corrected where it assumes a correct engine (why a row
ended, what its callback received), and followed by what the log (and the case's
deterministic model) shows that it leaves implicit: a row given another row's answer, a stop
sequence the request did not generate itself (and whose tokens completed it), one that was
missed, an idle slot, a delivery that is not the request's tokens. `story` puts them together;
"spot it first" leaves the implicit facts out, since they give the answer away. With a KV
pool, `cblab/ui/practice/memory_story.py` does the same for the memory mistakes. A row's own tokens are
those its request holds (`held_at`): in a correct engine, exactly the log's output.
"""

from __future__ import annotations

from cblab.ui.practice.memory_story import Held, held_at, memory_facts, memory_fixes
from cblab.ui.practice.paired_runs import Answer, Received
from engine.analysis.narration import narrate, plural, tokens_text
from engine.analysis.replay import Replay


def _ends_with(tokens: tuple[int, ...] | list[int], sequence: tuple[int, ...]) -> bool:
    return len(sequence) <= len(tokens) and tuple(tokens[len(tokens) - len(sequence) :]) == tuple(sequence)


def _own_tokens(held: Held, row) -> list[int]:
    """The tokens the row's request generated itself and holds, up to this step."""
    return held[row.request_id][row.prompt_len :]


def _stops(replay: Replay, request_id: str) -> tuple[tuple[int, ...], ...]:
    return replay.log.requests[replay.log.request_index[request_id]].stop_sequences


def _reason_fix(replay: Replay, row, held: Held) -> tuple[str, str] | None:
    """(what `narrate` says, what this log shows) about why a row ended, where they differ; `narrate`
    assumes a correct engine. A rebuilt log (a checker's) has no stop_match events, so the stop
    sequence is the one the request's own tokens end with; a row may end for max_tokens early, or
    have emitted more tokens than it holds (a recompute that forgot some)."""
    info = replay.log.requests[replay.log.request_index[row.request_id]]
    if row.finish_reason == "stop_sequence" and row.stop_sequence is None:
        named = next((list(s) for s in info.stop_sequences if _ends_with(_own_tokens(held, row), s)), None)
        return "completing stop sequence []", f"completing stop sequence {named}" if named else "completing a stop"
    generated, told = len(_own_tokens(held, row)), f"reaching max_tokens = {row.generated}"
    if row.finish_reason == "max_tokens" and generated != info.max_tokens:
        return told, f"ending after {plural(generated, 'generated token')}, though its max_tokens is {info.max_tokens}"
    if row.finish_reason == "max_tokens" and generated != row.generated:
        return told, f"reaching max_tokens = {generated}"
    return None


def _reason_fixes(replay: Replay, step: int, held: Held, sentences: list[str]) -> list[str]:
    """The step's sentences with each row's real reason for ending (`_reason_fix`)."""
    for slot, row in enumerate(replay[step].slots):
        fix = None if row is None or row.token is None else _reason_fix(replay, row, held)
        if fix is not None:
            head = f"Slot {slot}: request {row.request_id} "
            sentences = [s.replace(*fix) if s.startswith(head) else s for s in sentences]
    return sentences


def _delivered(replay: Replay, received: Received, sentences: list[str]) -> list[str]:
    """What a callback really received, where the engine delivered something else than its log's tokens."""
    for rid, tokens in received.items():
        logged = replay.outputs.get(rid)
        if logged is None or list(tokens) == logged:
            continue
        old, new = f"its callback receives {tokens_text(logged)}", f"its callback receives {tokens_text(list(tokens))}"
        sentences = [s.replace(old, new) if f"equest {rid} " in s else s for s in sentences]
    return sentences


def _misdelivered(replay: Replay, step: int, held: Held, received: Received) -> list[str]:
    """Requests delivered at this step whose callback received something else than the tokens they hold."""
    facts = []
    for rid in replay[step].finished:
        got = received.get(rid)
        if got is not None and list(got) != held[rid]:
            facts.append(
                f"Request {rid}'s callback received {tokens_text(list(got))}; the request holds "
                f"{tokens_text(held[rid])}."
            )
    return facts


def _facts(replay: Replay, step: int, held: Held, answer: Answer | None) -> list[str]:
    """What the log shows that the narration leaves implicit: a token that is not the model's answer
    for its row, a request stopped by a stop sequence it did not generate itself, one whose own tokens
    end with a stop that did not match, an idle slot."""
    state = replay[step]
    facts = _crossed_answers(state, held, answer) if answer else []
    for slot, row in enumerate(state.slots):
        if row is None or row.token is None:
            continue
        rid, own = row.request_id, _own_tokens(held, row)
        if row.finish_reason == "stop_sequence" and row.stop_sequence and not _ends_with(own, row.stop_sequence):
            facts.append(
                f"Request {rid} itself generated only {tokens_text(own)}: "
                f"it never completed stop sequence {list(row.stop_sequence)}." + _borrowed(replay, step, slot, row, own)
            )
        elif row.finish_reason not in ("stop_sequence", "stop_token"):
            missed = next((list(s) for s in _stops(replay, rid) if _ends_with(own, s)), None)
            if missed:
                facts.append(
                    f"Request {rid}'s own tokens now end with its stop sequence {missed}, yet nothing matched."
                )
    return facts + ([] if replay.log.config.memory else _idle_slots(state))  # (memory may keep a slot idle)


def _crossed_answers(state, held: Held, answer: Answer) -> list[str]:
    """Rows given another row's answer: the model answered each row (the tokens it held before this
    step's) one way, the log says the request emitted something else (and whose answer that was)."""
    rows = [row for row in state.slots if row is not None and row.token is not None]
    answers = {row.request_id: answer(held[row.request_id][:-1]) for row in rows}
    facts = []
    for row in rows:
        if answers[row.request_id] == row.token:
            continue
        source = next((r.request_id for r in rows if r is not row and answers[r.request_id] == row.token), None)
        whose = f", the model's answer for request {source}'s row" if source else ""
        facts.append(
            f"The model answered {answers[row.request_id]} for request {row.request_id}'s row; "
            f"the engine gave it {row.token}{whose}."
        )
    return facts


def _borrowed(replay: Replay, step: int, slot: int, row, own: list[int]) -> str:
    """Where the part of a stop sequence the request did not generate (`own`: what it did) came from:
    the last tokens of the slot's previous request (a stop-matching state kept per slot), or ""."""
    sequence = row.stop_sequence
    shared = max(m for m in range(len(sequence)) if m <= len(own) and _ends_with(own, sequence[len(sequence) - m :]))
    missing = sequence[: len(sequence) - shared]
    holders = [e.request_id for e in replay.log if e.kind == "admit" and e.slot == slot and e.step <= step]
    if len(holders) < 2 or holders[-1] != row.request_id:
        return ""
    previous = holders[-2]
    if not _ends_with(replay.outputs[previous][replay.prompt_len[previous] :], missing):
        return ""
    return (
        f" The {tokens_text(list(missing))} was generated last by request {previous}, which held slot {slot} before it."
    )


def _idle_slots(state) -> list[str]:
    """A slot left free during the step's model call while requests wait (the narration says so only
    for a static-batching config, not for an engine that holds slots back)."""
    free = [slot for slot, row in enumerate(state.slots) if row is None]
    if not (free and state.waiting and state.rows_sent):
        return []
    which = f"Slot {free[0]} is" if len(free) == 1 else f"Slots {', '.join(map(str, free))} are"
    waits = "waits" if len(state.waiting) == 1 else "wait"
    return [f"{which} free during this model call while {plural(len(state.waiting), 'request')} {waits}."]


def story(
    replay: Replay, step: int, received: Received | None = None, answer: Answer | None = None, explain: bool = True
) -> list[str]:
    """The step's narration from the log (`narrate`), with each row's real reason for ending and what
    callbacks really received; with `explain`, the facts the log implies (`_facts`) too: spot it first
    leaves them out, since they give the answer away. A step past the run's end says so."""
    if step >= len(replay):
        return [f"This run has ended: its last step is {len(replay) - 1}."]
    received, held, memory = received or {}, held_at(replay.log, step), replay.log.config.memory
    sentences = _delivered(replay, received, _reason_fixes(replay, step, held, narrate(replay, step)))
    if memory:
        sentences = memory_fixes(replay, step, held, sentences)
    if not explain:
        return sentences
    facts = _facts(replay, step, held, answer) + _misdelivered(replay, step, held, received)
    return sentences + facts + (memory_facts(replay, step) if memory else [])
