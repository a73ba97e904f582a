"""The event log: exact contents, exports, and errors on bad files that name the line."""

import json
import subprocess
import sys

import pytest

from engine import EventLog
from engine.analysis.replay import Replay
from tests.helpers import ScriptModel, make_engine


def small_log() -> EventLog:
    model = ScriptModel({(1,): [7, 8], (2,): [5, 0], (3,): [6]})
    engine = make_engine(model, batch_size=2, stop_token=0)
    engine.submit_request([1], 5, None, [[7, 8]])
    engine.submit_request([2], 5)
    engine.submit_request([3], 1)
    engine.run()
    return engine.event_log


def test_jsonl_of_a_small_run_is_exact():
    lines = [json.loads(line) for line in small_log().to_jsonl().splitlines()]
    assert lines[0] == {
        "format": "continuous-batching-lab/event-log",
        "version": 1,
        "batch_size": 2,
        "stop_token": 0,
        "batching": "continuous",
        "padded": False,
    }
    assert lines[1:] == [
        {
            "step": 0,
            "kind": "arrive",
            "slot": None,
            "request_id": "r0",
            "prompt": [1],
            "max_tokens": 5,
            "stop_sequences": [[7, 8]],
        },
        {
            "step": 0,
            "kind": "arrive",
            "slot": None,
            "request_id": "r1",
            "prompt": [2],
            "max_tokens": 5,
            "stop_sequences": [],
        },
        {
            "step": 0,
            "kind": "arrive",
            "slot": None,
            "request_id": "r2",
            "prompt": [3],
            "max_tokens": 1,
            "stop_sequences": [],
        },
        {"step": 0, "kind": "admit", "slot": 0, "request_id": "r0"},
        {"step": 0, "kind": "admit", "slot": 1, "request_id": "r1"},
        {
            "step": 0,
            "kind": "model_call",
            "slot": None,
            "request_id": None,
            "rows": 2,
            "padded_rows": 0,
            "active_mask": [True, True],
        },
        {"step": 0, "kind": "emit", "slot": 0, "request_id": "r0", "token": 7, "position": 0},
        {"step": 0, "kind": "emit", "slot": 1, "request_id": "r1", "token": 5, "position": 0},
        {
            "step": 1,
            "kind": "model_call",
            "slot": None,
            "request_id": None,
            "rows": 2,
            "padded_rows": 0,
            "active_mask": [True, True],
        },
        {"step": 1, "kind": "emit", "slot": 0, "request_id": "r0", "token": 8, "position": 1},
        {"step": 1, "kind": "emit", "slot": 1, "request_id": "r1", "token": 0, "position": 1},
        {"step": 1, "kind": "stop_match", "slot": 0, "request_id": "r0", "sequence_index": 0, "sequence": [7, 8]},
        {"step": 1, "kind": "stop_match", "slot": 1, "request_id": "r1", "sequence_index": -1, "sequence": [0]},
        {"step": 1, "kind": "evict", "slot": 0, "request_id": "r0", "reason": "stop_sequence"},
        {"step": 1, "kind": "evict", "slot": 1, "request_id": "r1", "reason": "stop_token"},
        {"step": 2, "kind": "admit", "slot": 0, "request_id": "r2"},
        {
            "step": 2,
            "kind": "model_call",
            "slot": None,
            "request_id": None,
            "rows": 1,
            "padded_rows": 0,
            "active_mask": [True, False],
        },
        {"step": 2, "kind": "emit", "slot": 0, "request_id": "r2", "token": 6, "position": 0},
        {"step": 2, "kind": "evict", "slot": 0, "request_id": "r2", "reason": "max_tokens"},
    ]


def test_log_round_trips_and_rebuilds_outputs():
    log = small_log()
    assert EventLog.from_jsonl(log.to_jsonl()) == log
    assert log.outputs() == {"r0": [1, 7, 8], "r1": [2, 5, 0], "r2": [3, 6]}


def test_dataframe_has_one_typed_row_per_event():
    frame = small_log().to_dataframe()
    assert len(frame) == 19
    assert list(frame.columns[:6]) == ["step", "kind", "slot", "request_id", "token", "position"]
    emits = frame[frame.kind == "emit"]
    assert emits.token.tolist() == [7, 5, 8, 0, 6]
    assert str(emits.token.dtype) == "Int64"
    assert frame.loc[frame.kind == "evict", "reason"].tolist() == ["stop_sequence", "stop_token", "max_tokens"]
    assert frame.loc[frame.kind == "arrive", "max_tokens"].tolist() == [5, 5, 1]
    assert frame.loc[frame.kind == "model_call", "padded_rows"].tolist() == [0, 0, 0]


def test_replay_of_a_small_run():
    replay = Replay(small_log())
    assert len(replay) == 3
    step1 = replay[1]
    assert [(s.request_id, s.generated, s.token, s.finish_reason) for s in step1.slots] == [
        ("r0", 2, 8, "stop_sequence"),
        ("r1", 2, 0, "stop_token"),
    ]
    assert step1.slots[0].stop_sequence == (7, 8)
    assert step1.waiting == ("r2",)
    assert replay[2].slots[0].admitted and replay[2].slots[1] is None
    assert replay.prefix("r0", 1) == [1, 7]


def test_events_use_about_25_bytes_each():
    log = small_log()
    columns = (log.step, log.kind, log.slot, log.request, log.value, log.detail)
    assert sum(c.itemsize for c in columns) == 25


HEADER = (
    '{"format": "continuous-batching-lab/event-log", "version": 1, "batch_size": 2, "stop_token": 0, '
    '"batching": "continuous", "padded": false}'
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty: expected an event log header line"),
        ("{nope", "line 1: not valid JSON"),
        ('{"a": 1}', "line 1: not an event log"),
        (
            HEADER.replace('"batch_size": 2', '"batch_size": 0'),
            "line 1: batch_size: must be an integer ≥ 1 and ≤ 65536, got 0",
        ),
        (HEADER + '\n{"step": 0, "kind": "teleport"}', "line 2: kind: must be one of"),
        (
            HEADER + '\n{"step": 0, "kind": "admit", "slot": 0, "request_id": "x"}',
            "line 2: request_id: names a request with no earlier arrive event",
        ),
        (
            HEADER + '\n{"step": 0, "kind": "arrive", "request_id": "x", "prompt": [1], "max_tokens": -2}',
            "line 2: max_tokens: must be an integer ≥ 0 and ≤ 9223372036854775807, got -2",
        ),
        (
            HEADER + '\n{"step": 0, "kind": "arrive", "request_id": "x", "prompt": [1], "max_tokens": 1}'
            '\n{"step": 0, "kind": "emit", "slot": 5, "request_id": "x", "token": 1, "position": 0}',
            "line 3: slot: must be below batch_size 2",
        ),
        (
            HEADER + '\n{"step": 3, "kind": "model_call", "rows": 1, "active_mask": [true, false]}'
            '\n{"step": 1, "kind": "model_call", "rows": 1, "active_mask": [true, false]}',
            "line 3: step: steps must not go back",
        ),
        (
            HEADER + '\n{"step": 0, "kind": "model_call", "rows": 1, "active_mask": [true]}',
            "line 2: active_mask: must be a list of 2 booleans",
        ),
        ("[1, 2]", "line 1: expected a JSON object"),
    ],
)
def test_bad_jsonl_raises_value_error_naming_line_and_field(text, message):
    with pytest.raises(ValueError) as caught:
        EventLog.from_jsonl(text)
    assert str(caught.value).startswith(message)


def test_the_header_carries_the_words_of_token_ids_so_a_replay_keeps_them(tmp_path):
    out = tmp_path / "stops.jsonl"
    subprocess.run(
        [sys.executable, "-m", "engine", "run", "stop-sequences", "--jsonl", str(out)], check=True, capture_output=True
    )
    header = json.loads(out.read_text().splitlines()[0])
    assert header["vocabulary"] == {"7": "the", "8": "end"}
    log = EventLog.from_jsonl(out.read_text())
    assert log.vocabulary == {7: "the", 8: "end"} and log.to_jsonl() == out.read_text()
    with pytest.raises(ValueError, match=r"^line 1: vocabulary: must map token ids to words"):
        EventLog.from_jsonl(HEADER.replace("}", ', "vocabulary": {"x": "y"}}'))
