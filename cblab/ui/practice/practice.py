"""The Practice tab: spot the bug in a zoo engine, or compare a checker's failing run with the reference.

The tab has four parts: spot the bug (`cblab.ui.practice.spot_the_bug`), spot the slow engine
(`cblab.ui.practice.slow_bugs`), a checker's uploaded failing run
beside the reference (`cblab.ui.practice.pair_view`), with the steps that make it (`CHECK_STEPS`: what the
file defines, where to run the checker, what an adapter is for), and, opt-in only, an editor. An uploaded file that is
too big or not UTF-8 is shown with `st.error`, never a traceback. The editor runs pasted code
in a checker subprocess with a scrubbed environment and a time limit, and stops it (and its
worker) when time is up.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import streamlit as st

from cblab.ui.practice.pair_view import render_checker_log
from cblab.ui.practice.slow_bugs import render_slow_bugs
from cblab.ui.practice.spot_the_bug import render_spot_the_bug
from cblab.ui.runs.runs import UserError, uploaded_text

ALLOW_CODE = "CBL_ALLOW_CODE"  # set to 1 to allow the in-browser editor (unsafe on a shared server)
EDITOR_TIMEOUT = 120  # seconds for a whole check run from the editor
EDITOR_SCALE_BUDGET = 20  # seconds of it for the scale section (the CLI gives it 30)
EDITOR_GRACE = 5  # seconds after SIGTERM for the checker to kill its worker, before SIGKILL
ROOT = Path(__file__).resolve().parents[3]
CHECK_STEPS = """\
1. **Your file** (`my_engine.py`) defines a class of the seeds' shape: `__init__(model, batch_size,
   stop_token)`, `submit_request(prompt_tokens, max_tokens, callback, stop_sequences=None)` (the
   callback receives the prompt followed by the generated tokens) and `run()`. The checker takes the
   class named `BatchInferenceEngine`, or the file's only class with `submit_request` and `run`; name
   another with `--class NAME`.
2. **Install this lab once** (`python -m pip install -e .` in its folder), then **run the checker in the
   folder that holds your file**: `python -m engine check my_engine.py --jsonl failing.jsonl`. It writes
   the first failing run's event log to `failing.jsonl`.
3. **Load that file here** to see your run beside the reference's, step by step.

Is your solution of another shape (a `model_next(batch)` function instead of a model, `add_request`
and `step()` instead of callbacks, string tokens, threads)? Write an **adapter**: a small class of the
seeds' shape that hands each call on to your solution, so the checker can drive it unchanged
(`python -m engine check my_adapter.py --class Adapter`). `docs/adapters.md` in the lab's folder has
the rules an adapter must keep (it must not hide a bug) and a template to copy.
"""


def render_practice() -> None:
    st.markdown("#### Spot the bug")
    try:
        render_spot_the_bug()
    except Exception as exc:  # a demo that cannot be drawn says so; no traceback reaches the page
        st.error(f"This demo cannot be shown ({type(exc).__name__}: {exc})")
    st.markdown("#### Spot the slow engine")
    try:
        render_slow_bugs()
    except Exception as exc:  # the same: a missing or damaged measurements file says so
        st.error(f"The slow engines cannot be shown ({type(exc).__name__}: {exc})")
    st.divider()
    st.markdown("#### Your solution's failing run")
    st.markdown(CHECK_STEPS)
    upload = st.file_uploader("Checker event log (.jsonl)", type=["jsonl"], key="checker_upload")
    if upload is not None:
        try:
            text, _ = uploaded_text(upload)
        except UserError as exc:
            st.error(str(exc))
        else:
            render_checker_log(text, "yours")
    if os.environ.get(ALLOW_CODE) == "1":
        render_editor()


def editor_environment(home: str) -> dict[str, str]:
    """All the pasted code's checker sees of the server's environment: no tokens, no keys, no settings."""
    return {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "PYTHONPATH": str(ROOT), "HOME": home}


def stop_check(process: subprocess.Popen) -> None:
    """SIGTERM first (the checker then kills its worker's process group), SIGKILL if it lingers."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.communicate(timeout=EDITOR_GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()


class EditorLog:
    """The checker's --jsonl output, read like an upload (same size cap, same UTF-8 check): the pasted
    code may have written it (its limits cap any file it writes at resources.FILE_SIZE_BYTES)."""

    def __init__(self, path: Path):
        self.path, self.name = path, path.name

    def getvalue(self) -> bytes:
        return self.path.read_bytes()


def render_editor() -> None:
    """Opt-in only: runs the checker on pasted code in a subprocess with a time limit."""
    st.divider()
    st.markdown("#### Check code from the browser")
    st.warning(f"{ALLOW_CODE}=1 is set: this server runs code pasted here. Never enable it on a shared server.")
    starter = ROOT / "tests" / "solutions" / "correct.py"
    code = st.text_area(
        "Your BatchInferenceEngine", starter.read_text() if starter.exists() else "", height=360, key="solution_code"
    )
    if not st.button("Check it", key="run_check"):
        return
    with tempfile.TemporaryDirectory() as folder:
        path, out = Path(folder) / "solution.py", Path(folder) / "failing.jsonl"
        path.write_text(code)
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "engine",
                "check",
                str(path),
                "--jsonl",
                str(out),
                f"--scale-budget={EDITOR_SCALE_BUDGET:g}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=editor_environment(folder),
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=EDITOR_TIMEOUT)
        except subprocess.TimeoutExpired:
            stop_check(process)
            st.error(f"The check did not finish within {EDITOR_TIMEOUT} s.")
            return
        st.code(stdout or stderr, language="text")
        if out.exists():
            try:
                text, _ = uploaded_text(EditorLog(out))
            except (OSError, UserError) as exc:
                st.error(str(exc))
            else:
                render_checker_log(text, "editor")
