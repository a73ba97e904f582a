"""`cb-lab app`: the app with the whole course, from wherever the lab is installed.

    cb-lab app [-- STREAMLIT OPTIONS...]        e.g.  cb-lab app -- --server.port 8502 --server.headless true

Runs `streamlit run` on the app's entry as installed: the checkout's `app.py`, which the wheel carries
as `cblab/entry/app.py` with its `.streamlit/config.toml` beside it (pyproject.toml's package `cblab.entry`),
so Streamlit reads the same settings as `streamlit run app.py` in a checkout. Options after `--` are
Streamlit's own and override those settings. The server reads the course and imports the page before it
answers (`app.py` is an `st.App` with a start-up hook), so the first learners do not wait for it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cblab.cli.workers import installed_or_checkout_app


def entry() -> Path:
    """The app's entry script: the installed copy, else the checkout's."""
    app = installed_or_checkout_app()
    if not app.is_file():
        raise OSError(f"the app's entry is missing: {app}")
    return app


def add_app_parser(commands) -> None:
    app = commands.add_parser(
        "app",
        help="start the app with the whole course (Streamlit's options after --)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    app.add_argument("streamlit_options", nargs=argparse.REMAINDER, help="after --: options for streamlit run")


def app_command(args: argparse.Namespace) -> int:
    from streamlit.web.cli import main as streamlit

    options = args.streamlit_options[1:] if args.streamlit_options[:1] == ["--"] else args.streamlit_options
    streamlit(["run", str(entry()), *options], prog_name="streamlit")  # exits when the server stops
    return 0
