"""One model call: send the batch view (which the engine builds from the slot table), check the answer.

Nothing here changes a row, so a failed or wrong answer leaves the engine as it was.
"""

from __future__ import annotations

import struct
from functools import cache
from operator import countOf

from .errors import ModelError
from .request import Sequence
from .validation import INT64_MAX, INT64_MIN, int_like

Answer = tuple  # (tokens, packed): one token per row sent, as the list of ints the rows take and as the native
# 64-bit ints of the log's column. A plain tuple: one is built a step.


@cache
def packer(count: int):
    """Packs `count` ints as native 64-bit ints (struct.error if one is not an int or does not fit)."""
    return struct.Struct(f"{count}q").pack


def call_model(
    call, step: int, rows: list[Sequence], prefixes: list[list[int]], batch_size: int, padded: bool
) -> Answer:
    """Return one token per row of `rows` (slot order), as ints and packed; raise ModelError otherwise.

    `prefixes` are the rows' token lists (the ragged batch).

    Ragged: the model sees only the rows sent. Padded: it sees every slot, with an empty
    prefix and a False mask entry for the slots that send no row, and its outputs for
    those are ignored whatever they are.
    """
    if padded:
        mask = [False] * batch_size
        padded_prefixes: list[list[int]] = [[] for _ in range(batch_size)]
        for seq, prefix in zip(rows, prefixes):
            mask[seq.slot], padded_prefixes[seq.slot] = True, prefix
        prefixes = padded_prefixes
    try:
        answer = call(prefixes, mask) if padded else call(list(prefixes))  # the model may keep or change its list
        if type(answer) is not list:  # (a list is read before the model is called again: no copy)
            answer = list(answer)
    except Exception as exc:
        expected = _expected(len(prefixes), padded)
        raise ModelError(step, f"model call failed with {type(exc).__name__}: {exc}; expected {expected}") from exc
    if len(answer) != len(prefixes):
        raise ModelError(step, f"model returned {_tokens(len(answer))}, expected {_expected(len(prefixes), padded)}")
    if padded:
        answer = [token for token, active in zip(answer, mask) if active]
    try:  # SPEED: the fast path, in C: every token a plain int (its type counted), packed (which checks their
        # range); benchmarks/run.py's headline: 0.1x the floor less than array("q", answer) and a bool check; counting
        # the types, 11.5k instructions for 64 tokens against 16.2k for the set of them (callgrind)
        if countOf(map(type, answer), int) == len(answer):
            return answer, packer(len(answer))(*answer)
    except struct.error:
        pass
    return _checked(step, answer, rows)


def _checked(step: int, answer: list, rows: list[Sequence]) -> Answer:
    """The slow path: integers of other types (numpy's) become ints; the first row whose token is not a 64-bit
    int is named."""
    tokens = []
    for i, token in enumerate(answer):
        if type(token) is not int:
            token = _as_int(step, token, rows[i])
        if not INT64_MIN <= token <= INT64_MAX:
            where = f"slot {rows[i].slot} (request {rows[i].request_id})"
            raise ModelError(step, f"{where}: token {token} does not fit in 64 bits")
        tokens.append(token)
    return tokens, packer(len(tokens))(*tokens)


def _expected(n: int, padded: bool) -> str:
    return f"{_tokens(n)} (one per slot, padded to batch_size)" if padded else f"{_tokens(n)} (one per active row)"


def _tokens(n: int) -> str:
    return f"{n} token" if n == 1 else f"{n} tokens"


def _as_int(step: int, token: object, seq: Sequence) -> int:
    """Accept int-like tokens (numpy integers); reject bools, floats and the rest."""
    value = int_like(token)
    if value is None:
        raise ModelError(
            step,
            f"slot {seq.slot} (request {seq.request_id}): expected an int token, got {type(token).__name__} {token!r}",
        )
    return value
