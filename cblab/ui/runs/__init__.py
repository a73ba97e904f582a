"""Keeping the runs: one cache of runs for every session (runs.py), their files on disk (run_cache.py,
run_file.py), the stage's wire format (stage_wire.py), and Compare's figures (comparisons.py)."""
