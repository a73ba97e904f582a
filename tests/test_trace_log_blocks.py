"""`event_log.to_dataframe()` gives `prefix_hit` and `kv_evict` their `block` (issue 34's defect): a small
prefix-caching run whose hit and evicted blocks are derived by hand, equal to the JSONL's."""

import json

from engine.lab.scenario import parse_scenario
from engine.lab.simulate import simulate

REUSE = """
title = "A prefix hit, then an eviction"
[engine]
batch_size = 1
stop_token = 0
[engine.kv]
blocks = 4
block_size = 4
policy = "paged"
prefix_caching = true
[model]
kind = "simulated"
stop_chance = 0.0
[[requests]]
id = "A"
prompt = [1, 2, 3, 4, 5, 6, 7, 8, 9]
max_tokens = 2
[[requests]]
id = "B"
prompt = [1, 2, 3, 4, 5, 6, 7, 8, 30]
max_tokens = 2
[[requests]]
id = "C"
prompt = [40, 41, 42, 43, 44, 45, 46, 47, 48]
max_tokens = 2
"""


def block_rows(rows: list[dict]) -> list[tuple]:
    kinds = ("prefix_hit", "kv_evict")
    return [(r["step"], r["kind"], r["request_id"], r["block"]) for r in rows if r.get("kind") in kinds]


def test_prefix_hit_and_kv_evict_rows_carry_their_block_as_in_the_jsonl():
    """One slot, 4 blocks of 4 tokens. A (9 tokens) takes blocks 0, 1, 2 at step 0 and caches the full 0 and 1.
    B shares A's first 8 tokens: admitted at step 2, it hits 0 and 1 and takes 3. C shares nothing: at step 4
    it takes 2 and 3 (free, never cached: their last tokens were 9 and 30, not full blocks) and then 1, the
    head of the free queue after them, whose cached identity [5..8] is dropped (kv_evict 1)."""
    log = simulate(parse_scenario(REUSE, "reuse.toml"))
    expected = [(2, "prefix_hit", "B", 0), (2, "prefix_hit", "B", 1), (4, "kv_evict", "C", 1)]
    frame = log.to_dataframe()
    assert block_rows(frame.to_dict("records")) == expected
    assert block_rows([json.loads(line) for line in log.to_jsonl().splitlines()]) == expected
