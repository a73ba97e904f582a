"""The front ends: the Streamlit app's parts (`cblab.ui`, wired together into the page by `cblab/app.py`,
which the root's `app.py` runs) and the command line (`cblab.cli`, the `cb-lab` command, `python -m cblab`
and `python -m engine`).

They live under a name of the project's own, the command's, so that installing the project
puts no generic `ui` or `cli` at site-packages' top level; `engine` stays top-level, as the
public API (`from engine import ...`).
"""
