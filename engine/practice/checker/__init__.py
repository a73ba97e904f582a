"""Practice mode: check a user's own engine against the contract, and explain what is wrong.

    python -m engine check SOLUTION.py [--class NAME] [--seed S] [--timeout SECONDS] [--jsonl OUT]

The solution runs in a subprocess (`worker.py`, driven by `sandbox.py`) with a time limit
per case, in a process group of its own, under resource limits (`resources.py`), talking
on pipes of its own (`channel.py`); the project's engine runs the same cases in-process
as the reference (`trace.py`); `checks.py` turns the two traces into findings in plain
words; `shrink.py` makes a failing generated case minimal; `reconstruct.py` rebuilds an
event log of the failing run for the app.
"""
