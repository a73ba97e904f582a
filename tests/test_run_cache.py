"""The on-disk run cache: a kept run reads back exactly, a restarted server does not run it again, and a
bad, foreign or pickled file is ignored and removed, never unpickled."""

import io
import os
import pickle

import numpy as np
import pandas as pd
import pytest

from cblab.ui.runs import run_cache, run_file, runs
from cblab.ui.runs.runs import RUNS, Overrides, apply_overrides, scenario_digest, scenario_run
from engine.lab.scenario import SCENARIO_DIR, resolve_scenario


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder, and an empty in-memory cache (a server just started)."""
    monkeypatch.setenv("CBL_RUN_CACHE", str(tmp_path))
    monkeypatch.setattr(run_cache, "store_later", run_cache.store)  # at once, so the test can read it
    RUNS.clear()
    yield tmp_path
    RUNS.clear()


def restart() -> None:
    RUNS.clear()


def test_a_restarted_server_reads_the_run_back_without_running_the_engine(cache, monkeypatch):
    first = scenario_run("preemption", None, Overrides())
    assert len(list(cache.glob("*.npz"))) == 1
    restart()
    monkeypatch.setattr(runs, "simulate", lambda scenario: pytest.fail("the engine ran again"))
    again = scenario_run("preemption", None, Overrides())
    assert again.log == first.log and again.wire == first.wire
    assert again.frames == first.frames and again.digest == first.digest
    pd.testing.assert_frame_equal(again.steps, first.steps)
    pd.testing.assert_frame_equal(again.requests, first.requests)


def test_the_anyscale_run_s_log_reads_back_event_for_event(cache):
    first = scenario_run("anyscale-cap128", None, Overrides())
    log, wire = run_file.read(run_file.write(first.log, first.wire, "k"), "k")
    assert log == first.log and log.vocabulary == first.log.vocabulary and wire == first.wire


def test_other_settings_are_another_run_and_the_cache_can_be_turned_off(cache, monkeypatch):
    scenario_run("part1-basic-batch", None, Overrides())
    scenario_run("part1-basic-batch", None, Overrides(batch_size=1))
    assert len(list(cache.glob("*.npz"))) == 2
    monkeypatch.setenv("CBL_RUN_CACHE", "off")
    restart()
    scenario_run("part2-slot-refill", None, Overrides())
    assert len(list(cache.glob("*.npz"))) == 2


def spoiled(data: bytes) -> list[bytes]:
    middle = len(data) // 2
    flipped = data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]
    arrays = dict(np.load(io.BytesIO(data)))
    arrays["meta"] = np.array([pickle.dumps(print)], dtype=object)  # a pickle inside an npz
    out = io.BytesIO()
    np.savez(out, **arrays)
    return [data[:middle], flipped, b"not a zip at all", pickle.dumps({"a": 1}), out.getvalue()]


def test_a_torn_flipped_foreign_or_pickled_file_is_ignored_removed_and_the_run_made_again(cache):
    run = scenario_run("part1-basic-batch", None, Overrides())
    key = key_of("part1-basic-batch")
    path = cache / f"{key}.npz"
    good = path.read_bytes()
    other = run_file.write(run.log, run.wire, "another run's key")
    for bad in [*spoiled(good), other]:
        path.write_bytes(bad)
        assert run_cache.load(key) is None
        assert not path.exists()
        with pytest.raises(ValueError):
            run_file.read(bad, key)
        restart()
        assert scenario_run("part1-basic-batch", None, Overrides()).log == run.log  # made again, and kept
        assert path.read_bytes() == good


def test_the_folder_keeps_at_most_its_budget_the_least_recently_used_going_first(cache, monkeypatch):
    for age, name in enumerate("abcd"):  # a used longest ago
        (cache / f"{name}.npz").write_bytes(bytes(100))
        os.utime(cache / f"{name}.npz", (1e9 + age, 1e9 + age))
    run_cache._trim(cache, 250)
    assert sorted(p.name for p in cache.glob("*.npz")) == ["c.npz", "d.npz"]
    os.utime(cache / "c.npz")  # read again: now the most recently used
    (cache / "e.npz").write_bytes(bytes(100))
    run_cache._trim(cache, 250)
    assert sorted(p.name for p in cache.glob("*.npz")) == ["c.npz", "e.npz"]


def test_a_run_bigger_than_the_whole_budget_is_not_kept(cache, monkeypatch):
    monkeypatch.setattr(run_cache, "limit_bytes", lambda: 1000)
    scenario_run("streaming", None, Overrides())
    assert not list(cache.glob("*.npz"))


def test_an_uploaded_scenario_s_run_is_never_kept(cache):
    text = (SCENARIO_DIR / "part1-basic-batch.toml").read_text()
    scenario_run("mine.toml", text, Overrides())
    assert not list(cache.glob("*.npz"))


def key_of(name: str) -> str:
    return run_cache.key(scenario_digest(apply_overrides(resolve_scenario(name), Overrides())))
