"""Hints for the stop-matching mistakes, told apart by what the wrong match needed.

A row that stopped too early completed a stop sequence it did not generate whole: the
missing head came from its own prompt (matching the prompt), or from the request that held
its slot before it (a stop tail left over; after a stop-sequence finish, a tail not reset).
A row that went on past a stop sequence either can match only its shortest sequences (a
tail buffer sized to the shortest), or missed an overlap that a matcher starting over on a
mismatch misses (stop [1, 1, 2] in 1, 1, 1, 2), or did not look at all.
"""

from __future__ import annotations

from ...core.request import FinishReason
from .rows import finish_reason, stop_matched


def _head_missing(sequence: tuple[int, ...], generated: list) -> list:
    """The head of `sequence` that `generated` lacks, if `generated` is a proper tail of it ([] if not)."""
    cut = len(sequence) - len(generated)
    return list(sequence[:cut]) if cut > 0 and list(sequence[cut:]) == generated else []


def early_stop_hint(hints, i: int, generated: list) -> str:
    """A row that stopped before the reference's row, on a stop it did not generate itself ("" if none fits)."""
    case, request = hints.case, hints.case.requests[i]
    prompt = list(request.prompt)
    token = case.stop_token
    if token is not None and token in prompt and token not in generated and generated:
        return (
            f"r{i} stopped after {generated} without generating the stop token {token}; its prompt holds it: the "
            "stop token is matched against generated tokens only"
        )
    for sequence in request.stops:
        head = _head_missing(sequence, generated)
        if not head:
            continue
        if prompt[len(prompt) - len(head) :] == head:
            return (
                f"r{i} stopped after {generated}, completing its stop sequence {list(sequence)} with the end of its "
                f"prompt {head}: stop sequences match generated tokens only"
            )
        p = hints.previous.get(i)
        if p is None or p not in hints.have or hints.generated(p, hints.have[p])[-len(head) :] != head:
            continue
        told = f"r{i} stopped after {generated}: its stop sequence {list(sequence)} was completed with {head}, "
        if finish_reason(case, p, hints.have[p]) is FinishReason.STOP_SEQUENCE:
            ended = list(stop_matched(case, p, hints.have[p]))
            return told + (
                f"the tail of r{p}, which held its slot before it and ended on its stop sequence {ended}: the stop "
                "tail was not reset when the slot was refilled after a stop-sequence finish. Reset it on every way "
                "a row ends"
            )
        return told + (
            f"the last tokens of r{p}, which held its slot before it: stop-matching state was left over from the "
            "slot's previous request. Keep it on the request and start it fresh on admission"
        )
    return ""


def _restart_misses(sequence: tuple[int, ...], tokens: list) -> bool:
    """Whether a matcher that starts over on a mismatch never completes `sequence` in `tokens`."""
    done = 0
    for token in tokens:
        done = done + 1 if sequence[done] == token else int(sequence[0] == token)
        if done == len(sequence):
            return False
    return True


def missed_stop_hint(hints, i: int, want: list, expected: list) -> str:
    """A row that went on past the stop sequence the reference's row ended on."""
    case, request = hints.case, hints.case.requests[i]
    sequence = list(stop_matched(case, i, want))
    ended = stop_matched(case, i, hints.have[i])
    at = f"its stop sequence {sequence} (complete at its token {len(expected)})"
    if ended is not None and len(ended) < len(sequence):
        shortest, longest = min(map(len, request.stops)), max(map(len, request.stops))
        return (
            f"r{i} went on past {at} and stopped only on {list(ended)}: of its stop sequences "
            f"{[list(s) for s in request.stops]}, only those of {len(ended)} token{'s' * (len(ended) != 1)} ever "
            f"match. Is the tail buffer sized to the shortest stop sequence ({shortest}) instead of the longest "
            f"({longest})?"
        )
    if _restart_misses(tuple(sequence), expected):
        return (
            f"r{i} went on past {at}, which overlaps a false start in {expected}: a matcher that starts over on a "
            "mismatch misses it. Fall back to the longest suffix that is still a prefix (KMP, Aho-Corasick), or "
            "compare the tail with each stop sequence"
        )
    return (
        f"r{i} went on past {at}: after every token, compare the tail of the generated tokens with each stop "
        "sequence (a sequence may complete across steps)"
    )
