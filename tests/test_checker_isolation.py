"""The checker against unusual solutions: its own protocol channel, sys.modules, keyword stops, --timeout."""

import os
import subprocess
import sys
import time

import pytest

from engine.practice.checker import channel
from engine.practice.checker.cases import fixed_cases
from engine.practice.checker.channel import Channel, ChannelClosed, ChannelTimeout, LineTooLong
from engine.practice.checker.driver import KEYWORD, POSITIONAL, run_case, stop_style
from engine.practice.checker.report import format_report
from engine.practice.checker.run import check
from engine.practice.checker.sandbox import UNREADABLE

SOLUTIONS = "tests/solutions"
ALL_PASS = f"{len(fixed_cases())} passed, 0 failed"


def run_check(*args, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "engine", "check", "--no-scale", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=None if env is None else {**os.environ, **env},
    )


# -- loading -----------------------------------------------------------------------------------
def test_a_dataclass_with_postponed_annotations_loads_and_passes():
    result = run_check(f"{SOLUTIONS}/future_dataclass.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == ALL_PASS


# -- the protocol channel ----------------------------------------------------------------------
def test_nothing_the_solution_prints_reaches_the_checker():
    result = run_check(f"{SOLUTIONS}/prints_everywhere.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == ALL_PASS
    assert result.stderr == ""
    for printed in ("not json at import", "a print", "sys.__stdout__", "os.write", "child process", "to stderr"):
        assert printed not in result.stdout


def test_half_a_line_on_stdout_then_a_hang_is_still_stopped_by_the_time_limit():
    result = run_check(f"{SOLUTIONS}/partial_line_then_hangs.py", "--timeout", "0.5", timeout=60)
    assert result.returncode == 1
    assert "run() finishes without an error: the case did not finish within 0.5 s (an endless loop?)" in result.stdout
    assert result.stdout.splitlines()[-1] == f"0 passed, 3 failed, {len(fixed_cases()) - 3} skipped"


@pytest.mark.parametrize(
    ("forged", "reason"),
    [
        ("garbage", "not a JSON line"),
        ('{"calls": 5}', "not a trace object"),
        ('{"calls": [], "callbacks": [[99, [], 0]], "error": null, "timeout": false}', "callbacks: not a list of"),
        ('{"calls": [[[1.5]]], "callbacks": [], "error": null, "timeout": false}', "calls: not a list of model calls"),
        ("[" * 100_000, "JSON nested too deeply"),
    ],
)
def test_an_answer_that_is_not_a_trace_fails_the_case_and_the_check_goes_on(monkeypatch, forged, reason):
    monkeypatch.setenv("FORGED_ANSWER", forged)
    report = check(f"{SOLUTIONS}/forges_answers.py")
    assert report.exit_status == 1
    assert len(report.results) == len(fixed_cases()) and len(report.failed) == len(fixed_cases())
    messages = {f.message for r in report.results for f in r.findings}
    assert len(messages) == 1
    assert messages.pop().startswith(f"{UNREADABLE} ({reason}")


@pytest.mark.parametrize(
    "forged",
    [
        '{"calls": [], "callbacks": [], "error": "", "timeout": false, "failed_at": "submit_request r99999"}',
        '{"calls": [], "callbacks": [], "error": "x", "timeout": false, "failed_at": "submit_request r-1"}',
        '{"calls": [], "callbacks": [], "error": null, "timeout": true, "changed": [[0, ["a"], 999]]}',
        '{"calls": [[[100]]], "callbacks": [[0, [100], 9]], "error": null, "timeout": false, "changed": [[0, [], 0]]}',
    ],
)
def test_a_forged_trace_with_odd_new_fields_is_judged_without_breaking_the_checker(monkeypatch, forged):
    monkeypatch.setenv("FORGED_ANSWER", forged)
    report = check(f"{SOLUTIONS}/forges_answers.py", generated=2)
    assert report.exit_status in (0, 1)
    format_report(report)  # every line can be written


@pytest.mark.parametrize(
    ("forged", "reason"),
    [
        (
            '{"calls": [], "callbacks": [], "error": null, "timeout": false, "unsupported": 5}',
            "failed_at or unsupported: wrong type",
        ),
        (
            '{"calls": [], "callbacks": [], "error": null, "timeout": false, "changed": [[0]]}',
            "changed: not a list of [request, tokens, calls before]",
        ),
        ('{"calls": [], "callbacks": [], "error": null, "timeout": false, "extra": 1}', "not a trace object"),
    ],
)
def test_a_trace_with_a_bad_new_field_is_unreadable(monkeypatch, forged, reason):
    monkeypatch.setenv("FORGED_ANSWER", forged)
    report = check(f"{SOLUTIONS}/forges_answers.py", generated=0)
    assert {f.message for r in report.results for f in r.findings} == {f"{UNREADABLE} ({reason})"}


def pipe_channel():
    """(channel, write end of its incoming pipe, read end of its outgoing pipe)."""
    incoming_read, incoming_write = os.pipe()
    outgoing_read, outgoing_write = os.pipe()
    return Channel(incoming_read, outgoing_write), incoming_write, outgoing_read


def test_the_channel_splits_lines_and_keeps_what_follows():
    line_channel, writer, _ = pipe_channel()
    os.write(writer, b'{"a": 1}\n{"b"')
    assert line_channel.receive(time.monotonic() + 5) == b'{"a": 1}'
    os.write(writer, b": 2}\n")
    assert line_channel.receive(time.monotonic() + 5) == b'{"b": 2}'
    os.close(writer)
    with pytest.raises(ChannelClosed):
        line_channel.receive(time.monotonic() + 5)


def test_half_a_line_cannot_hold_the_channel_past_its_deadline():
    line_channel, writer, _ = pipe_channel()
    os.write(writer, b'{"calls": [')
    start = time.monotonic()
    with pytest.raises(ChannelTimeout):
        line_channel.receive(start + 0.3)
    assert time.monotonic() - start < 10


def test_a_line_longer_than_the_limit_is_refused(monkeypatch):
    monkeypatch.setattr(channel, "MAX_LINE_BYTES", 1000)
    line_channel, writer, _ = pipe_channel()
    os.write(writer, b"x" * 1500)
    with pytest.raises(LineTooLong):
        line_channel.receive(time.monotonic() + 5)


def test_a_worker_that_stops_reading_cannot_block_a_send():
    line_channel, _, reader = pipe_channel()
    with pytest.raises(ChannelTimeout):
        line_channel.send(b"x" * (4 << 20), time.monotonic() + 0.3)  # more than a pipe holds
    os.close(reader)
    with pytest.raises(ChannelClosed):
        line_channel.send(b"x\n", time.monotonic() + 5)


# -- how stop sequences are passed -------------------------------------------------------------
def _submit(*params: str):
    namespace: dict = {}
    exec(f"def submit_request(self, {', '.join(params)}): pass", namespace)
    return type("Engine", (), {"submit_request": namespace["submit_request"]})


@pytest.mark.parametrize(
    ("params", "style"),
    [
        (("prompt_tokens", "max_tokens", "callback", "stop_sequences=None"), KEYWORD),
        (("prompt_tokens", "max_tokens", "callback", "*", "stop_sequences=None"), KEYWORD),
        (("prompt_tokens", "max_tokens", "callback", "**options"), KEYWORD),
        (("*args", "**kwargs"), KEYWORD),
        (("prompt_tokens", "max_tokens", "callback", "stops=None"), POSITIONAL),
        (("prompt_tokens", "max_tokens", "callback", "stops=None", "**options"), POSITIONAL),
        (("prompt_tokens", "max_tokens", "callback", "stop_sequences=None", "/"), POSITIONAL),
        (("prompt_tokens", "max_tokens", "callback", "*rest"), POSITIONAL),
        (("prompt_tokens", "max_tokens", "callback"), None),
        (("prompt_tokens", "max_tokens", "callback", "*", "request_id=None"), None),
    ],
)
def test_stop_style_follows_the_signature(params, style):
    assert stop_style(_submit(*params)) == style


class KeywordOnlyRecorder:
    """Records how submit_request received its stop sequences, and delivers each prompt at once."""

    received: list = []

    def __init__(self, model, batch_size, stop_token):
        pass

    def submit_request(self, prompt_tokens, max_tokens, callback, *, stop_sequences=None):
        KeywordOnlyRecorder.received.append(stop_sequences)
        callback(prompt_tokens)

    def run(self):
        pass


def test_run_case_passes_keyword_only_stops_by_name():
    case = next(c for c in fixed_cases() if c.name == "stop-sequence-prefix")
    KeywordOnlyRecorder.received = []
    trace = run_case(KeywordOnlyRecorder, case.to_json(), True)
    assert trace.error is None
    assert KeywordOnlyRecorder.received == [[[1, 2, 3], [1, 2]]]


@pytest.mark.parametrize("name", ["keyword_only_stops", "kwargs_stops"])
def test_a_solution_taking_stop_sequences_by_keyword_passes_every_case(name):
    result = run_check(f"{SOLUTIONS}/{name}.py")
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1] == ALL_PASS


# -- the time limit per case -------------------------------------------------------------------
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e9", "60.5", "five"])
def test_a_bad_timeout_exits_2_with_one_line_naming_it_and_the_limit(value):
    result = run_check(f"{SOLUTIONS}/correct.py", "--timeout", value)
    assert result.returncode == 2
    assert result.stderr == (
        f"error: argument --timeout: must be a number of seconds more than 0 and at most 60, got {value!r}\n"
    )
    assert result.stdout == ""


def test_the_largest_timeout_is_accepted():
    result = run_check(f"{SOLUTIONS}/correct.py", "--timeout", "60")
    assert result.returncode == 0 and result.stdout.splitlines()[-1] == ALL_PASS


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), 61, "5"])
def test_check_refuses_a_bad_timeout_in_process(value):
    with pytest.raises(ValueError, match=r"^the time limit per case must be a number of seconds 0 < t <= 60, got "):
        check(f"{SOLUTIONS}/correct.py", timeout=value)


def test_a_checker_started_with_closed_standard_streams_still_reaches_its_worker():
    code = (
        "import os, sys\nos.close(0)\nos.close(1)\n"
        "from engine.practice.checker.run import check\n"
        "sys.exit(10 + check('tests/solutions/correct.py').exit_status)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode == 10, result.stderr
