"""`shared_cache`: a value is computed once when many threads miss it at the same time."""

import threading

import pytest

from engine.lab.shared_cache import shared_cache


def test_thirty_threads_missing_one_key_compute_it_once_and_share_the_value():
    started, release, calls = threading.Event(), threading.Event(), []

    @shared_cache()
    def course(name):
        calls.append(name)
        started.set()
        release.wait(10)
        return [name]

    first = threading.Thread(target=course, args=("built-in",))
    first.start()
    assert started.wait(10)  # the first thread is computing; the others now miss too
    got = []
    others = [threading.Thread(target=lambda: got.append(course("built-in"))) for _ in range(29)]
    for thread in others:
        thread.start()
    release.set()
    for thread in [first, *others]:
        thread.join(10)
    assert calls == ["built-in"]
    assert len(got) == 29 and all(value is got[0] for value in got) and got[0] == ["built-in"]


def test_a_key_being_computed_does_not_hold_up_another_key():
    other_done = threading.Event()

    @shared_cache()
    def value(key):
        if key == "slow":
            assert other_done.wait(10), "the other key waited for this one"
        return key

    slow = threading.Thread(target=value, args=("slow",))
    slow.start()
    assert value("fast") == "fast"
    other_done.set()
    slow.join(10)
    assert value("slow") == "slow"


def test_an_exception_is_not_cached():
    calls = []

    @shared_cache()
    def flaky(key):
        calls.append(key)
        if len(calls) == 1:
            raise OSError("the disk was busy")
        return key

    with pytest.raises(OSError):
        flaky("a")
    assert flaky("a") == "a" and flaky("a") == "a"
    assert calls == ["a", "a"]
