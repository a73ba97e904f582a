"""The Streamlit front end's parts: controls (`*_ui`), cached runs, and `render_*` views.

Views read only the event log (through `engine.replay.Replay` and `engine.metrics`),
so an uploaded JSONL file replays exactly like a live run.
"""
