"""Compact prompts (engine/core/block_prompt.py): a `BlockPrompt` reads as its tokens, the engine gives the same
outputs and the same log as with the same tokens as a list (but for the prefix cache's names), the JSONL keeps
its blocks, and the prefix cache finds a trace's reuse by its block names."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import BatchInferenceEngine, EventLog, SimulatedLLM
from engine.analysis.outputs import Outputs
from engine.core.block_prompt import SPAN, BlockPrompt, PromptTokens, block_key
from engine.lab.trace_file import read_trace
from engine.lab.trace_tokens import prompt_tokens, trace_prompts
from tests.test_trace_file import MOONCAKE_SAMPLE

blocks = st.lists(st.tuples(st.integers(0, 50), st.integers(1, SPAN)), min_size=1, max_size=4)


def test_a_block_prompt_reads_as_its_tokens():
    prompt = BlockPrompt([(5, 512), (7, 3)])
    tokens = prompt.tolist()
    assert len(prompt) == len(tokens) == 515
    assert tokens[:3] == [737, 546, 383] or tokens[:3] == prompt[0:3]
    assert (prompt[0], prompt[-1], prompt[510:514]) == (tokens[0], tokens[-1], tokens[510:514])
    assert list(prompt) == tokens and 0 not in tokens  # tokens are drawn from [1, vocab_size)
    assert BlockPrompt([(5, 512), (7, 3)]) == prompt != BlockPrompt([(5, 512), (7, 3)], vocab_size=50)


def test_a_trace_requests_block_prompt_holds_the_tokens_its_hash_ids_give():
    table = read_trace(MOONCAKE_SAMPLE.encode())
    for i, prompt in enumerate(trace_prompts(table)):
        assert prompt.tolist() == prompt_tokens(table, i).tolist()


def test_a_cache_block_inside_one_named_block_is_named_by_it_and_others_by_their_tokens():
    prompt = BlockPrompt([(5, 512), (7, 100)])
    row = PromptTokens([*prompt.tolist(), 42])
    row.prompt = prompt
    assert block_key(prompt, 16, 16) == block_key(row, 16, 16) == block_key(BlockPrompt([(5, 40)]), 16, 16) < 0
    assert block_key(prompt, 16, 16) != block_key(BlockPrompt([(6, 512)]), 16, 16)
    assert block_key(prompt, 16, 16) != block_key(BlockPrompt([(5, 512)], vocab_size=999), 16, 16)
    assert block_key(prompt, 504, 16) == tuple(prompt.tolist()[504:520])  # spans two named blocks
    assert block_key(row, 608, 16) == tuple(row[608:624])  # runs past the prompt
    assert block_key([1, 2, 3], 0, 2) == (1, 2)


@pytest.mark.parametrize(
    ("blocks", "vocab_size", "message"),
    [
        ([(5, 0)], 1000, "blocks: each length must be from 1 to 512, got 0"),
        ([(5, 513)], 1000, "blocks: each length must be from 1 to 512, got 513"),
        ([(-1, 5)], 1000, "blocks: each name must be an integer from 0 to 2**48 − 1, got -1"),
        ([(5, 5)], 1, "vocab_size: must be an integer from 2 to 2147483647, got 1"),
        ([(5, 5.0)], 1000, "blocks: must be a list of (name, length) pairs of integers"),
        ([(5, 5, 5)], 1000, "blocks: must be a list of (name, length) pairs of integers"),
    ],
)
def test_a_bad_block_prompt_is_refused_naming_the_field(blocks, vocab_size, message):
    with pytest.raises(
        (TypeError, ValueError), match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")
    ):
        BlockPrompt(blocks, vocab_size)


def run(prompts, batch_size=3, **options):
    outputs = {}
    engine = BatchInferenceEngine(SimulatedLLM(seed=3, stop_chance=0.0), batch_size, 0, **options)
    for i, prompt in enumerate(prompts):
        engine.submit_request(prompt, 4 + i % 5, lambda tokens, i=i: outputs.__setitem__(i, list(tokens)))
    engine.run()
    return outputs, engine.event_log


@settings(max_examples=40, deadline=None)
@given(st.lists(blocks, min_size=1, max_size=6), st.sampled_from([None, 40, 400]))
def test_outputs_are_those_of_the_same_tokens_given_as_lists(prompts, kv_blocks):
    compact = [BlockPrompt(b, vocab_size=50) for b in prompts]
    options = {} if kv_blocks is None else {"kv_blocks": kv_blocks, "block_size": 16, "prefix_caching": True}
    if kv_blocks is not None and any(len(p) + 8 > kv_blocks * 16 for p in compact):
        return
    named, log = run(compact, **options)
    plain, _ = run([p.tolist() for p in compact], **options)
    assert named == plain
    assert Outputs(log) == log.outputs() == {f"r{i}": out for i, out in named.items()}
    again = EventLog.from_jsonl(log.to_jsonl())
    assert [info.prompt for info in again.requests] == compact
    assert again.outputs() == log.outputs()


def test_equal_trace_blocks_are_prefix_hits_without_reading_their_tokens():
    """Two requests sharing two 512-token blocks, one after the other: the second's table starts with the
    first's 64 blocks of 16."""
    first, second = BlockPrompt([(5, 512), (6, 512), (7, 30)]), BlockPrompt([(5, 512), (6, 512), (8, 30)])
    _, log = run([first, second], batch_size=1, kv_blocks=400, block_size=16, prefix_caching=True)
    hits = log.to_dataframe().query("kind == 'prefix_hit' and request_id == 'r1'")
    assert len(hits) == 64


def test_the_jsonl_writes_a_block_prompt_as_its_blocks_and_refuses_bad_ones():
    _, log = run([BlockPrompt([(5, 512), (9, 7)])])
    arrive = log.to_jsonl().splitlines()[1]
    assert '"prompt_blocks": {"vocab_size": 1000, "blocks": [[5, 512], [9, 7]]}' in arrive
    bad = log.to_jsonl().replace("[[5, 512], [9, 7]]", "[[5, 600]]")
    with pytest.raises(ValueError, match="line 2: prompt_blocks: blocks: each length must be from 1 to 512, got 600"):
        EventLog.from_jsonl(bad)
    worse = log.to_jsonl().replace('{"vocab_size": 1000, "blocks": [[5, 512], [9, 7]]}', '"x"')
    with pytest.raises(ValueError, match="line 2: prompt_blocks: must be"):
        EventLog.from_jsonl(worse)


def test_a_waiting_request_keeps_its_block_prompt_and_a_running_one_its_list():
    engine = BatchInferenceEngine(SimulatedLLM(stop_chance=0.0), 1, 0)
    prompt = BlockPrompt([(5, 20)])
    engine.submit_request(prompt, 3)
    engine.submit_request(prompt, 3)
    engine.step()
    first, second = (engine._live[rid] for rid in ("r0", "r1"))
    assert type(first.tokens) is PromptTokens and first.tokens.prompt is prompt
    assert second.tokens is prompt and np.array_equal(engine.event_log.requests[1].prompt.ids, [5])
