"""Practice mode: check a user's own engine against the contract, and explain what is wrong.

    python -m engine check SOLUTION.py [--class NAME] [--seed S] [--timeout SECONDS] [--jsonl OUT]

The solution runs in a subprocess (`worker.py`, driven by `sandbox.py`) with a time limit
per case, in a process group of its own, under resource limits (`resources.py`), talking
on pipes of its own (`channel.py`); a case that hangs is answered by the worker's
`watchdog.py` with the trace so far. `driver.py` runs one case on an engine class and
records a `Trace` (`trace.py`: the recording model, every delivered result kept to be read
again); the project's engine runs the same cases in-process as the reference. `checks.py`
turns the two traces into findings in plain words, with hints where one mistake fits
(`hints.py`, `stop_hints.py`, `run_hints.py`; `rows.py` reads a trace, `stuck.py` a run that
did not finish, `divergence.py` finds where the model calls first differ). `run.py` runs
the fixed and generated cases (`cases.py`), `shrink.py` makes a failing generated case
minimal, `optional.py` runs the optional checks (cancellation, model and callback
faults, by the interruptions of `interruptions.py`), `one_call.py` names a model called
once per row, `report.py` words the report (a check that ran nothing is no pass),
`command.py` is the command, `reconstruct.py` rebuilds an event log of the failing run
for the app. A solution of another shape is
checked through an adapter (`adapting.py`, docs/adapters.md).
"""
