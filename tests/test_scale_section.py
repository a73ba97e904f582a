"""The checker's scale section: its verdict arithmetic, the pattern catalogue, the sampler's lines,
its words, and real runs of a correct and a slow engine through the worker."""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.practice.checker.sandbox import Solution
from engine.practice.checker.scale.line_profile import EnoughProfile, LineProfile
from engine.practice.checker.scale.patterns import CATALOGUE, hint_for
from engine.practice.checker.scale.section import check_budget, repeats, run_axis
from engine.practice.checker.scale.verdict import AxisResult, Point
from engine.practice.checker.scale.wording import duration, hottest_functions, verdict_line
from engine.practice.checker.scale.workloads import AXES, AXIS_BY_NAME, ScaleModel

SOLUTIONS = "tests/solutions"


def axis(points, target=100_000, tokens_each=16):
    result = AxisResult("requests", "requests", target, target * tokens_each)
    result.points = [Point(size, size * tokens_each, list(s), list(r)) for size, s, r in points]
    return result


def test_the_workloads_grow_one_thing_each():
    assert [(a.name, a.sizes) for a in AXES] == [
        ("requests", (1000, 4000, 16000, 64000, 100000)),
        ("answer length", (16, 64, 256, 1024, 4096)),
        ("stop sequences", (1, 4, 16, 64)),
        ("batch size", (8, 64, 512, 4096)),
    ]
    length = AXIS_BY_NAME["answer length"]
    assert [(w.requests, w.max_tokens, w.tokens) for w in map(length.workload, length.sizes)] == [
        (2048, 16, 32768),
        (512, 64, 32768),
        (128, 256, 32768),
        (64, 1024, 65536),
        (64, 4096, 262144),
    ]
    stops = AXIS_BY_NAME["stop sequences"].workload(4).stops
    assert stops == (
        (100, 101, 102, 103, 104, 105, 106, 107),
        (108, 109, 110, 111, 112, 113, 114, 115),
        (116, 117, 118, 119, 120, 121, 122, 123),
        (124, 125, 126, 127, 128, 129, 130, 131),
    )
    assert ScaleModel().generate_next_tokens([[], [5], [1, 2, 3, 4, 5, 6, 7]]) == [1, 2, 1]


def test_a_growth_like_the_references_is_ok_and_a_tenfold_one_slow():
    flat = axis([(1000, [0.016, 0.018, 0.017], [0.032, 0.030, 0.034]), (16000, [0.27, 0.26], [0.50, 0.52])])
    assert flat.growth == pytest.approx((0.27 / 0.5 + 0.26 / 0.52) / 2 / 0.5)
    assert flat.verdict == "OK"
    slow = axis([(1000, [0.02], [0.02]), (4000, [0.32], [0.08]), (16000, [5.12], [0.32])])
    assert slow.growth == pytest.approx(16.0)
    assert slow.own_growth == pytest.approx(16.0)
    # cost per token doubles each time the size does (slope 1 from 4,000 to 16,000): 20 µs a token
    # at 16,000, so 125 µs at 100,000, times 1.6 million tokens
    assert slow.projected("solution") == pytest.approx(200.0)
    assert slow.projected("reference") == pytest.approx(2.0)
    assert slow.verdict == "SLOW"


def test_a_flat_engine_beside_a_reference_that_gets_cheaper_is_not_slow():
    result = axis([(16, [0.02], [0.04]), (4096, [5.12], [2.56])], target=4096, tokens_each=1)
    assert result.growth == pytest.approx(4.0)
    assert result.own_growth == pytest.approx(1.0)
    assert result.verdict == "OK"


def test_slow_needs_the_target_to_cost_twice_the_references():
    # grew 3x against the reference, but the reference was 10x slower to start with
    result = axis([(1000, [0.016], [0.16]), (100_000, [4.8], [16.0])])
    assert result.growth == pytest.approx(3.0) and result.own_growth == pytest.approx(3.0)
    assert result.projected("solution") == pytest.approx(4.8)
    assert result.verdict == "OK"


def test_an_error_fails_and_one_size_is_not_a_verdict():
    failed = axis([(1000, [0.01], [0.01])])
    assert failed.verdict == "--"
    failed.error = "at 4,000 requests: wrong result: 3999 callbacks for 4000 requests"
    assert failed.verdict == "FAIL"


def test_repeats_and_budget_limits():
    assert [repeats(s) for s in (0.001, 0.01, 0.02, 1.0)] == [7, 5, 3, 3]
    assert check_budget(30) == 30.0
    for bad in (0, -1, 601, float("nan"), "30", True):
        with pytest.raises(ValueError, match="the scale budget must be a number of seconds 0 < t <= 600"):
            check_budget(bad)


@pytest.mark.parametrize(
    "axis_name, text, pattern",
    [
        ("requests", "request = self.queue.pop(0)", "list.pop(0) queue"),
        ("requests", "for request in self.requests:", "scanning every request each step"),
        ("requests", "if rid in self.finished_ids:", "`in` on a list"),
        (
            "answer length",
            "for i in range(len(out) - len(stop) + 1):",
            "searching the whole output for a stop sequence",
        ),
        ("answer length", "batch = [list(r.tokens) for r in running]", "copying every prefix each step"),
        ("answer length", 'generated = state["tokens"][state["prompt_len"] :]', "copying every prefix each step"),
        (
            "stop sequences",
            "if any(tail[-len(s):] == s for s in stops):",
            "comparing the tail with every stop sequence",
        ),
    ],
)
def test_each_pattern_is_found_on_its_axis(axis_name, text, pattern):
    hot = [{"file": "/x/solution.py", "line": 7, "function": "step", "first_line": 3, "share": 0.6, "text": text}]
    assert hint_for(axis_name, hot)[:1] == (pattern,)


def test_a_for_clause_is_not_a_membership_test_and_cool_lines_give_no_hint():
    line = {"file": "s.py", "line": 1, "function": "f", "first_line": 1, "share": 0.6}
    assert hint_for("requests", [{**line, "text": "total = sum(x for x in rows)"}]) is None
    assert hint_for("requests", [{**line, "share": 0.04, "text": "if rid in self.done:"}]) is None
    assert hint_for("answer length", [{**line, "text": "if tail[-len(stop) :] == stop:"}]) is None
    assert {p.name for p in CATALOGUE} >= {"list.pop(0) queue", "`in` on a list", "copying every prefix each step"}


def test_the_line_profile_charges_a_c_call_to_its_own_line_and_ends_the_run():
    import sys

    profile = LineProfile(lambda filename: filename == __file__)
    big = list(range(200_000))
    copies = 0
    with pytest.raises(EnoughProfile):
        profile.start(sys._getframe())
        while True:
            copy = big[:]  # the slow line: a C copy of 200,000 items
            copies += 1
    sys.settrace(None)
    hottest = profile.hottest(2)
    assert hottest[0]["text"] == "copy = big[:]  # the slow line: a C copy of 200,000 items"
    assert hottest[0]["share"] > 0.8 and copies > 1 and len(copy) == 200_000


def test_durations_and_hottest_functions_in_words():
    assert [duration(s) for s in (3.2e-6, 0.041, 2.14, 190.4, 7500)] == [
        "3.2 µs",
        "41 ms",
        "2.14 s",
        "3 min 10 s",
        "2 h 5 min",
    ]
    hot = [
        {"file": "/a/sol.py", "line": 9, "function": "step", "first_line": 5, "share": 0.5},
        {"file": "/a/sol.py", "line": 11, "function": "step", "first_line": 5, "share": 0.2},
        {"file": "/a/sol.py", "line": 30, "function": "run", "first_line": 28, "share": 0.1},
    ]
    assert hottest_functions(hot) == ["sol.py:5 step (70%)", "sol.py:28 run (10%)"]


def test_a_slow_line_names_axis_growth_target_hottest_and_hint():
    result = axis([(1000, [0.02], [0.02]), (4000, [0.32], [0.08]), (16000, [5.12], [0.32])])
    result.hot = [
        {
            "file": "/a/sol.py",
            "line": 20,
            "function": "step",
            "first_line": 19,
            "share": 0.8,
            "text": "for request in self.requests:",
        }
    ]
    assert verdict_line(result) == (
        "  SLOW  requests: cost per token grew 16.0x more than the reference's (1,000 to 16,000 requests); "
        "at 100,000 requests 3 min 20 s, the reference 2 s (projected); hottest: sol.py:19 step (80%); "
        "hint: sol.py:20 `for request in self.requests:`: scanning every request each step: each step walks "
        "every request ever submitted to find the waiting ones: keep a queue of the waiting ones "
        "(collections.deque) and the running ones by slot"
    )


def test_a_slow_engine_is_caught_on_the_requests_axis_with_its_line():
    solution = Solution(f"{SOLUTIONS}/scans_every_request.py", None)
    try:
        result = run_axis(solution, AXIS_BY_NAME["requests"], 10.0)
    finally:
        solution.close()
    assert [p.size for p in result.points][:2] == [1000, 4000]
    assert result.verdict == "SLOW", verdict_line(result)
    name, _, line = hint_for("requests", result.hot)
    assert name == "scanning every request each step"
    assert line["text"] in ("for request in self.requests:", 'while any(r.state != "done" for r in self.requests):')


def test_the_plain_loop_engine_is_ok_on_every_axis_through_the_command():
    result = subprocess.run(
        [sys.executable, "-m", "engine", "check", "engine/practice/plain_loop.py", "--scale-budget", "20"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    verdicts = [
        line.split()[0]
        for line in result.stdout.splitlines()
        if line.startswith("  ") and line.split() and line.split()[0] in ("OK", "SLOW", "FAIL", "--")
    ]
    assert verdicts == ["OK", "OK", "OK", "OK"], result.stdout
    assert result.returncode == 0


def test_no_scale_and_a_bad_budget():
    ran = subprocess.run(
        [sys.executable, "-m", "engine", "check", "engine/practice/plain_loop.py", "--no-scale"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Scale" not in ran.stdout and ran.returncode == 0
    bad = subprocess.run(
        [sys.executable, "-m", "engine", "check", "engine/practice/plain_loop.py", "--scale-budget", "1000"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and "--scale-budget" in bad.stderr and "at most 600" in bad.stderr
