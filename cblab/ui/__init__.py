"""The Streamlit front end's parts, one folder a role (docs/architecture.md draws their floors): frame/ (the
page), practice/, stage/, controls/ (`*_ui` functions that read the sidebar and return plain values), course/,
charts/, runs/ (one cache of runs for every session), and the modules every floor uses.

Views read only the event log (through `engine.analysis.replay.Replay` and `engine.analysis.metrics`),
so an uploaded JSONL file replays exactly like a live run.
"""
