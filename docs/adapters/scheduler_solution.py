"""A scheduler without a model: `schedule()` returns the step's batch, the caller runs the model.

A common shape when the model lives elsewhere (a server, a GPU worker): the scheduler
keeps the queue and the slots; each step, `schedule()` admits waiting requests into free
slots and returns the running sequences in slot order, the caller runs the model on their
tokens, and `update(batch, next_tokens)` appends one token to each, and returns the
sequences that finished (their slots are free for the next `schedule()`); `abort(seq_id)`
takes a sequence out, waiting or running. Stop
conditions: an end-of-sequence id and stop sequences, matched on generated tokens.
`scheduler_adapter.py` checks it. (No import from this project.)
"""

from __future__ import annotations

from collections import deque


class Sequence:
    def __init__(self, seq_id: int, prompt: list[int], max_new_tokens: int, stop: list[list[int]]):
        self.seq_id, self.prompt_len, self.max_new_tokens, self.stop = seq_id, len(prompt), max_new_tokens, stop
        self.token_ids = list(prompt)  # prompt, then the generated tokens

    @property
    def output_ids(self) -> list[int]:
        return self.token_ids[self.prompt_len :]


class Scheduler:
    def __init__(self, max_num_seqs: int, eos_id: int | None = None):
        self.max_num_seqs, self.eos_id = max_num_seqs, eos_id
        self.waiting: deque[Sequence] = deque()
        self.slots: list[Sequence | None] = [None] * max_num_seqs
        self.finished: list[Sequence] = []  # requests that needed no step (max_new_tokens == 0)

    def add(self, seq: Sequence) -> None:
        if seq.max_new_tokens == 0:
            self.finished.append(seq)
        else:
            self.waiting.append(seq)

    def is_finished(self) -> bool:
        return not self.waiting and not any(self.slots)

    def take_finished(self) -> list[Sequence]:
        """Requests finished outside a step (max_new_tokens == 0)."""
        finished, self.finished = self.finished, []
        return finished

    def abort(self, seq_id: int) -> Sequence | None:
        """Take a sequence out, waiting or running (its slot is free for the next `schedule()`); None if it is
        not there (finished already)."""
        for seq in self.waiting:
            if seq.seq_id == seq_id:
                self.waiting.remove(seq)
                return seq
        for slot, seq in enumerate(self.slots):
            if seq is not None and seq.seq_id == seq_id:
                self.slots[slot] = None
                return seq
        return None

    def schedule(self) -> list[Sequence]:
        for slot, seq in enumerate(self.slots):
            if seq is None and self.waiting:
                self.slots[slot] = self.waiting.popleft()
        return [seq for seq in self.slots if seq is not None]

    def _done(self, seq: Sequence) -> bool:
        out = seq.output_ids
        if out[-1] == self.eos_id or any(len(out) >= len(s) and out[-len(s) :] == s for s in seq.stop):
            return True
        return len(out) >= seq.max_new_tokens

    def update(self, batch: list[Sequence], next_tokens: list[int]) -> list[Sequence]:
        finished = []
        for seq, token in zip(batch, next_tokens):
            seq.token_ids.append(token)
            if self._done(seq):
                self.slots[self.slots.index(seq)] = None
                finished.append(seq)
        return finished
