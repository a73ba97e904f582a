"""The stage: the client-side player of a run's frames (stage.py, stage_component/), the slot grid and
batch view drawn in Python, and a long run's overview with the window it plays (long_run.py)."""
