"""Compare's runs (cblab/ui/runs/comparisons.py): a progress report naming each configuration as it starts,
the figures made once for every session, kept on disk for a built-in lesson and read back without
running anything, a bad file ignored and removed; and `python -m cblab.ui.frame.precompute`, which
`cb-lab serve` starts to make every lesson's figures ahead (issue 33, "Phone and waiting")."""

import json
import os
import subprocess

import pytest

from cblab.cli.serve import PRECOMPUTE
from cblab.ui.controls.controls import own_overrides
from cblab.ui.frame import precompute
from cblab.ui.runs import comparisons, run_cache
from cblab.ui.runs.comparisons import COMPARISONS, compared_scenario, comparison, figures_key
from cblab.ui.runs.runs import Overrides
from engine.lab.compare import compare, runs
from engine.lab.scenario import SCENARIO_DIR, resolve_scenario
from tests.browser_support import ROOT
from tests.helpers import start_app

LESSON = "shared-system-prompt"  # 7.6: eleven configurations, each a short run


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty runs cache folder and an empty in-memory cache (a server just started)."""
    monkeypatch.setenv("CBL_RUN_CACHE", str(tmp_path))
    COMPARISONS.clear()
    yield tmp_path
    COMPARISONS.clear()


def own() -> Overrides:
    return own_overrides(resolve_scenario(LESSON))


def test_each_configuration_is_reported_as_it_starts_with_its_place_among_them(cache):
    said = []
    figures = comparison(LESSON, None, own(), lambda name, i, of: said.append((name, i, of)))
    names = list(runs(compared_scenario(LESSON, None, own())))
    assert len(names) == 11 and said == [(name, i, 11) for i, name in enumerate(names, start=1)]
    assert figures == compare(compared_scenario(LESSON, None, own()))
    assert comparison(LESSON, None, own(), lambda *a: pytest.fail("made again")) is figures  # every session's


def test_a_restarted_server_reads_the_figures_back_without_running_anything(cache, monkeypatch):
    figures = comparison(LESSON, None, own())
    kept = cache / f"{figures_key(compared_scenario(LESSON, None, own()))}.json"
    assert json.loads(kept.read_text()) == figures
    COMPARISONS.clear()
    monkeypatch.setattr(comparisons, "compare", lambda *a, **k: pytest.fail("compared again"))
    assert comparison(LESSON, None, own()) == figures


def test_an_upload_s_figures_are_never_kept_on_disk(cache):
    comparison("mine.toml", (SCENARIO_DIR / f"{LESSON}.toml").read_text(), Overrides())
    assert not list(cache.glob("*.json"))


@pytest.mark.parametrize(
    "content",
    ["not json", json.dumps([1, 2]), json.dumps({"a": {"b": "text"}}), json.dumps({"a": {"b": True}}), "\xff"],
)
def test_a_bad_figures_file_is_ignored_and_removed(cache, content):
    path = cache / "k.json"
    path.write_bytes(content.encode("latin-1"))
    assert run_cache.load_figures("k") is None
    assert not path.exists()


def test_figures_read_back_as_written_none_included(cache):
    figures = {"static-ragged": {"steps": 14, "throughput_tokens_per_s": 12.5, "kv_utilization": None}}
    run_cache.store_figures("k", figures)
    assert run_cache.load_figures("k") == figures and not list(cache.glob(".writing-*"))


def test_precompute_makes_a_lesson_s_figures_once_then_finds_them(cache, capsys):
    assert precompute.main(["7.6", "1.1"]) == 0
    made = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in made] == [LESSON, "part1-basic-batch"]
    assert all(": made in " in line for line in made) and len(list(cache.glob("*.json"))) == 2
    COMPARISONS.clear()
    assert precompute.main(["7.6"]) == 0
    assert capsys.readouterr().out.startswith(f"{LESSON}: kept already, ")


def test_precompute_refuses_an_unknown_lesson_and_a_cache_switched_off(cache, monkeypatch, capsys):
    assert precompute.main(["9.9"]) == 2 and "no such lesson: 9.9" in capsys.readouterr().err
    monkeypatch.setenv("CBL_RUN_CACHE", "off")
    assert precompute.main(["7.6"]) == 2 and "the runs cache is off" in capsys.readouterr().err


def test_the_app_finds_the_figures_precompute_kept_and_leaves_no_progress_bar(cache, monkeypatch):
    assert precompute.main(["7.6"]) == 0
    COMPARISONS.clear()  # (another process's memory: only the disk is shared)
    monkeypatch.setattr(comparisons, "compare", lambda *a, **k: pytest.fail("compared again"))
    app = start_app(lesson="7.6", tab="Compare", predict="false")
    assert not app.exception and not app.error
    assert app.metric[0].label == "Prefix cache on / off throughput (paged)"
    assert not app.get("progress")


def test_the_command_cb_lab_serve_starts_makes_the_figures_into_the_shared_folder(cache):
    done = subprocess.run(
        [*PRECOMPUTE, "7.6"],
        cwd=ROOT,
        env={**os.environ, "CBL_RUN_CACHE": str(cache)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{LESSON}: made in ")
    assert run_cache.load_figures(figures_key(compared_scenario(LESSON, None, own()))) is not None
