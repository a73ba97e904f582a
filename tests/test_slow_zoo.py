"""The slow zoo: each engine is exactly the plain loop in what it delivers, and slow in a count, not a time.

Correctness: on any small workload (hypothesis), every slow engine, and the plain loop cut into
parts, give PlainLoopEngine's callbacks in PlainLoopEngine's order. Slowness: each engine's slow
line is counted (list elements scanned, stop sequences compared, tokens copied) on two sizes of
its own scale axis, eight times apart: the count a token grows at least four times. The stored
measurements name every engine with the keys the app and the lessons read.
"""

import json
from dataclasses import replace
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.practice.checker.scale.patterns import CATALOGUE
from engine.practice.checker.scale.workloads import AXIS_BY_NAME, PROMPT, STOP_TOKEN, ScaleModel
from engine.practice.plain_loop import PlainLoopEngine
from engine.practice.slow_zoo import PATTERNS, SLOW_BUGS, changed_code

ENGINES = [PlainLoopEngine] + [bug.engine for bug in SLOW_BUGS.values()]


def tiny_model(batch):
    return [(sum(prefix) * 7 + len(prefix)) % 6 for prefix in batch]


def delivered(engine_class, batch_size, stop_token, requests):
    """Every callback in order: (request index, tokens)."""
    engine, calls = engine_class(tiny_model, batch_size, stop_token), []
    for i, (prompt, max_tokens, stops) in enumerate(requests):
        engine.submit_request(prompt, max_tokens, lambda tokens, i=i: calls.append((i, tokens)), stop_sequences=stops)
    engine.run()
    return calls


tokens = st.lists(st.integers(0, 5), max_size=4)
stops = st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=3), max_size=3)
request = st.tuples(tokens, st.integers(0, 6), st.none() | stops)


@pytest.mark.parametrize("engine_class", ENGINES, ids=lambda c: c.__name__)
@settings(max_examples=120, deadline=None)
@given(st.integers(1, 4), st.sampled_from([0, 3, None]), st.lists(request, max_size=8))
def test_delivers_exactly_what_the_plain_loop_delivers_in_its_order(engine_class, batch_size, stop_token, requests):
    assert delivered(engine_class, batch_size, stop_token, requests) == delivered(
        PlainLoopEngine, batch_size, stop_token, requests
    )


# -- slow in a count -------------------------------------------------------------------------


class ScannedList(list):
    """A list that counts the elements each `for` and each `in` goes through."""

    count = 0

    def __iter__(self):
        for item in super().__iter__():
            self.count += 1
            yield item

    def __contains__(self, item):
        self.count += len(self)  # list.__contains__ compares with every element when item is absent
        return super().__contains__(item)


class ComparedStop(list):
    """A stop sequence that counts the comparisons made with it (a list == a ComparedStop calls this)."""

    def __init__(self, tokens, counter):
        super().__init__(tokens)
        self.counter = counter

    def __eq__(self, other):
        self.counter[0] += 1
        return list.__eq__(self, other)

    __hash__ = None


class CopySpottingModel(ScaleModel):
    """Counts the tokens of every prefix it has not been handed before (a new list: a copy)."""

    def __init__(self):
        self.seen, self.count = {}, 0  # id -> the list itself, kept so that no id is reused

    def generate_next_tokens(self, batch_prefixes):
        for prefix in batch_prefixes:
            if id(prefix) not in self.seen:
                self.seen[id(prefix)] = prefix
                self.count += len(prefix)
        return super().generate_next_tokens(batch_prefixes)


def counted_run(name: str, size: int) -> float:
    """The slow line's count a generated token, on `size` of the bug's axis (64 requests at most off it)."""
    bug = SLOW_BUGS[name]
    workload = AXIS_BY_NAME[bug.axis].workload(size)
    if bug.axis != "requests":
        workload = replace(workload, requests=64)
    model, counter = CopySpottingModel(), [0]
    engine = bug.engine(model, workload.batch_size, STOP_TOKEN)
    watched = {"requests": ScannedList(), "finished": ScannedList()}
    for attribute, value in watched.items():
        if hasattr(type(engine), attribute):
            setattr(engine, attribute, value)
    for _ in range(workload.requests):
        engine.submit_request(list(PROMPT), workload.max_tokens, lambda tokens: None, [list(s) for s in workload.stops])
    for row in engine.waiting:
        if hasattr(row, "stop_sequences"):
            row.stop_sequences = [ComparedStop(stop, counter) for stop in row.stop_sequences]
    engine.run()
    counts = {
        "scans-every-request": watched["requests"].count,
        "checks-finished-in-a-list": watched["finished"].count,
        "copies-every-prefix": model.count,
    }
    return counts.get(name, counter[0]) / workload.tokens


SIZES = {"requests": (128, 1024), "answer length": (16, 128), "stop sequences": (1, 8)}  # eight times apart


@pytest.mark.parametrize("name", list(SLOW_BUGS))
def test_the_slow_line_costs_more_a_token_as_its_axis_grows(name):
    small, large = SIZES[SLOW_BUGS[name].axis]
    at_small, at_large = counted_run(name, small), counted_run(name, large)
    assert at_small > 0 and at_large >= 4 * at_small, (at_small, at_large)


def test_the_plain_loop_copies_no_prefix():
    """The copy counter's contrast: the plain loop hands the model each row's own list, once new per request."""
    workload = replace(AXIS_BY_NAME["answer length"].workload(128), requests=64)
    model = CopySpottingModel()
    engine = PlainLoopEngine(model, workload.batch_size, STOP_TOKEN)
    for _ in range(workload.requests):
        engine.submit_request(list(PROMPT), workload.max_tokens, lambda tokens: None)
    engine.run()
    assert model.count == workload.requests * len(PROMPT)


# -- the catalogue and the stored measurements ------------------------------------------------


def test_every_slow_bug_names_an_axis_a_pattern_and_its_changed_code():
    for name, bug in SLOW_BUGS.items():
        assert bug.axis in AXIS_BY_NAME and bug.pattern in PATTERNS, name
        assert issubclass(bug.engine, PlainLoopEngine) and bug.engine.__doc__ and "Fix:" in bug.engine.__doc__
        assert changed_code(name) and all(slow != plain for _, slow, plain in changed_code(name)), name
    assert len({bug.pattern for bug in SLOW_BUGS.values()}) == len(SLOW_BUGS) >= 4


def test_the_patterns_are_the_scale_sections_catalogue():
    """The page offers exactly the patterns the scale section can name, under the same names."""
    assert list(PATTERNS) == [
        "scanning every request each step",
        "`in` on a list",
        "list.pop(0) queue",
        "searching the whole output for a stop sequence",
        "copying every prefix each step",
        "comparing the tail with every stop sequence",
    ]
    assert set(PATTERNS) == {pattern.name for pattern in CATALOGUE}
    for bug in SLOW_BUGS.values():
        assert bug.axis in next(p for p in CATALOGUE if p.name == bug.pattern).axes, bug.title


def test_changed_code_pairs_the_slow_batch_with_the_plain_one():
    assert changed_code("copies-every-prefix") == [
        (
            "CopiesEveryPrefix.batch",
            "def batch(self, running: list[int]) -> list[list[int]]:\n"
            "    return [list(self.slots[slot].tokens) for slot in running]\n",
            "def batch(self, running: list[int]) -> list[list[int]]:\n"
            '    """The model\'s input: each running row\'s tokens, in place, no copy."""\n'
            "    return [self.slots[slot].tokens for slot in running]\n",
        )
    ]


def stored() -> dict:
    return json.loads(resources.files("engine.lab").joinpath("measurements/slow_zoo.json").read_text())


def test_the_measurements_cover_every_engine_with_the_keys_the_app_reads():
    figures = stored()
    assert set(figures) >= {"measured_on", "load", "engines"} and set(figures["engines"]) == set(SLOW_BUGS)
    for name, engine in figures["engines"].items():
        axis = AXIS_BY_NAME[SLOW_BUGS[name].axis]
        assert (engine["axis"], engine["unit"], engine["sizes"]) == (axis.name, axis.unit, list(axis.sizes))
        slow = engine["ns_per_token"]
        measured = [ns for ns in slow if ns is not None]
        assert measured and slow[: len(measured)] == measured, name  # null only past the cap
        assert (
            len(slow) == len(engine["reference_ns_per_token"]) == len(engine["plain_ns_per_token"]) == len(axis.sizes)
        )
        assert engine["target_from"] == ("measured" if slow[-1] is not None else "extrapolated")
        assert engine["seconds_at_target"] > engine["reference_seconds_at_target"] > 0, name
