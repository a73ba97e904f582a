"""A worker's start: the app's modules imported and the course read, then `streamlit run`.

    python -m cblab.cli.worker_start run app.py [STREAMLIT OPTIONS...]

Streamlit imports an app's modules on its first script run, so on a fresh server the first
learners wait for them: about 1.6 s of imports (the engine, numpy, pandas, plotly, the UI),
the course's 29 scenario files, and Streamlit's emoji pattern (compiled the first time a
page icon is checked). `cblab/cli/workers.py` starts every worker this way, so `cb-lab serve`, the
benchmarks and the browser tests pay that before the worker answers its health check, not
while a class lands. The modules are the ones the app imports, read from its source. (A UI
module registers its Streamlit component on import; Streamlit registers it again with the
running server when the component is first drawn.)
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path


def imported_modules(app: Path) -> list[str]:
    """The modules `app`'s top level imports (`import a.b`, `from a.b import c`), in order."""
    found = []
    for node in ast.parse(app.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return list(dict.fromkeys(found))


def warm(app: Path) -> None:
    from streamlit.string_util import is_emoji

    from engine.lab.course import load_course

    for name in imported_modules(app):
        importlib.import_module(name)
    load_course()
    is_emoji("🧮")


def main() -> None:
    if sys.argv[1:2] == ["run"] and len(sys.argv) > 2 and Path(sys.argv[2]).is_file():
        warm(Path(sys.argv[2]))
    from streamlit.web.cli import main as streamlit

    streamlit(prog_name="streamlit")  # reads sys.argv[1:], as `python -m streamlit` does


if __name__ == "__main__":
    main()
