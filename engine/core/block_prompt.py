"""A prompt kept as named blocks: a trace's 100,000-token prompt is a few hundred (name, length) pairs.

A production trace gives no text, only an id for each 512-token block of a prompt (Mooncake's hash ids;
equal ids, equal blocks). A `BlockPrompt` is such a prompt: its blocks' names (`ids`) and lengths, each at
most SPAN tokens. Token j of block b is a pure function of (b, j), drawn from [1, vocab_size):

    1 + splitmix64(b * SPAN + j) % (vocab_size - 1)

so a name holds the same tokens wherever it recurs, and 0 (the trace scenarios' stop token) is never in a
prompt. Nothing is stored per token: the engine turns a prompt into its list of tokens when the request
takes a slot (`tolist`, in C), and the event log keeps the pairs.

The prefix cache names a full cache block that lies inside one named block by that name and its offset
(`block_key`), so it matches trace blocks without reading their tokens, and its table of identities holds
an int a block, not `block_size` of them. Two named blocks are the same exactly when their names, offsets
and vocabularies are. NOTE: a cache block named this way never matches one given as plain tokens, even
with equal tokens (nor one of another name whose tokens happen to be equal: a chance of (vocab_size − 1) to
the −block_size); the lab never mixes the two kinds of prompt in one run.

`SPEED`: `ids` and `lengths` are int64 arrays; `starts[i]` is block i's first position.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

SPAN = 512  # the most tokens in one named block (Mooncake's block size)
MAX_BLOCK_ID = 2**48 - 1  # a name's value, so that b * SPAN + j stays in 64 bits
MAX_VOCAB = 2**31 - 1
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over a uint64 array (wrapping arithmetic), as models._mix does for one int."""
    x = x + GOLDEN
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def named_tokens(keys: np.ndarray, vocab_size: int) -> np.ndarray:
    """The tokens at `keys` (b * SPAN + j, uint64), int64, each in [1, vocab_size)."""
    return (np.uint64(1) + splitmix64(keys) % np.uint64(vocab_size - 1)).astype(np.int64)


class BlockPrompt:
    """A prompt as named blocks; it reads as a sequence of ints (`len`, indexing, iteration, `tolist`)."""

    __slots__ = ("ids", "lengths", "starts", "vocab_size", "_length")

    def __init__(self, blocks: list[tuple[int, int]] | tuple, vocab_size: int = 1000):
        """`blocks`: (name, length) pairs in prompt order, each name an int from 0 to 2**48 − 1 and each length
        from 1 to SPAN. Raises ValueError or TypeError naming the field."""
        if type(vocab_size) is not int or not 2 <= vocab_size <= MAX_VOCAB:
            raise ValueError(f"vocab_size: must be an integer from 2 to {MAX_VOCAB}, got {vocab_size!r}")
        try:
            pairs = np.array(blocks, dtype=object).reshape(-1, 2) if len(blocks) else np.zeros((0, 2), object)
        except (TypeError, ValueError):
            raise TypeError("blocks: must be a list of (name, length) pairs of integers") from None
        if any(type(v) is not int for v in pairs.ravel().tolist()):
            raise TypeError("blocks: must be a list of (name, length) pairs of integers")
        ids, lengths = (pairs[:, k].astype(np.int64) for k in (0, 1))
        if len(ids) and (ids.min() < 0 or ids.max() > MAX_BLOCK_ID):
            raise ValueError(f"blocks: each name must be an integer from 0 to 2**48 − 1, got {int(ids.min())}")
        if len(lengths) and (lengths.min() < 1 or lengths.max() > SPAN):
            bad = int(lengths[(lengths < 1) | (lengths > SPAN)][0])
            raise ValueError(f"blocks: each length must be from 1 to {SPAN}, got {bad}")
        self._set(ids, lengths, vocab_size)

    @classmethod
    def from_arrays(cls, ids: np.ndarray, lengths: np.ndarray, vocab_size: int) -> BlockPrompt:
        """A prompt from arrays already checked (the trace reader's); no copy when they are int64."""
        prompt = cls.__new__(cls)
        prompt._set(np.asarray(ids, np.int64), np.asarray(lengths, np.int64), vocab_size)
        return prompt

    def _set(self, ids: np.ndarray, lengths: np.ndarray, vocab_size: int) -> None:
        self.ids, self.lengths, self.vocab_size = ids, lengths, vocab_size
        self.starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64).tolist()
        self._length = self.starts[-1]

    # -- as a sequence of tokens ----------------------------------------------------
    def __len__(self) -> int:
        return self._length

    def tokens(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Tokens start .. stop − 1 (clipped to the prompt), int64."""
        stop = self._length if stop is None else min(stop, self._length)
        if start >= stop:
            return np.zeros(0, np.int64)
        first, last = bisect_right(self.starts, start) - 1, bisect_right(self.starts, stop - 1) - 1
        starts = np.asarray(self.starts[first : last + 1], np.int64)
        counts = np.minimum(starts + self.lengths[first : last + 1], stop) - np.maximum(starts, start)
        block = np.repeat(np.arange(first, last + 1), counts)
        position = np.arange(start, stop, dtype=np.int64)
        offsets = position - np.asarray(self.starts, np.int64)[block]
        keys = self.ids[block].astype(np.uint64) * np.uint64(SPAN) + offsets.astype(np.uint64)
        return named_tokens(keys, self.vocab_size)

    def tolist(self) -> list[int]:
        return self.tokens().tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, stride = index.indices(self._length)
            return self.tokens(start, stop).tolist()[::stride] if stride > 0 else self.tolist()[index]
        n = self._length
        if not -n <= index < n:
            raise IndexError("BlockPrompt index out of range")
        return int(self.tokens(index % n, index % n + 1)[0])

    @property
    def prompt(self) -> BlockPrompt:
        """Itself: what `block_key` reads the names from (a running row's `PromptTokens` has one too)."""
        return self

    # -- names -------------------------------------------------------------------------
    def name(self, start: int, size: int) -> int | None:
        """A name for tokens start .. start + size − 1 when they lie inside one named block: a negative int, which
        no tuple of tokens equals; else None."""
        if start + size > self._length:
            return None
        i = bisect_right(self.starts, start) - 1
        offset = start - self.starts[i]
        if offset + size > self.starts[i + 1] - self.starts[i]:
            return None
        return -1 - (((int(self.ids[i]) * SPAN + offset) << 31) | self.vocab_size)

    def pairs(self) -> list[list[int]]:
        """[[name, length], ...]: how the event log's JSONL writes it."""
        return np.stack([self.ids, self.lengths], axis=1).tolist()

    def __eq__(self, other) -> bool:
        if not isinstance(other, BlockPrompt):
            return NotImplemented
        return (
            self.vocab_size == other.vocab_size
            and np.array_equal(self.ids, other.ids)
            and np.array_equal(self.lengths, other.lengths)
        )

    __hash__ = None

    def __repr__(self) -> str:
        return f"BlockPrompt({len(self.ids):,} blocks, {self._length:,} tokens, vocab_size={self.vocab_size})"


class PromptTokens(list):
    """A running row's tokens (prompt + generated) as a plain list of ints, which also keeps its `BlockPrompt`
    (`prompt`), so the prefix cache still names its prompt's blocks after the list is made."""

    __slots__ = ("prompt",)


def as_list(tokens) -> list[int]:
    """A row's tokens as the list the model and the callback get (a list stays itself): a prompt tuple becomes a
    list, a `BlockPrompt` a `PromptTokens`."""
    if isinstance(tokens, list):
        return tokens
    if type(tokens) is BlockPrompt:
        row = PromptTokens(tokens.tolist())
        row.prompt = tokens
        return row
    return list(tokens)


def block_key(tokens, start: int, size: int):
    """What names the cache block of `tokens` from `start` (size tokens): its name when it lies inside one named
    block of a `BlockPrompt`, else the tuple of its tokens."""
    prompt = None if type(tokens) is list else getattr(tokens, "prompt", None)
    name = None if prompt is None else prompt.name(start, size)
    return tuple(tokens[start : start + size]) if name is None else name
