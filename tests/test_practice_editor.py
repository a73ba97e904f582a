"""The opt-in editor: pasted code sees a scrubbed environment, and a file it forges is one st.error."""

import json
import os
import pathlib
import subprocess
import time

from streamlit.testing.v1 import AppTest

import cblab.ui.practice.practice
from cblab.ui.practice.practice import ALLOW_CODE, ROOT
from engine.practice.checker.cases import fixed_cases
from engine.practice.checker.resources import THREAD_VARIABLES

APP = str(ROOT / "app.py")
CORRECT = (pathlib.Path(__file__).parent / "solutions" / "correct.py").read_text()


def check_in_editor(monkeypatch, code: str) -> AppTest:
    monkeypatch.setenv(ALLOW_CODE, "1")
    monkeypatch.setattr(cblab.ui.practice.practice, "EDITOR_SCALE_BUDGET", 3)  # the scale section, kept short
    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["tab"] = "Practice"
    app.run()
    app.text_area(key="solution_code").input(code).run()
    app.button(key="run_check").click().run()
    return app


def test_pasted_code_runs_with_a_scrubbed_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CBL_SECRET_TOKEN", "do-not-leak")
    report = tmp_path / "environment.json"
    spy = f"import json, os, sys\njson.dump([dict(os.environ), sys.argv[4]], open({str(report)!r}, 'w'))\n"
    app = check_in_editor(monkeypatch, spy + CORRECT)
    assert not app.exception
    lines = app.code[0].value.splitlines()
    assert f"{len(fixed_cases())} passed, 0 failed" in lines
    assert lines[lines.index(f"{len(fixed_cases())} passed, 0 failed") + 1].startswith(
        "Scale: CPU time per generated token"
    )
    environment, solution = json.loads(report.read_text())
    assert set(environment) == {"PATH", "LANG", "PYTHONPATH", "HOME", *THREAD_VARIABLES}
    assert environment["LANG"] == "C.UTF-8" and environment["PYTHONPATH"] == str(ROOT)
    assert environment["HOME"] == str(pathlib.Path(solution).parent)  # the run's own temporary folder


def test_a_checker_log_forged_by_the_pasted_code_is_one_error(monkeypatch):
    forge = (
        "import pathlib, sys\n"
        "pathlib.Path(sys.argv[4]).with_name('failing.jsonl').write_text("
        '\'{"format": "continuous-batching-lab/event-log", "version": 1, "batch_size": 1, "stop_token": 0,\''
        '\' "batching": "continuous", "padded": false, "model": "checker {}"}\\n\')\n'
    )
    app = check_in_editor(monkeypatch, forge + CORRECT)
    assert not app.exception
    assert [e.value for e in app.error] == ["the checker case in this log: batch_size: missing"]


def test_the_editor_stops_the_checker_and_its_worker_on_timeout(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv(cblab.ui.practice.practice.ALLOW_CODE, "1")
    monkeypatch.setattr(cblab.ui.practice.practice, "EDITOR_TIMEOUT", 2)
    app = AppTest.from_file(os.path.join(os.path.dirname(__file__), "..", "app.py"), default_timeout=60)
    app.query_params["tab"] = "Practice"
    app.run()
    hangs = pathlib.Path(__file__).parent / "solutions" / "hangs.py"
    app.text_area(key="solution_code").input(hangs.read_text()).run()
    app.button(key="run_check").click().run()
    assert app.error[0].value == "The check did not finish within 2 s."
    time.sleep(0.5)
    left = subprocess.run(
        ["pgrep", "-f", "engine.practice.checker.worker .*solution.py"], capture_output=True, text=True
    )
    assert left.stdout == ""
