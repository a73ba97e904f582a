"""The next lesson made ahead (cblab/ui/frame/prefetch.py): once per server, after a quiet moment, into the very
caches Next lesson reads, so that the class finds it made."""

import threading
import time

import pytest

from cblab.ui.course.course import course
from cblab.ui.frame import prefetch
from tests.helpers import start_app

SWEEP_LESSON = "throughput-vs-latency"  # its run and, beside it, a batch-size sweep


@pytest.fixture
def fresh(monkeypatch):
    """Prefetch on (the suite turns it off), nothing asked for yet on this 'server', a short quiet."""
    monkeypatch.delenv("CBL_PREFETCH", raising=False)
    monkeypatch.setattr(prefetch, "_started", set())
    monkeypatch.setattr(prefetch, "QUIET_S", 0.05)
    made, done = [], threading.Event()
    monkeypatch.setattr(prefetch, "make_lesson", lambda name: (made.append(name), done.set()))
    return made, done


def test_the_next_lesson_is_asked_for_once_however_often_a_lesson_is_drawn(fresh):
    made, done = fresh
    first, second = course().lessons[:2]
    for _ in range(5):
        prefetch.after_lesson(first.name)
    assert done.wait(10)
    time.sleep(0.2)
    assert made == [second.name]


def test_nothing_is_made_after_the_last_lesson_or_when_it_is_turned_off(fresh, monkeypatch):
    made, done = fresh
    prefetch.after_lesson(course().lessons[-1].name)
    monkeypatch.setenv("CBL_PREFETCH", "off")
    prefetch.after_lesson(course().lessons[0].name)
    assert not done.wait(0.5)
    assert made == []


def test_a_lesson_made_ahead_opens_without_running_the_engine(monkeypatch):
    prefetch.make_lesson(SWEEP_LESSON)  # (the work a prefetch thread does)

    def refuse(*args, **kwargs):
        raise AssertionError("made again: the prefetch filled another cache entry than the page reads")

    monkeypatch.setattr("cblab.ui.runs.runs.simulate", refuse)
    monkeypatch.setattr("cblab.ui.charts.sweep_view.sweep", refuse)
    app = start_app(lesson=SWEEP_LESSON, predict="false")  # at its own settings, as Next lesson opens it
    assert not app.exception and not app.error
    assert [chart.proto.id for chart in app.get("plotly_chart")]  # the sweep's chart, drawn from the cache
