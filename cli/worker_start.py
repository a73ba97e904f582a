"""A worker's start: the engine imported and the course read, then `streamlit run`.

    python -m cli.worker_start run app.py [STREAMLIT OPTIONS...]

Streamlit imports an app's modules on its first script run, so on a fresh server the first
learners wait for them: about 1.3 s of imports (the engine, numpy, pandas), the course's 29
scenario files, and Streamlit's emoji pattern (compiled the first time a page icon is
checked). `cli/workers.py` starts every worker this way, so `cb-lab serve`, the benchmarks
and the browser tests pay that before the worker answers its health check, not while a
class lands. Only modules that do not draw anything are imported here: the UI's modules
register Streamlit components, which belong to the running server.
"""

from __future__ import annotations


def warm() -> None:
    from streamlit.string_util import is_emoji

    import engine.analysis.frames  # noqa: F401  (numpy, pandas and the engine come with these)
    import engine.analysis.metrics  # noqa: F401
    from engine.lab.course import load_course

    load_course()
    is_emoji("🧮")


def main() -> None:
    warm()
    from streamlit.web.cli import main as streamlit

    streamlit(prog_name="streamlit")  # reads sys.argv[1:], as `python -m streamlit` does


if __name__ == "__main__":
    main()
