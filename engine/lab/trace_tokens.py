"""Prompt tokens for a trace's requests, built from its hash ids so that a prefix cache finds the reuse it records.

A trace gives no text, only Mooncake's hash ids: one per 512-token prompt block, equal ids for equal blocks
(FAST25-release/README.md: two requests sharing their first 12 ids share their first 12 * 512 tokens). So a
prompt is described block by block, `(block id, length)`, and a block's tokens are a pure function of its id:

- a full block keeps its hash id, and holds the same 512 tokens wherever it recurs;
- a request's last, partial block (input_length not a multiple of 512) is its own: it gets a private id
  (PRIVATE_BLOCK + request index * MAX_TRACE_HASH_IDS + block index), even if its hash id recurs. NOTE: a
  recurring partial id in the published traces always comes with the same partial length (an identical
  prompt sent again), but a paged KV cache (vLLM's, the lab's) caches full blocks only, and a partial block's
  tokens may continue differently in each request; so only full blocks are shared, and
  `trace_hit_rate` (engine/lab/trace_hits.py) counts full blocks only, the same rule;
- a request without hash ids (Azure's traces) has private blocks only: it records no reuse.

Tokens are drawn from [1, vocab_size): 0, STOP_TOKEN, is the stop token of the trace scenarios and never in a
prompt. Token j of block b is 1 + splitmix64(b * 512 + j) % (vocab_size - 1), deterministic, with no state and
no Python work per token. Distinct blocks' tokens are independent pseudo-random draws: their first tokens
agree with chance 1 / (vocab_size - 1), a 16-token cache block with chance (vocab_size - 1) ** -16.
"""

from __future__ import annotations

import numpy as np

from ..core.block_prompt import BlockPrompt, named_tokens
from .limits import MAX_TRACE_HASH_ID, MAX_TRACE_HASH_IDS
from .trace_table import BLOCK_TOKENS, TraceTable

STOP_TOKEN = 0  # the trace scenarios' stop token; no prompt token equals it
TRACE_VOCAB_SIZE = 1000  # the default vocabulary, SimulatedLLM's (engine/core/models.py)
PRIVATE_BLOCK = MAX_TRACE_HASH_ID + 1  # private block ids start above every hash id


def _tokens(keys: np.ndarray, vocab_size: int) -> np.ndarray:
    if type(vocab_size) is not int or vocab_size < 2:
        raise ValueError(f"vocab_size: must be an integer >= 2, got {vocab_size!r}")
    return named_tokens(keys, vocab_size)


def block_tokens(block_id: int, length: int = BLOCK_TOKENS, vocab_size: int = TRACE_VOCAB_SIZE) -> np.ndarray:
    """The first `length` (1..512) tokens of block `block_id`, int64, each in [1, vocab_size)."""
    if type(block_id) is not int or not 0 <= block_id < 2**48:
        raise ValueError(f"block_id: must be an integer from 0 to 2**48 - 1, got {block_id!r}")
    if not 1 <= length <= BLOCK_TOKENS:
        raise ValueError(f"length: must be from 1 to {BLOCK_TOKENS}, got {length}")
    keys = np.uint64(block_id) * np.uint64(BLOCK_TOKENS) + np.arange(length, dtype=np.uint64)
    return _tokens(keys, vocab_size)


def prompt_blocks(table: TraceTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every request's blocks as CSR (offsets (n + 1,), block ids, lengths; int64): request i's blocks are
    ids[offsets[i]:offsets[i + 1]], ceil(input_length / 512) of them, each 512 tokens long but a last partial one."""
    lengths = table.input_length
    counts = -(-lengths // BLOCK_TOKENS)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    request = np.repeat(np.arange(len(table), dtype=np.int64), counts)
    position = np.arange(offsets[-1], dtype=np.int64) - offsets[request]
    last = position == counts[request] - 1
    partial = last & (lengths[request] % BLOCK_TOKENS != 0)
    hashed = (np.diff(table.hash_offsets) > 0)[request] & ~partial
    ids = PRIVATE_BLOCK + request * MAX_TRACE_HASH_IDS + position
    ids[hashed] = table.hash_values[table.hash_offsets[request[hashed]] + position[hashed]]
    block_lengths = np.where(last, lengths[request] - (counts[request] - 1) * BLOCK_TOKENS, BLOCK_TOKENS)
    return offsets, ids, block_lengths.astype(np.int64)


def request_blocks(table: TraceTable, i: int) -> list[tuple[int, int]]:
    """Request i's prompt as (block id, length) pairs, in order."""
    one = table.input_length[i : i + 1]
    offsets = table.hash_offsets[i : i + 2]
    row = TraceTable(table.name, np.zeros(1, np.int64), one, one, offsets - offsets[0], table.hash_ids(i))
    _, ids, lengths = prompt_blocks(row)
    ids[ids >= PRIVATE_BLOCK] += i * MAX_TRACE_HASH_IDS  # its own private ids, as in the whole table
    return list(zip(ids.tolist(), lengths.tolist()))


def prompt_tokens(table: TraceTable, i: int, vocab_size: int = TRACE_VOCAB_SIZE) -> np.ndarray:
    """Request i's input_length prompt tokens (int64), its blocks' tokens one after another."""
    ids = np.array([block for block, _ in request_blocks(table, i)], dtype=np.uint64)
    position = np.arange(int(table.input_length[i]), dtype=np.uint64)
    block = position // np.uint64(BLOCK_TOKENS)
    return _tokens(ids[block] * np.uint64(BLOCK_TOKENS) + position % np.uint64(BLOCK_TOKENS), vocab_size)


def trace_prompts(table: TraceTable, vocab_size: int = TRACE_VOCAB_SIZE) -> list[BlockPrompt]:
    """Every request's prompt as a `BlockPrompt` (engine/core/block_prompt.py): its blocks' ids and lengths, no
    tokens; the engine's prefix cache names a trace block by its id, so equal hash ids are found as hits."""
    offsets, ids, lengths = prompt_blocks(table)
    bounds = offsets.tolist()
    return [
        BlockPrompt.from_arrays(ids[start:stop], lengths[start:stop], vocab_size)
        for start, stop in zip(bounds, bounds[1:])
    ]
