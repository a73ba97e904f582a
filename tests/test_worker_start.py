"""A server starts warm: `app.py` is an st.App whose start-up hook warms it, and `python -m cblab.cli.worker_start`
warms a worker, then hands its arguments to Streamlit's command."""

import subprocess
import sys

import streamlit

from cblab.cli.worker_start import imported_modules
from cblab.cli.workers import APP, start_worker
from tests.browser_support import ROOT


def test_the_starter_passes_its_arguments_to_streamlit():
    done = subprocess.run(
        [sys.executable, "-m", "cblab.cli.worker_start", "version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Streamlit, version {streamlit.__version__}"


def test_the_warm_up_imports_what_the_app_imports_and_reads_the_course():
    probe = (
        "import sys; from pathlib import Path; from cblab.cli.worker_start import warm; warm(Path('app.py')); "
        "from engine.lab.course import load_course; "
        "print(load_course.cache_info().currsize, "
        "all(m in sys.modules for m in ('pandas', 'cblab.ui.stage.stage', 'cblab.ui.frame.tabs')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2:] == ["1 True", ""]


def test_the_modules_warmed_are_read_from_the_app_s_imports(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(
        "import json\nimport os.path, json\nfrom cblab.ui import url\nfrom . import x\ndef f():\n    import csv\n"
        "if x:\n    import re\nelse:\n    from cblab import app\n"
    )
    assert imported_modules(app) == ["json", "os.path", "cblab.ui", "re", "cblab"]


def test_streamlit_finds_app_py_s_start_up_hook():
    """`streamlit run app.py` sees an st.App in it (Streamlit reads the file's source), so it serves the app as
    one, and runs its lifespan, which warms the server, before it answers."""
    from streamlit.web.server.app_discovery import discover_asgi_app

    found = discover_asgi_app(APP)
    assert found.is_asgi_app and found.import_string == "app:app"


def test_a_worker_of_this_tree_starts_warmed_and_one_of_an_older_tree_as_plain_streamlit(tmp_path):
    older = tmp_path / "app.py"  # a tree without a worker_start.py, as a benchmark's --app may serve
    older.write_text("")
    before_cblab = tmp_path / "before" / "app.py"  # a tree from before cli/ moved into cblab/
    (before_cblab.parent / "cli").mkdir(parents=True)
    (before_cblab.parent / "cli" / "worker_start.py").write_text("")  # (exits at once)
    before_cblab.write_text("")
    for app, starter in ((APP, "cblab.cli.worker_start"), (before_cblab, "cli.worker_start"), (older, "streamlit")):
        process = start_worker(0, ["--not-an-option"], app=app)  # (exits at once)
        try:
            process.wait(120)
        finally:
            process.kill()
        assert process.args[1:3] == ["-m", starter]
