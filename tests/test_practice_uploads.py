"""Hostile checker logs in the Practice tab: every problem is one clear st.error, and the work is bounded."""

import json
import pathlib

import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from cblab.ui.practice.pair_view import checker_pair
from cblab.ui.runs.runs import MAX_UPLOAD_BYTES
from engine import EventLog
from engine.core.log.events import RequestInfo
from engine.practice.checker import reconstruct as reconstruct_module
from engine.practice.checker.cases import MAX_BUDGET, MAX_REQUESTS, Case, CaseRequest, fixed_cases
from engine.practice.checker.driver import run_case
from engine.practice.checker.reconstruct import MAX_LOG_EVENTS, MAX_LOG_STEPS, reconstruct
from engine.practice.checker.run import check, reference
from engine.practice.checker.trace import MAX_CALLS, Trace
from engine.practice.zoo import CrossedResults
from tests.helpers import Upload

APP = str(pathlib.Path(__file__).resolve().parent.parent / "app.py")
PART2 = next(c for c in fixed_cases() if c.name == "part2")
GOOD_LOG = reconstruct(PART2, run_case(CrossedResults, PART2.to_json(), True)).to_jsonl()
PREFIX = "the checker case in this log: "
TOKENS = "token ids 0..2147483647"


def with_header(text: str = GOOD_LOG, **fields) -> str:
    lines = text.splitlines()
    header = {**json.loads(lines[0]), **fields}
    return "\n".join([json.dumps(header), *lines[1:]]) + "\n"


def with_case(**changes) -> str:
    return with_header(model="checker " + json.dumps({**PART2.to_json(), **changes}))


def with_request(**changes) -> str:
    data = PART2.to_json()
    data["requests"][0].update(changes)
    return with_header(model="checker " + json.dumps(data))


def big_case_log(requests: int, budget: int) -> str:
    """A log smuggling a case far past the bounds: the old checker spent minutes rebuilding it."""
    case = Case("x", "t", requests, None, tuple(CaseRequest((100 + i,), budget) for i in range(requests)))
    return reconstruct(case, Trace()).to_jsonl()


HOSTILE = [
    (with_header(model="checker {}"), PREFIX + "batch_size: missing"),
    (with_header(model="checker []"), PREFIX + "must be a JSON object, got []"),
    (with_header(model="checker {"), "the checker case in this log is not valid JSON"),
    (with_header(model="checker " + "[" * 50_000), "the checker case in this log is not valid JSON"),
    (
        with_header(model="checker " + " " * 70_000),
        "the checker case in this log is 70,000 characters long; the limit is 65,536",
    ),
    (with_case(requests=[{}]), PREFIX + "requests[0].prompt: missing"),
    (with_case(requests=[]), PREFIX + "requests: must be a list of 1..16 requests, got 0 requests"),
    (
        with_case(requests=[PART2.to_json()["requests"][0]] * 17),
        PREFIX + "requests: must be a list of 1..16 requests, got 17 requests",
    ),
    (with_case(batch_size=0), PREFIX + "batch_size: must be an integer 1..8, got 0"),
    (with_case(batch_size=True), PREFIX + "batch_size: must be an integer 1..8, got True"),
    (with_case(vocab_size=0), PREFIX + "vocab_size: must be an integer 1..64, got 0"),
    (with_case(stop_token=-1), PREFIX + "stop_token: must be an integer 0..2147483647, got -1"),
    (with_case(extra=1), PREFIX + "extra: not a field of a checker case"),
    (with_request(prompt=[1.5]), PREFIX + f"requests[0].prompt: must be a list of 0..16 {TOKENS}, got [1.5]"),
    (with_request(prompt="abc"), PREFIX + f"requests[0].prompt: must be a list of 0..16 {TOKENS}, got 'abc'"),
    (with_request(max_tokens=10**6), PREFIX + "requests[0].max_tokens: must be an integer 0..16, got 1000000"),
    (with_request(stops=[[]]), PREFIX + f"requests[0].stops[0]: must be a list of 1..8 {TOKENS}, got []"),
    (
        with_request(stops=[[1]] * 5),
        PREFIX + "requests[0].stops: must be a list of at most 4 stop sequences, got [[1], [1], [1], [1], [1]]",
    ),
    (
        with_request(script=[1] * 33),
        PREFIX + f"requests[0].script: must be a list of 0..32 {TOKENS}, got [{'1, ' * 18}1,...",
    ),
    (with_request(extra=None), PREFIX + "requests[0].extra: not a field of a checker case"),
    (with_case(requests=[5]), PREFIX + "requests[0]: must be a JSON object, got 5"),
    (with_header(stop_token=None), "this log's batch_size and stop_token (2, None) are not its checker case's (2, 0)"),
    (big_case_log(150, 400), PREFIX + "batch_size: must be an integer 1..8, got 150"),
]


@pytest.mark.parametrize(("text", "message"), HOSTILE, ids=[message[-50:] for _, message in HOSTILE])
def test_a_hostile_checker_log_is_refused_naming_the_field(text, message):
    with pytest.raises(ValueError) as refused:
        checker_pair(text)
    assert str(refused.value) == message


def test_a_log_longer_than_any_checker_run_is_refused():
    log = EventLog.from_jsonl(GOOD_LOG)
    log.arrive(MAX_LOG_STEPS + 99, RequestInfo("r9", (1,), 1, ()))
    with pytest.raises(ValueError) as refused:
        checker_pair(log.to_jsonl())
    assert str(refused.value) == (
        f"this log has 601 steps and {len(log)} events; a checker's run has at most 501 steps and 8,550 events"
    )
    assert (MAX_LOG_STEPS, MAX_LOG_EVENTS) == (501, 8_550)


def test_every_case_the_checker_makes_fits_the_bounds():
    from engine.practice.checker.cases import generated_cases
    from engine.practice.checker.shrink import candidates

    cases = fixed_cases() + generated_cases(0, 200, with_stops=True)
    cases += [smaller for case in cases[-20:] for smaller in candidates(case)]
    for case in cases:
        assert Case.from_json(case.to_json(), case.name) == Case(
            case.name, "a checker case", case.batch_size, case.stop_token, case.requests, vocab_size=case.vocab_size
        )


def test_the_largest_case_within_the_bounds_rebuilds_and_replays():
    case = Case(
        "largest",
        "t",
        1,
        None,
        tuple(CaseRequest((100 + i, *[7] * 15), MAX_BUDGET, ((1, 2, 3, 4, 5, 6, 7, 8),) * 4) for i in range(16)),
    )
    assert len(case.requests) == MAX_REQUESTS
    yours, expected = checker_pair(reconstruct(case, reference(case)).to_jsonl())
    assert yours == expected
    assert expected.num_steps == MAX_REQUESTS * MAX_BUDGET


def test_the_log_of_a_runaway_solution_is_within_the_bounds():
    report = check("tests/solutions/runs_forever.py")
    first = report.failed[0]
    assert len(first.got.calls) == MAX_CALLS
    yours, _ = checker_pair(reconstruct(first.case, first.got).to_jsonl())
    assert yours.num_steps == MAX_CALLS


def test_rebuilding_a_log_finds_each_rows_owner_once(monkeypatch):
    """Linear work: the old rebuild rescanned every later call for every row (minutes for a 30 KB log)."""
    seen = []
    real_owner = reconstruct_module.owner
    monkeypatch.setattr(reconstruct_module, "owner", lambda case, row: seen.append(1) or real_owner(case, row))
    case = Case("wide", "t", 8, None, tuple(CaseRequest((100 + i,), MAX_BUDGET) for i in range(16)))
    trace = reference(case)
    log = reconstruct(case, trace)
    rows = sum(len(trace.rows(n)) for n in range(len(trace.calls)))
    assert len(seen) == rows == 16 * MAX_BUDGET
    assert log.outputs() == {f"r{i}": tokens for i, tokens, _ in trace.callbacks}


# -- in the app ---------------------------------------------------------------------------------
def practice_with_upload(monkeypatch, upload: Upload) -> AppTest:
    real = streamlit.file_uploader

    def file_uploader(label, *args, key=None, **kwargs):
        return upload if key == "checker_upload" else real(label, *args, key=key, **kwargs)

    monkeypatch.setattr(streamlit, "file_uploader", file_uploader)
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["tab"] = "Practice"
    return app.run()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (with_header(model="checker {}").encode(), PREFIX + "batch_size: missing"),
        (with_header(model="checker []").encode(), PREFIX + "must be a JSON object, got []"),
        (with_case(requests=[{}]).encode(), PREFIX + "requests[0].prompt: missing"),
        (with_case(batch_size=0).encode(), PREFIX + "batch_size: must be an integer 1..8, got 0"),
        (big_case_log(150, 400).encode(), PREFIX + "batch_size: must be an integer 1..8, got 150"),
        (b"\xff\xfe\x00", "failing.jsonl: not a UTF-8 text file"),
        (b"#" * (MAX_UPLOAD_BYTES + 1), "failing.jsonl: the file is 5.2 MB; the limit is 5 MB"),
    ],
    ids=["empty case", "list case", "empty request", "batch_size 0", "huge case", "not UTF-8", "too big"],
)
def test_the_practice_tab_shows_one_error_for_a_hostile_upload(monkeypatch, data, message):
    app = practice_with_upload(monkeypatch, Upload("failing.jsonl", data))
    assert not app.exception
    assert [e.value for e in app.error] == [message]
    assert not [c for c in app.get("plotly_chart") if "yours_" in c.proto.id]


def test_the_practice_tab_refuses_a_file_that_is_not_an_event_log(monkeypatch):
    app = practice_with_upload(monkeypatch, Upload("failing.jsonl", b'{"not": "a log"}\n'))
    assert not app.exception
    assert len(app.error) == 1


def test_the_practice_tab_draws_a_real_checker_log_beside_the_reference(monkeypatch):
    app = practice_with_upload(monkeypatch, Upload("failing.jsonl", GOOD_LOG.encode()))
    assert not app.exception and not app.error
    assert len([c for c in app.get("plotly_chart") if "yours_" in c.proto.id]) == 2


def test_a_checker_log_of_a_run_that_hung_is_drawn_as_far_as_it_got_under_a_warning(monkeypatch):
    case = next(c for c in fixed_cases() if c.name == "part2")
    calls = reference(case).calls[:2]
    hung = Trace(calls, [[0, [100, 11], 1]], "the case did not finish within 5 s (an endless loop?)", True)
    log = reconstruct(case, hung)
    errors = [(e.step, e.request_id, e.message) for e in log if e.kind == "error"]
    message = (
        "the solution's run was stopped after 2 model calls (it did not finish in time), so this log ends early; "
        "r1, r2 and r3 never delivered"
    )
    assert errors == [(1, "r1", message)]
    app = practice_with_upload(monkeypatch, Upload("failing.jsonl", log.to_jsonl().encode()))
    assert not app.exception and not app.error
    assert [w.value for w in app.warning] == [f"Your solution's run did not finish: {message}."]
    assert len([c for c in app.get("plotly_chart") if "yours_" in c.proto.id]) == 2
