"""The codebase stays ruff clean, every module says what it is for, and imports go down the layers:
core <- analysis <- lab <- practice <- the front ends (cblab/cli/, cblab/ui/, app.py); installed, the project adds
only `engine` and `cblab` to site-packages' top level; and the engine keeps nano-vllm's shape (a step read as
schedule, run, postprocess; the log written once per phase; nothing of the bug zoo in the core)."""

import ast
import pathlib
import shutil
import subprocess
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "cblab")
LAYERS = ["engine.core", "engine.analysis", "engine.lab", "engine.practice", "cblab.cli", "cblab.ui"]  # lowest first


def modules() -> list[pathlib.Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: pathlib.Path) -> set[str]:
    """Absolute names of the project modules `path` imports (relative imports resolved)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            names.add(".".join([*base, *(node.module.split(".") if node.module else [])]))
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {name for name in names if name.split(".")[0] in PACKAGES}


def layer(name: str) -> int | None:
    return next((i for i, prefix in enumerate(LAYERS) if name == prefix or name.startswith(prefix + ".")), None)


def test_ruff_reports_nothing():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the test extra)")
    result = subprocess.run([ruff, "check", str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_has_a_docstring(path):
    assert ast.get_docstring(ast.parse(path.read_text())), path


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_go_down_the_layers(path):
    if path == ROOT / "engine" / "__main__.py":  # `python -m engine` launches the CLI's front end
        return
    here = layer(module_name(path))
    for name in imported(path):
        there = layer(name)
        assert here is None or there is None or there <= here, f"{module_name(path)} imports {name}"


UI_FLOORS = {"": 1, "runs": 2, "course": 3, "charts": 3, "controls": 4, "stage": 5, "practice": 6, "frame": 7}  # folder


def ui_folder(name: str) -> str | None:
    """The folder of cblab.ui a module name stands in ("" for cblab/ui/ itself), or None outside it."""
    parts = name.split(".")
    if parts[:2] != ["cblab", "ui"]:
        return None
    return parts[2] if len(parts) > 3 or (len(parts) == 3 and parts[2] in UI_FLOORS) else ""


@pytest.mark.parametrize("path", sorted((ROOT / "cblab" / "ui").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_apps_folders_import_only_from_lower_floors(path):
    """docs/architecture.md's floors of cblab/ui/: a folder imports its own modules and those of lower floors;
    two folders on one floor (course/, charts/) do not import each other."""
    here = ui_folder(module_name(path))
    assert here in UI_FLOORS, f"{path}: a folder of cblab/ui/ that docs/architecture.md does not place"
    for name in imported(path):
        there = ui_folder(name)
        if there is None or there == here:
            continue
        assert UI_FLOORS[there] < UI_FLOORS[here], f"{module_name(path)} (floor {UI_FLOORS[here]}) imports {name}"


def test_the_engine_imports_no_ui_library():
    for path in (ROOT / "engine").rglob("*.py"):
        text = path.read_text()
        for library in ("streamlit", "plotly"):
            assert f"import {library}" not in text and f"from {library}" not in text, path


def test_the_page_only_wires_the_front_end_together():
    """The page (cblab/app.py) imports the app's parts (cblab/ui/), not the engine or the CLI, and lays out
    nothing itself: the page's frame is cblab/ui/frame/layout.py. app.py, the entry, draws the page and starts the
    server warm, nothing else."""
    page = ROOT / "cblab" / "app.py"
    assert imported(page) and all(name == "cblab.ui" or name.startswith("cblab.ui.") for name in imported(page))
    layout = ("columns", "tabs", "container", "expander")
    calls = [
        node.func.attr
        for node in ast.walk(ast.parse(page.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in layout
    ]
    assert calls == []
    assert imported(ROOT / "app.py") == {"cblab.app", "cblab.cli.worker_start"}


def test_the_installed_top_level_packages_are_engine_and_cblab():
    """pyproject's packages are the repository's folders `engine` (the public API) and `cblab` (the front
    ends) with their subpackages, and no other top-level name: no generic `ui` or `cli` in site-packages."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = pyproject["tool"]["setuptools"]["packages"]
    assert {name.split(".")[0] for name in packages} == {"engine", "cblab"}
    assert all((ROOT / name / "__init__.py").is_file() for name in ("engine", "cblab"))
    assert pyproject["project"]["scripts"]["cb-lab"].startswith("cblab.cli.")


# -- the engine's shape (issue 23): a step read in two files, the log once per phase, no zoo in the core --
CORE = ROOT / "engine" / "core"


def _method(path: pathlib.Path, cls: str, name: str) -> ast.FunctionDef:
    tree = ast.parse(path.read_text())
    klass = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == cls)
    return next(node for node in klass.body if isinstance(node, ast.FunctionDef) and node.name == name)


def _called(node: ast.AST) -> list[str]:
    """The names of the methods and functions `node` calls, in source order."""
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    calls.sort(key=lambda n: (n.lineno, n.col_offset))
    return [n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "") for n in calls]


def test_a_step_reads_schedule_run_postprocess():
    """`_step` is about a dozen lines: intake, then the three phases, in that order."""
    step = _method(CORE / "engine.py", "BatchInferenceEngine", "_step")
    assert step.end_lineno - step.lineno + 1 <= 14
    phases = [name for name in _called(step) if name.startswith("_")]
    assert phases == ["_take_arrivals_and_cancellations", "_schedule", "_run", "_postprocess"]


def test_the_engine_writes_its_log_once_per_phase():
    """engine.py writes the event log only through the log's phase methods (and a model fault's error)."""
    tree = ast.parse((CORE / "engine.py").read_text())
    written = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "event_log"
        and node.attr != "request_index"
    }
    assert written == {"arrived", "ended", "scheduled", "model_called", "postprocessed", "error"}


def test_the_log_packs_its_columns_alone_and_names_them():
    from engine.core.log.event_log import EventLog

    for name in ("a", "b", "blobs"):
        assert not hasattr(EventLog, name) and f"log.{name}[" not in "".join(
            path.read_text() for path in (ROOT / "engine").rglob("*.py")
        ), name


def test_the_scheduler_does_not_reach_back_into_the_engine_or_the_zoo():
    for name in ("scheduler.py", "memory_scheduler.py", "block_manager.py", "memory_policy.py"):
        for module in imported(CORE / name):
            assert module not in ("engine.core.engine", "engine.practice", "engine") and not module.startswith(
                "engine.practice"
            ), (name, module)


def test_the_correct_engine_carries_nothing_for_the_zoo():
    """No zoo-only state in the engine or its scheduler: each bug keeps what it remembers itself."""
    from engine import BatchInferenceEngine
    from engine.practice.zoo import BUGS

    engine = BatchInferenceEngine(lambda batch: [1] * len(batch), 2, 0, kv_blocks=8, block_size=2)
    own = set(vars(engine)) | set(vars(engine._scheduler))
    for bug in BUGS.values():
        extra = set(vars(bug.engine)) - set(dir(BatchInferenceEngine)) - {"__module__", "__doc__", "__qualname__"}
        assert not extra & own, (bug.engine.__name__, extra & own)
    assert not {"held", "previous", "hooks", "hold_slot"} & own
    assert not any(isinstance(value, BatchInferenceEngine) for value in vars(engine._scheduler).values())
