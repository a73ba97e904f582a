"""The classroom benchmark's browserless client still speaks Streamlit's protocol (not how fast).

One session lands on lesson 1.1 against a real `streamlit run app.py` (one rerun: it must get
`script_finished` and see the lesson's widgets by their user keys), then types an answer (a
second rerun, whose widget state must reach the app: its Check button turns enabled). The
client's message cache and widget-state rules are pinned by unit tests beside it; the
comparison with Chromium itself is `python -m benchmarks.chromium_compare`.
"""

import asyncio

import pytest
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.lessons import lesson_keys
from benchmarks.message_cache import MessageCache
from benchmarks.streamlit_client import Session
from benchmarks.widget_values import held_state


def test_one_session_lands_and_reruns_over_the_websocket(url):
    async def visit() -> tuple[Session, list[ForwardMsg], bool]:
        session = Session(url, "lesson=1.1", timeout=120)
        await session.land()
        landing = list(session.received)
        keys = lesson_keys(session)
        await session.set_value(keys.answer, 2)
        enabled = not session.elements[session.widget(keys.check)].button.disabled
        await session.close()
        return session, landing, enabled

    session, landing, check_enabled = asyncio.run(visit())
    assert 1000 < session.run_bytes < 100_000  # the typed answer's rerun, counted (the stage's code is not in it)
    assert landing[0].WhichOneof("type") == "new_session"
    assert landing[-1].script_finished == ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY
    headings = [m.delta.new_element.heading.body for m in landing if m.delta.new_element.HasField("heading")]
    assert "1.1 Part 1: one batch, one model call per step" in headings
    assert {"next_lesson", "quiz_part1_basic_batch_1", "check_part1_basic_batch_1"} <= set(session.widget_keys())
    assert session.session_id and session.exceptions() == []
    assert check_enabled  # the typed answer reached the app: Check is disabled until there is one
    assert "lesson=part1-basic-batch" in session.query_string  # the URL the app wrote back (page_info_changed)


def test_a_non_loopback_server_is_refused():
    with pytest.raises(ValueError, match="loopback servers only"):
        Session("http://192.0.2.1:8501")


def stage(hash_: str, cacheable: bool = True) -> ForwardMsg:
    msg = ForwardMsg(hash=hash_)
    msg.delta.new_element.markdown.body = f"big element {hash_}"
    msg.metadata.cacheable = cacheable
    return msg


def test_the_cache_keeps_large_messages_and_resolves_references_to_them():
    cache = MessageCache(max_age=2)
    cache.resolve(stage("a"))
    cache.resolve(stage("small", cacheable=False))
    assert cache.hashes() == ["a"]
    reference = ForwardMsg(ref_hash="a")
    reference.metadata.delta_path[:] = [0, 3, 0]
    resolved = cache.resolve(reference)
    assert resolved.delta.new_element.markdown.body == "big element a"
    assert list(resolved.metadata.delta_path) == [0, 3, 0]  # the reference's place, not the cached one's
    with pytest.raises(LookupError, match="does not hold"):
        cache.resolve(ForwardMsg(ref_hash="never-sent"))


def test_a_cached_message_unused_for_more_than_max_age_runs_is_dropped_as_the_frontend_drops_it():
    cache = MessageCache(max_age=2)
    cache.resolve(stage("a"))  # run 0
    cache.script_finished()
    cache.script_finished()
    assert cache.hashes() == ["a"]  # age 2: kept
    cache.resolve(ForwardMsg(ref_hash="a"))  # used in run 2: its age starts again
    cache.script_finished()
    cache.script_finished()
    assert cache.hashes() == ["a"]
    cache.script_finished()
    assert cache.hashes() == []  # age 3


def checkbox(default: bool, value: bool = False, set_value: bool = False) -> Element:
    element = Element()
    element.checkbox.id, element.checkbox.default = "$$ID-1-switch", default
    element.checkbox.value, element.checkbox.set_value = value, set_value
    return element


def test_the_page_holds_a_widget_value_until_the_script_sets_it():
    new = held_state(checkbox(default=True), None)
    assert new.bool_value is True  # a widget new to the page starts at its default
    learner = WidgetState(id=new.id, bool_value=False)
    assert held_state(checkbox(default=True), learner).bool_value is False  # the page keeps what it has
    assert held_state(checkbox(default=True, value=True, set_value=True), learner).bool_value is True  # set by the app


def test_a_widget_with_no_value_is_sent_as_its_id_alone():
    element = Element()
    element.radio.id = "$$ID-2-quiz"
    element.radio.options[:] = ["slot 0", "slot 1"]  # index=None: no default
    state = held_state(element, None)
    assert state.id == "$$ID-2-quiz" and state.WhichOneof("value") is None
    element.radio.default = 1
    assert held_state(element, None).string_value == "slot 1"


def test_the_figures_are_printed_against_their_targets():
    from benchmarks.class_phases import Outcome
    from benchmarks.class_table import Measured, against_targets

    lesson = Measured("1.1", "after")
    lesson.steps["cold landing"] = Outcome(seconds=[1.0] * 27 + [4.0] * 3)
    lesson.steps["typed answer"] = Outcome(seconds=[0.5, 0.5], received=[14_000, 16_000])
    lesson.steps["first paint"] = Outcome(seconds=[2.0, 2.1, 2.2])
    floor = Measured("floor", "st.title")
    floor.steps["first paint"] = Outcome(seconds=[1.3, 1.4, 1.5])
    assert against_targets([lesson, floor]) == [
        "first paint 1.1 (after): median 2.10 s = floor 1.40 + 0.70 s (target + 0.7 s): met",
        "first landing 1.1 (after): p90 1.30 s for 30 at once (target 3 s): met",
        "bytes per click 1.1 (after): 15.0-15.0 kB a session, 30-30 kB for the 2 sessions",
    ]
