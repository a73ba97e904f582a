"""The codebase stays ruff clean, and the engine never imports a UI library."""

import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_ruff_reports_nothing():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the test extra)")
    result = subprocess.run([ruff, "check", str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_engine_imports_no_ui_library():
    for path in (ROOT / "engine").glob("*.py"):
        text = path.read_text()
        for library in ("streamlit", "plotly"):
            assert f"import {library}" not in text and f"from {library}" not in text, path.name
