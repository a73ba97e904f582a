"""`pip install .` gives a lab that runs from any folder: `cb-lab list`, `run`, `check` and `app`.

The wheel is built as `pip install .` builds it (in pip's isolated build environment, setuptools from the
package index) from a copy of what it is made of (setuptools writes build/ beside the sources), then
installed without its dependencies into a new venv made with `--system-site-packages` (they come from this
Python: nothing else is downloaded). Every command runs from an empty folder, with the venv's copy of the
lab imported, not the checkout's. `cb-lab app` is run to a page: its health check, the stage's file as
Streamlit serves it from the installed package's declaration (cblab/ui/pyproject.toml), and one learner's
landing on lesson 1.1 with no exception and the stage's code named, not carried.
"""

import asyncio
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from benchmarks.streamlit_client import Session
from cblab.cli.workers import free_port, stop, wait_healthy
from engine.lab.course import load_course
from engine.lab.scenario import trace_scenarios

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "app.py", ".streamlit", "engine", "cblab", "scenarios")
JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A new venv (on this Python's packages) with the lab installed from its wheel; its bin folder."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=JUNK)
        else:
            shutil.copy2(path, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "-w", str(work / "dist"), str(source)], capture_output=True, text=True
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = (work / "dist").glob("continuous_batching_lab-*.whl")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(work / "venv")], check=True
    )
    python = work / "venv" / "bin" / "python"
    installed = subprocess.run(  # (the checkout's own install, outside the venv, is left alone)
        [
            str(python),
            "-m",
            "pip",
            "--disable-pip-version-check",
            "install",
            "--no-deps",
            "--force-reinstall",
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    return work / "venv" / "bin"


@pytest.fixture
def elsewhere(tmp_path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def run(venv: Path, folder: Path, *command: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["CBL_RUN_CACHE"] = str(folder / "runs")
    return subprocess.run(
        [str(venv / command[0]), *command[1:]], cwd=folder, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_the_venv_imports_its_own_copy_and_serves_its_own_entry(venv, elsewhere):
    probe = "import cblab, engine; from cblab.cli.workers import APP; print(cblab.__file__, engine.__file__, APP)"
    done = run(venv, elsewhere, "python", "-c", probe)
    assert done.returncode == 0, done.stderr
    paths = [Path(word) for word in done.stdout.split()]
    assert all(path.is_relative_to(venv.parent) for path in paths), done.stdout
    assert paths[2].parts[-3:] == ("cblab", "entry", "app.py") and paths[2].is_file()


def test_list_run_and_check_work_from_another_folder(venv, elsewhere):
    listed = run(venv, elsewhere, "cb-lab", "list")
    assert listed.returncode == 0, listed.stderr
    lessons = [lesson.name for lesson in load_course().lessons]
    assert [line.split()[0] for line in listed.stdout.splitlines()] == lessons + [p.stem for p in trace_scenarios()]
    ran = run(venv, elsewhere, "cb-lab", "run", "part1-basic-batch", "--jsonl", "run.jsonl")
    assert ran.returncode == 0, ran.stderr
    assert "part1-basic-batch: Part 1" in ran.stdout and (elsewhere / "run.jsonl").stat().st_size > 0
    shutil.copy2(ROOT / "tests" / "solutions" / "correct.py", elsewhere / "my_engine.py")
    checked = run(venv, elsewhere, "cb-lab", "check", "my_engine.py", "--no-scale")
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    assert "0 failed" in checked.stdout


def test_app_starts_the_course_from_another_folder(venv, elsewhere):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"CBL_RUN_CACHE": str(elsewhere / "runs"), "CBL_PREFETCH": "off"}
    options = ["--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1"]
    log = elsewhere / "app.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [str(venv / "cb-lab"), "app", "--", *options], cwd=elsewhere, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_healthy(url, server, timeout=180, what="cb-lab app")
        except RuntimeError as exc:
            raise AssertionError(f"{exc}: {log.read_text()[-3000:]}") from None
        with urllib.request.urlopen(f"{url}/_stcore/bidi-components/continuous-batching-lab.stage/stage.js") as reply:
            assert b"export default function" in reply.read()
        stages = asyncio.run(land(url))
        assert {(s.js_source_path, s.js_content, s.css_source_path) for s in stages} == {("stage.js", "", "stage.css")}
    finally:
        stop(server)
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


async def land(url: str):
    """One learner lands on lesson 1.1: the stage's elements, one a run of the landing (no exception on the page)."""
    session = Session(url, "lesson=1.1", timeout=180)
    try:
        await session.land()
        assert session.exceptions() == []
        shown = [m.delta.new_element for m in session.received if m.HasField("delta")]
        return [
            e.bidi_component
            for e in shown
            if e.WhichOneof("type") == "bidi_component"
            and e.bidi_component.component_name == "continuous-batching-lab.stage"
        ]
    finally:
        await session.close()
