"""A mock model whose next token depends only on a row's last token and its length, in two forms.

- `generate_next_tokens(batch_prefixes)` (and `generate_next_tokens_padded`): the seeds' per-row
  model, a Python loop over the rows, for the loop engine (`engine.BatchInferenceEngine`);
- `next_tokens_array(last_tokens, lengths)`: the same function on NumPy arrays, one entry per
  slot, for the vectorised engine (`vectorised.py`). Where `lengths` is 0 the prefix is empty
  and `last_tokens` is 0, as the per-row form reads an empty prefix.

Both compute `((last mod M) * A + (length mod M) * C + seed) >> 8` modulo `vocab_size` on
non-negative integers below 2**62, so Python ints and int64 arrays agree exactly: one model
drives both engines, and their outputs can be compared token for token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

M, A, C = 1 << 20, 1_103_515_245, 12_345  # (last mod M) * A stays below 2**51: no int64 overflow


@dataclass(frozen=True)
class LastTokenModel:
    vocab_size: int = 1000  # tokens are drawn from [0, vocab_size)
    seed: int = 0  # below 2**40, any value

    def generate_next_tokens(self, batch_prefixes: list[list[int]]) -> list[int]:
        vocab, seed = self.vocab_size, self.seed
        return [(((p[-1] if p else 0) % M * A + len(p) % M * C + seed) >> 8) % vocab for p in batch_prefixes]

    def generate_next_tokens_padded(self, batch_prefixes: list[list[int]], active_mask: list[bool]) -> list[int]:
        tokens = self.generate_next_tokens(batch_prefixes)
        return [token if active else 0 for token, active in zip(tokens, active_mask)]

    def next_tokens_array(self, last_tokens: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """SPEED: in place on one new array, `& (M - 1)` for `% M` and `x - x // v * v` for `x % v` (equal on
        non-negative integers): each temporary array and each `%` costs more than the rest of the formula, at
        any batch size (a division by a constant is a multiplication in NumPy, a remainder is not)."""
        tokens = np.bitwise_and(last_tokens, M - 1)
        tokens *= A
        spread = np.bitwise_and(lengths, M - 1)
        spread *= C
        tokens += spread
        if self.seed:
            tokens += self.seed
        tokens >>= 8
        np.floor_divide(tokens, self.vocab_size, out=spread)
        spread *= self.vocab_size
        tokens -= spread
        return tokens
