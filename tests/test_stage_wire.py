"""The stage's data as sent: a header and compressed frames that read back exactly, small enough for a class."""

import json

from cblab.ui.runs.stage_wire import compress, inflate, pack, unpack
from engine.analysis.frames import encode, for_the_wire
from engine.analysis.replay import Replay
from engine.lab.scenario import resolve_scenario
from engine.lab.simulate import simulate
from tests.helpers import start_app


def frames_of(name: str) -> dict:
    scenario = resolve_scenario(name)
    log = simulate(scenario)
    log.vocabulary = dict(scenario.vocabulary)
    return encode(Replay(log), scenario.captions)


def test_a_header_alone_and_a_header_with_two_runs_read_back():
    frames = [frames_of("part1-basic-batch"), frames_of("part2-slot-refill")]
    header = {"id": "a|b", "start": 3, "limit": None, "goto": ["quiz_x_1", 2]}
    assert unpack(pack(header, [])) == (header, [])
    read, runs = unpack(pack(header, [compress(f) for f in frames]))
    assert read == {**header, "runs": [len(compress(f)) for f in frames]}
    assert runs == [json.loads(json.dumps(for_the_wire(f))) for f in frames]  # as the stage reads them


def test_inflate_gives_back_the_frames_with_their_sentences():
    frames = frames_of("preemption")
    assert inflate(compress(frames)) == json.loads(json.dumps(frames))


def test_the_anyscale_run_s_first_view_is_under_1_mb_as_sent():
    """4,330 steps, 64 slots, 1,293 KV blocks: 2.1 MB of JSON before compression."""
    frames = frames_of("anyscale-cap1536")
    sent = pack({"id": "x", "start": 0}, [compress(frames)])
    assert len(json.dumps(for_the_wire(frames))) > 2_000_000
    assert len(sent) < 1_000_000


def sent(app) -> bytes:
    """The stage's data as the app sent it on its last run."""
    (stage,) = [c for c in app.get("bidi_component") if c.proto.component_name == "continuous-batching-lab.stage"]
    return stage.proto.bytes


def test_a_click_that_changes_nothing_on_the_stage_sends_it_the_same_small_data():
    """Streamlit sends an element that did not change as a reference to the browser's copy: here the
    stage, while a learner types a prediction's answer, gets the very bytes of the run before."""
    app = start_app(lesson="1.1")
    first, again = sent(app), sent(app.run())
    app.number_input(key="quiz_part1_basic_batch_1").set_value(2)
    typed = sent(app.run())
    assert unpack(first)[1] and not unpack(again)[1]  # the frames once, then the header alone
    assert typed == again and len(typed) < 300


def test_after_a_check_the_stage_s_report_of_its_new_step_sends_it_the_same_data():
    from tests.test_app import report_step, stage_data

    app = start_app(lesson="1.1")
    app.number_input(key="quiz_part1_basic_batch_1").set_value(2).run()
    app.button(key="check_part1_basic_batch_1").click().run()
    checked, goto = sent(app), stage_data(app)["goto"]
    assert goto is not None  # the stage is moved to the answered step ...
    report_step(app, goto[1])  # ... and reports it, as it does at once
    assert sent(app) == checked
