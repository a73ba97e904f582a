"""The Practice tab: spot the bug in a zoo engine, or compare a checker's failing run with the reference.

Both views draw two grids side by side from two event logs rebuilt the same way
(`engine.practice.checker.reconstruct`), and outline the first cell where they differ.

A checker log is a user's file: everything wrong with it (too big, not UTF-8, not a log,
a smuggled case out of bounds, a log that does not replay) is shown with `st.error`,
never a traceback. The opt-in editor runs pasted code in a checker subprocess with a
scrubbed environment and a time limit, and stops it (and its worker) when time is up.
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

from engine import EventLog
from engine.analysis.narration import narrate
from engine.analysis.replay import Replay
from engine.practice.checker.cases import fixed_cases
from engine.practice.checker.checks import evaluate
from engine.practice.checker.reconstruct import case_from_log, reconstruct
from engine.practice.checker.run import reference
from engine.practice.checker.trace import run_case
from engine.practice.zoo import BUGS
from ui.grid import grid_data, grid_figure
from ui.runs import UserError, uploaded_text

ALLOW_CODE = "CBL_ALLOW_CODE"  # set to 1 to allow the in-browser editor (unsafe on a shared server)
EDITOR_TIMEOUT = 120  # seconds for a whole check run from the editor
EDITOR_GRACE = 5  # seconds after SIGTERM for the checker to kill its worker, before SIGKILL
ROOT = Path(__file__).resolve().parent.parent


def first_difference(a: EventLog, b: EventLog) -> tuple[int, int] | None:
    """The earliest (step, slot) whose emitted token or request differs between two logs."""

    def cells(log: EventLog) -> dict[tuple[int, int], tuple[str, int]]:
        return {(e.step, e.slot): (e.request_id, e.token) for e in log if e.kind == "emit"}

    left, right = cells(a), cells(b)
    differing = [key for key in set(left) | set(right) if left.get(key) != right.get(key)]
    return min(differing) if differing else None


@st.cache_resource(max_entries=16, show_spinner=False)
def bug_demo(name: str) -> tuple[str, EventLog, EventLog]:
    """(case description, buggy log, correct log) for the first fixed case that exposes the bug."""
    engine = BUGS[name].engine
    for case in fixed_cases():
        got, want = run_case(engine, case.to_json(), True), reference(case)
        if evaluate(case, got, want):
            return case.title, reconstruct(case, got), reconstruct(case, want)
    raise AssertionError(f"no fixed case exposes {name}")


@st.cache_resource(max_entries=8, show_spinner=False)
def checker_pair(text: str) -> tuple[EventLog, EventLog]:
    """A checker's JSONL and the reference run of the same case; ValueError for anything wrong with it."""
    log = EventLog.from_jsonl(text)
    case = case_from_log(log)  # bounds the case, and the log's steps and events
    if case is None:
        raise ValueError("this event log was not written by `python -m engine check --jsonl`")
    try:
        Replay(log)
    except Exception as exc:  # its events are well-formed one by one, but do not make a run
        raise ValueError(f"this checker log does not replay ({type(exc).__name__}: {exc})") from None
    return log, reconstruct(case, reference(case))


def render_checker_log(text: str, key: str) -> None:
    """A checker's failing run beside the reference, or st.error saying what is wrong with the file."""
    try:
        yours, expected = checker_pair(text)
        render_pair(yours, expected, ("Your solution", "Reference"), key)
    except ValueError as exc:
        st.error(str(exc))
    except Exception as exc:  # a log that passes every check but still cannot be drawn
        st.error(f"this checker log cannot be shown ({type(exc).__name__}: {exc})")


def render_pair(left: EventLog, right: EventLog, labels: tuple[str, str], key: str) -> None:
    difference = first_difference(left, right)
    steps = max(left.num_steps, right.num_steps)
    default = min(difference[0] if difference else 0, max(steps - 1, 0))
    step = st.slider("Step", 0, max(steps - 1, 1), default, key=f"{key}_step") if steps > 1 else 0
    where = f"step {difference[0]}, slot {difference[1]}" if difference else "nowhere: the grids agree"
    st.caption(f"First difference (outlined in red): {where}.")
    for column, log, label, side in zip(st.columns(2), (left, right), labels, ("left", "right")):
        with column:
            st.markdown(f"**{label}**")
            replay = Replay(log)
            shown = min(step, len(replay) - 1)
            if shown < 0:
                st.info("No steps.")
                continue
            figure = grid_figure(grid_data(replay, {}), shown, 0.8, highlight=difference)
            st.plotly_chart(figure, key=f"{key}_{side}", config={"displayModeBar": False})
            for sentence in narrate(replay, shown):
                st.markdown(f"- {sentence}")


def render_practice() -> None:
    st.markdown("#### Spot the bug")
    name = st.selectbox("A classic mistake", list(BUGS), key="bug", format_func=lambda n: BUGS[n].title)
    bug = BUGS[name]
    st.markdown(f"**What goes wrong.** {bug.why}  \n**How to avoid it.** {bug.avoid}")
    title, buggy, correct = bug_demo(name)
    st.caption(f"The checker's case: {title}. Left: the engine with this one mistake; right: the correct engine.")
    render_pair(buggy, correct, ("With the mistake", "Correct"), "bug")
    st.divider()
    st.markdown("#### Your solution's failing run")
    st.caption("Run `python -m engine check my_engine.py --jsonl failing.jsonl`, then load the file here.")
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
            [sys.executable, "-m", "engine", "check", str(path), "--jsonl", str(out)],
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
