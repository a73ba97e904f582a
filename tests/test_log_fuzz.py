"""A hand-edited or damaged event log either fails to load with a ValueError or replays cleanly."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import EventLog
from engine.metrics import summary
from engine.narration import narrate
from engine.replay import Replay
from tests.update_golden import GOLDEN
from ui.grid import grid_data

LOGS = [
    (GOLDEN / f"{name}.jsonl").read_text().splitlines()
    for name in ("part2-slot-refill", "cancellation", "stop-sequences", "padded-vs-ragged", "model-fault")
]


@st.composite
def damaged(draw) -> str:
    lines = list(draw(st.sampled_from(LOGS)))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(1, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "duplicate", "swap", "edit"]))
        if action == "drop" and len(lines) > 2:
            del lines[i]
        elif action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif action == "edit":
            record = json.loads(lines[i])
            field = draw(st.sampled_from(sorted(record)))
            record[field] = draw(st.one_of(st.integers(-2, 9), st.none(), st.sampled_from(["r0", "A", "evict", True])))
            lines[i] = json.dumps(record)
    return "\n".join(lines)


@given(damaged())
@settings(max_examples=300, deadline=None)
def test_a_damaged_log_is_refused_or_replays_cleanly(text):
    try:
        log = EventLog.from_jsonl(text)
    except ValueError:
        return
    replay = Replay(log)
    for step in range(len(replay)):
        narrate(replay, step)
    grid_data(replay, {})
    summary(log)
