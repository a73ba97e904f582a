"""The app's data layer without a browser: uploads, stop text, the frames and the batch arrays."""

import pytest

from cblab.ui.controls.settings import own_values
from cblab.ui.runs.runs import (
    MAX_UPLOAD_BYTES,
    Overrides,
    UserError,
    apply_overrides,
    load,
    parse_stop_sequences,
    parse_stop_token,
    uploaded_scenario,
)
from cblab.ui.stage.batch_view import batch_view
from engine.lab.scenario import SCENARIO_DIR, resolve_scenario
from engine.lab.simulate import simulate
from tests.helpers import Upload


def test_stop_token_text_parses_and_an_empty_field_means_none():
    assert parse_stop_token(" 7 ") == 7 and parse_stop_token("") is None and parse_stop_token("none") is None
    with pytest.raises(UserError, match=r"^The stop token \('x'\) is not an integer token id"):
        parse_stop_token("x")


def test_stop_sequence_text_parses_and_reports_the_bad_part():
    assert parse_stop_sequences("7 8; 3 3 4") == ((7, 8), (3, 3, 4))
    assert parse_stop_sequences(" 1,2 ;; ") == ((1, 2),)
    assert parse_stop_sequences("") == ()
    with pytest.raises(UserError, match=r"^Stop sequence 1 \('seven'\) is not a list of integer token ids"):
        parse_stop_sequences("seven")


@pytest.mark.parametrize(
    ("upload", "message"),
    [
        (Upload("big.toml", b"#" * (MAX_UPLOAD_BYTES + 1)), "big.toml: the file is 5.2 MB; the limit is 5 MB"),
        (Upload("bin.jsonl", b"\xff\xfe\x00"), "bin.jsonl: line 1: the line is not UTF-8 text"),  # (read as a trace)
        (
            Upload("bad.toml", b'title = "t"\n[[requests]]\nprompt = [1]\nmax_tokens = -2\n'),
            "bad.toml: requests[0].max_tokens: must be an integer ≥ 0, got -2",
        ),
        (
            Upload("bad.jsonl", b'{"format": "something else"}\n'),
            "line 1: not an event log (expected a header with format 'continuous-batching-lab/event-log')",
        ),
        (Upload("code.toml", b"import os\nos.system('echo pwned')\n"), "code.toml: not valid TOML"),
        (
            Upload(
                "empty.jsonl",
                b'{"format": "continuous-batching-lab/event-log", "version": 1, "batch_size": 2, '
                b'"stop_token": 0, "batching": "continuous", "padded": false}\n',
            ),
            "the event log has a header but no events to replay",
        ),
    ],
)
def test_bad_uploads_become_user_errors(upload, message):
    with pytest.raises(UserError) as caught:
        load("upload", upload, Overrides())
    assert str(caught.value).startswith(message)


def test_an_uploaded_log_replays_without_the_engine():
    log = simulate(resolve_scenario("cancellation"))
    run = load("upload", Upload("run.jsonl", log.to_jsonl().encode()), Overrides())
    assert run.scenario is None and run.log == log
    assert (run.frames["slots"], run.frames["steps"]) == (2, log.num_steps)


def test_an_uploaded_scenario_runs_with_overrides():
    text = (SCENARIO_DIR / "part2-slot-refill.toml").read_text()
    run = load("upload", Upload("mine.toml", text.encode()), Overrides(batch_size=1))
    assert run.log.config.batch_size == 1 and len(run.replay) == 7


def test_overrides_add_stop_sequences_to_every_request_and_clear_the_stop_token():
    scenario = apply_overrides(
        resolve_scenario("poisson-arrivals"),
        Overrides(stop_sequences=((7, 8),), clear_stop_token=True, workload_count=5),
    )
    assert scenario.engine.stop_token is None
    assert len(scenario.requests) == 5 and all(r.stop_sequences == [[7, 8]] for r in scenario.requests)


def test_frames_mark_padded_rows_and_the_batch_view_counts_padding():
    run = load("padded-vs-ragged", None, Overrides())
    assert run.frames["calls"][3] == [3, 4, 3]  # step 3: 4 rows sent, 3 of them padding
    assert run.frames["requests"][1]["tokens"][3] == 24  # B's token at step 3
    view = batch_view(run.replay, 3)
    assert (
        view.caption()
        == "Padded batch: a 4 × 4 matrix; 12 of its 16 positions (75%) are padding, masked out of attention."
    )
    assert [label for label, _, _ in view.rows] == [
        "slot 0 · mask 0",
        "slot 1 · mask 1 · B",
        "slot 2 · mask 0",
        "slot 3 · mask 0",
    ]
    ragged = batch_view(load("padded-vs-ragged", None, Overrides(padded=False)).replay, 3)
    assert ragged.caption() == "Ragged batch: 1 row of length 4; nothing is padded."


def test_an_uploaded_scenario_starts_from_its_own_settings():
    text = (
        b'title = "t"\n[engine]\nbatch_size = 8\nbatching = "static"\npadded = true\n'
        b"[[requests]]\nprompt = [1]\nmax_tokens = 2\n"
    )
    defaults = own_values(uploaded_scenario(Upload("mine.toml", text)))
    assert (defaults["batch_size"], defaults["batching"], defaults["padded"]) == (8, "static", True)
    assert uploaded_scenario(Upload("bad.toml", b"title = ")) is None
