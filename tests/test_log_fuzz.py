"""A hand-edited or damaged event log is either refused with a line number and a reason, or it
loads and everything the app draws from it works: 0 crashes over at least 1,000 damaged logs."""

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cblab.ui.stage.batch_view import batch_view
from cblab.ui.stage.grid import grid_data, grid_figure
from engine import EventLog
from engine.analysis.metrics import summary
from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from tests.update_golden import GOLDEN

LOGS = [
    (GOLDEN / f"{name}.jsonl").read_text().splitlines()
    for name in ("part2-slot-refill", "cancellation", "stop-sequences", "padded-vs-ragged", "model-fault", "streaming")
]
HOSTILE = st.one_of(
    st.integers(-3, 9),
    st.sampled_from([2**31 - 1, 2**31, 2**63, -(2**31) - 1, 10**30, 1.5, float("nan")]),
    st.none(),
    st.booleans(),
    st.sampled_from(["r0", "A", "B", "evict", "arrive", "emit", "model_call", "max_tokens", "", "x" * 300]),
    st.sampled_from([["arrive"], [1, 2], [[7, 8]], [True, False], {"a": 1}, [], [2**63]]),
)


@st.composite
def damaged(draw) -> str:
    lines = list(draw(st.sampled_from(LOGS)))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(1, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "duplicate", "swap", "edit", "edit", "truncate", "header", "far"]))
        if action == "drop" and len(lines) > 2:
            del lines[i]
        elif action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif action == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif action in ("edit", "header", "far"):
            i = 0 if action == "header" else i
            try:
                record = json.loads(lines[i])
            except ValueError:
                continue
            if not isinstance(record, dict) or not record:
                continue
            field = "step" if action == "far" else draw(st.sampled_from(sorted(record)))
            record[field] = draw(st.integers(10_000, 2**31 - 1)) if action == "far" else draw(HOSTILE)
            lines[i] = json.dumps(record)
    return "\n".join(lines)


@given(damaged())
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_damaged_log_is_refused_with_a_line_or_replays_cleanly(text):
    try:
        log = EventLog.from_jsonl(text)
    except ValueError as exc:
        assert re.match(r"(line \d+: |the file is empty)", str(exc)), str(exc)
        return
    replay = Replay(log)
    busy = replay.busy_steps()
    for step in busy[:60]:
        narrate(replay, int(step))
        batch_view(replay, int(step))
    if len(replay):
        grid_figure(grid_data(replay, {}), len(replay) - 1)
        grid_figure(grid_data(replay, {}), int(busy[0]))
    summary(log)
    assert EventLog.from_jsonl(log.to_jsonl()) == log
    assert len(log.to_dataframe()) == len(log)
