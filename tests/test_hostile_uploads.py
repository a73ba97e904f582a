"""No traceback reaches the page: hostile uploads and links become one message each."""

import pathlib

import pytest
from streamlit.testing.v1 import AppTest

from cblab.ui.cache import SizedCache
from cblab.ui.runs.runs import Overrides, UserError, load, uploaded_scenario
from tests.helpers import Upload

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")
REQUEST = b"[[requests]]\nprompt = [1]\nmax_tokens = 1\n"
TINY_TOML = b'title = "t"\n[model]\nstop_chance = 0.0\n[[requests]]\nprompt = [1]\nmax_tokens = 1000000000000\n'
TINY_JSONL = (
    b'{"format": "continuous-batching-lab/event-log", "version": 1, "batch_size": 2, "stop_token": 0, '
    b'"batching": "continuous", "padded": false}\n{"step": 3000000, "kind": "arrive", "slot": null, '
    b'"request_id": "A", "prompt": [1], "max_tokens": 3, "stop_sequences": []}\n'
)
HEAVY_URL = {"scenario": "anyscale-cap1536", "workload_count": "5000", "batch_size": "1"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'title = "t"\n[vocabulary]\n"\xc2\xb2" = "x"\n' + REQUEST, "mine.toml: vocabulary.²: keys must be integers"),
        (b'title = "t"\n[vocabulary]\n"' + b"1" * 5000 + b'" = "x"\n' + REQUEST, "mine.toml: vocabulary.111"),
        (b'title = "t"\nx = ' + b"[" * 3000 + b"]" * 3000, "mine.toml: not valid TOML (nested too deeply)"),
        (TINY_TOML, "mine.toml: requests[0].max_tokens: 1,000,000,000,000 lets the run generate up to"),
    ],
)
def test_a_hostile_scenario_upload_is_a_message(data, message):
    upload = Upload("mine.toml", data)
    assert uploaded_scenario(upload) is None  # the sidebar falls back to plain settings
    with pytest.raises(UserError) as caught:
        load("upload", upload, Overrides())
    assert str(caught.value).startswith(message)


def test_a_tiny_log_with_a_far_arrival_replays_and_says_it_is_unfinished():
    assert len(TINY_JSONL) < 270  # the 263-byte file of the report, give or take its spacing
    run = load("upload", Upload("far.jsonl", TINY_JSONL), Overrides())
    assert len(run.replay) == 3_000_001 and run.undelivered == 1
    assert run.nbytes() < 2**20


def test_the_heavy_link_shows_the_limit_it_passes():
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params.update(HEAVY_URL)
    app.run()
    assert not app.exception
    assert [e.value for e in app.error] == [
        "scenarios/anyscale-cap1536.toml: workload.prompt_len: 5,000 requests × up to 512 tokens makes "
        "2,560,000 prompt tokens; the limit is 2,000,000 prompt tokens per run"
    ]


def test_the_run_cache_is_bounded_by_bytes_not_entries():
    cache = SizedCache(max_bytes=100)
    for key in range(5):
        assert cache.get(key, lambda key=key: f"run {key}", lambda value: 40) == f"run {key}"
    assert len(cache) == 2 and cache.total_bytes == 80  # the three least recently used were dropped
    made = []
    assert cache.get("huge", lambda: made.append(1) or "huge", lambda value: 1000) == "huge"
    assert "huge" not in cache._entries and len(cache) == 2  # bigger than the whole budget: not kept
    cache.get(4, lambda: made.append(2), lambda value: 40)
    assert made == [1]  # a hit
