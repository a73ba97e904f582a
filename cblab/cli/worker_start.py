"""A server's start: the app's modules imported and the course read before it answers.

    python -m cblab.cli.worker_start run app.py [STREAMLIT OPTIONS...]

Streamlit imports a plain script's modules on its first script run, so on a fresh server the
first learners would wait for them: the imports (the engine, numpy, pandas, plotly, the UI),
the course's scenario files, and Streamlit's emoji pattern (compiled the first time a page
icon is checked). Two ways this is paid before the server answers, sharing `warm`:

- `app.py` is an `st.App`, Streamlit's app with a start-up hook: its lifespan, `warmed`, runs
  when the server starts (after Streamlit's runtime has started, before the health check
  answers), so `streamlit run app.py` and `cb-lab app` start warm.
- This module's command warms, then hands its arguments to Streamlit's own command.
  `cblab/cli/workers.py` starts every worker this way (`cb-lab serve`, the benchmarks, the
  browser tests), so a worker serving an older tree, whose `app.py` has no start-up hook, is
  warm too. (For this tree the hook then finds everything done.)

The modules are the ones `app.py` imports, read from its source.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import sys
from pathlib import Path


def imported_modules(app: Path) -> list[str]:
    """The modules `app` imports (`import a.b`, `from a.b import c`) at its top level or in its top-level
    `if` blocks, in order; not those of functions."""
    found = []
    nodes = list(ast.parse(app.read_text(encoding="utf-8")).body)
    while nodes:
        node = nodes.pop(0)
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
        elif isinstance(node, ast.If):
            nodes[:0] = [*node.body, *node.orelse]
    return list(dict.fromkeys(found))


def warm(app: Path) -> None:
    """The modules `app` imports, then `warm_caches`. A failure (a course file a teacher broke, say) is one
    line on stderr, and the server starts anyway: its page then says what is wrong, as it would have."""
    try:
        for name in imported_modules(app):
            importlib.import_module(name)
        warm_caches()
    except Exception as exc:
        print(f"warning: the server starts cold ({type(exc).__name__}: {exc})", file=sys.stderr, flush=True)


def warm_caches() -> None:
    """The course read and Streamlit's emoji pattern compiled: what a fresh server's first page would pay
    after the imports."""
    from streamlit.string_util import is_emoji

    from engine.lab.course import load_course

    load_course()
    is_emoji("🧮")


@contextlib.asynccontextmanager
async def warmed(app):
    """`app.py`'s `st.App` lifespan: `warm` its script before the server answers."""
    warm(Path(app.script_path))
    yield


def main() -> None:
    if sys.argv[1:2] == ["run"] and len(sys.argv) > 2 and Path(sys.argv[2]).is_file():
        warm(Path(sys.argv[2]))
    from streamlit.web.cli import main as streamlit

    streamlit(prog_name="streamlit")  # reads sys.argv[1:], as `python -m streamlit` does


if __name__ == "__main__":
    main()
