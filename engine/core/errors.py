"""Errors the engine raises after a fault, leaving itself consistent and resumable."""

from __future__ import annotations


class ModelError(RuntimeError):
    """The model call of a step failed or answered wrongly; the step was not applied.

    Fix the cause (or not, for a transient fault) and call `run()` or `step()` again:
    the engine resumes from the same state.
    """

    def __init__(self, step: int, message: str):
        super().__init__(f"step {step}: {message}")
        self.step = step


class CallbackError(RuntimeError):
    """One or more user callbacks raised. Every other delivery went ahead; none repeats."""

    def __init__(self, failures: list[tuple[str, BaseException]]):
        self.failures = failures
        names = ", ".join(f"{rid} ({type(exc).__name__}: {exc})" for rid, exc in failures[:5])
        more = f" and {len(failures) - 5} more" if len(failures) > 5 else ""
        super().__init__(f"{len(failures)} callback(s) raised: {names}{more}")
