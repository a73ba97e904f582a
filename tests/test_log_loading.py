"""Loading an event log is strict: every refusal names the line and the reason, and a log that
loads replays in memory that grows with its events, whatever its step numbers."""

import tracemalloc

import pytest

from cblab.ui.stage.grid import grid_data, grid_figure
from engine import EventLog
from engine.analysis.metrics import request_metrics, step_metrics
from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from tests.test_event_log import HEADER  # batch_size 2, stop token 0, continuous, ragged

ARRIVE = '{"step": 0, "kind": "arrive", "slot": null, "request_id": "A", "prompt": [1], "max_tokens": 3}'
ADMIT = '{"step": 0, "kind": "admit", "slot": 0, "request_id": "A"}'
CALL = '{"step": 0, "kind": "model_call", "slot": null, "request_id": null, "rows": 1, "active_mask": [true, false]}'
EMIT = '{"step": 0, "kind": "emit", "slot": 0, "request_id": "A", "token": 5, "position": 0}'


def load(*lines: str) -> EventLog:
    return EventLog.from_jsonl("\n".join([HEADER, *lines]))


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"step": 0, "kind": ["arrive"]}'], "line 2: kind: must be one of 'admit', 'arrive', "),
        (
            [ARRIVE, ADMIT, CALL, EMIT.replace('"position": 0', '"position": 2147483646')],
            "line 5: position: expected position 0 for A, got 2147483646",
        ),
        (["[" * 100_000], "line 2: not valid JSON (nested too deeply)"),
        (['{"step": ' + "7" * 5000 + "}"], "line 2: not valid JSON (Exceeds the limit (4300 digits)"),
        ([ARRIVE, ADMIT, EMIT], "line 4: kind: an emit needs a model call earlier in its step, got 'emit'"),
        ([ARRIVE, ADMIT, CALL, CALL], "line 5: kind: step 0 already has its model call, got 'model_call'"),
        (
            [ARRIVE, ADMIT, CALL.replace("[true, false]", "[false, true]"), EMIT],
            "line 5: slot: this step's model call had no active row in this slot, got 0",
        ),
        (
            [ARRIVE, ADMIT, CALL.replace('"rows": 1', '"rows": 1').replace("[true, false]", "[true, true]")],
            "line 4: rows: must count every active row of the mask, got 1",
        ),
        ([ARRIVE.replace('"A"', '["A"]')], "line 2: request_id: must be a string, got list ['A']"),
        (
            [ARRIVE.replace("[1]", "[18446744073709551616]")],
            "line 2: prompt[0]: must be a 64-bit integer token id, got 18446744073709551616",
        ),
        ([ARRIVE, ADMIT.replace('"A"', "7")], "line 3: request_id: must be a string, got int 7"),
    ],
)
def test_a_hostile_log_is_refused_naming_the_line_and_the_reason(lines, message):
    with pytest.raises(ValueError) as caught:
        load(*lines)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("step", [3_000_000, 2**31 - 2])
def test_a_tiny_log_with_a_far_step_replays_in_memory_that_grows_with_events(step):
    text = "\n".join([HEADER, ARRIVE.replace('"step": 0', f'"step": {step}')])
    assert len(text) < 270  # the 263-byte file of the report
    tracemalloc.start()
    log = EventLog.from_jsonl(text)
    replay = Replay(log)
    assert len(replay) == step + 1 and replay[step].waiting == ("A",)
    assert replay[0].waiting == () and narrate(replay, step) == [
        "Request A arrives and joins the queue.",
        "1 request still waits.",
    ]
    grid_figure(grid_data(replay, {}), step)
    steps = step_metrics(log)
    request_metrics(log, steps=steps)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(steps) == 1 and steps.idle_before[0] == step
    assert peak < 20 * 2**20  # 17 s and 1.8 GB at step 3,000,000 before


def test_replay_memory_does_not_hold_the_queue_at_every_step():
    lines = [HEADER]
    lines += [ARRIVE.replace('"A"', f'"r{i}"') for i in range(2000)]
    lines += [ADMIT.replace('"A"', '"r0"'), CALL]
    for step in range(1, 400):  # r0 runs for 400 steps while 1,999 requests wait
        lines.append(CALL.replace('"step": 0', f'"step": {step}'))
        lines.append(EMIT.replace('"A"', '"r0"').replace('"step": 0', f'"step": {step}').replace("0}", f"{step - 1}}}"))
    log = EventLog.from_jsonl("\n".join(lines))
    tracemalloc.start()
    replay = Replay(log)
    assert len(replay[399].waiting) == 1999
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 5 * 2**20  # storing the queue at every step took about 244 MiB for 2,000 requests
