"""Interrupting a run the way the contract's optional features are used: cancel, a model fault, a callback fault.

A case may carry an `interruption` (plain JSON, so it crosses to the worker): `driver.py`
runs the case through `Interruption.of(case)`, which leaves a plain case alone and else:

- `cancel_waiting`: cancels request `request` (by the id `submit_request` returned) before
  `run()`, so it never reaches the model;
- `cancel_running`: cancels request `request` from the callback of request `from`, a step
  boundary while it runs;
- `model`: the model raises `ModelFault` instead of answering call `at_call` (the call is
  not recorded); `run()` must raise, and is then called again to resume;
- `callback`: request `request`'s callback raises `CallbackFault` once, after its result
  is recorded; `run()` must raise (at once or once the work is done), and is then called
  again to finish what is left.

What `run()` raised is kept in `Trace.raised`; `optional.py` judges the trace. `offers`
reads what a class claims (the worker sends it with the class's shape).
"""

from __future__ import annotations

from .trace import Trace


class ModelFault(RuntimeError):
    """The checker's model failing on purpose."""


class CallbackFault(RuntimeError):
    """The checker's callback failing on purpose."""


class Interruption:
    """No interruption: the plain run."""

    def __init__(self, spec: dict | None = None):
        self.spec = spec or {}
        self.engine, self.ids = None, []
        self.fired = False

    @classmethod
    def of(cls, case: dict) -> Interruption:
        spec = case.get("interruption")
        kinds = {"cancel_waiting": Cancel, "cancel_running": Cancel, "model": ModelFaults, "callback": CallbackFaults}
        return kinds[spec["kind"]](spec) if spec else cls()

    def before_call(self, hook):
        """The recording model's hook before each call (`hook`: the deliveries' reread)."""
        return hook

    def callback(self, i: int, deliver):
        """Request i's callback."""
        return deliver

    def run(self, engine, ids: list, trace: Trace) -> None:
        """Run the engine whose requests got these ids from `submit_request`."""
        self.engine, self.ids = engine, ids
        self._drive(trace)

    def _drive(self, trace: Trace) -> None:
        self.engine.run()


class _Fault(Interruption):
    def _drive(self, trace: Trace) -> None:
        """run(); once the fault has fired and run() raised, run() again to finish (it must not raise again)."""
        try:
            self.engine.run()
        except Exception as exc:
            if not self.fired:
                raise
            trace.raised.append(f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__)
            self.engine.run()


class Cancel(Interruption):
    def callback(self, i: int, deliver):
        if self.spec["kind"] != "cancel_running" or i != self.spec["from"]:
            return deliver

        def deliver_and_cancel(tokens):
            deliver(tokens)
            if not self.fired:
                self.fired = True
                self._cancel()

        return deliver_and_cancel

    def _drive(self, trace: Trace) -> None:
        if self.spec["kind"] == "cancel_waiting":
            self.fired = True
            self._cancel()
        self.engine.run()

    def _cancel(self) -> None:
        request_id = self.ids[self.spec["request"]]
        if request_id is None:
            raise TypeError("submit_request returned None: cancel(request_id) needs the request id it returns")
        self.engine.cancel(request_id)


class ModelFaults(_Fault):
    def before_call(self, hook):
        def fail_once(calls: int) -> None:
            hook(calls)
            if calls == self.spec["at_call"] and not self.fired:
                self.fired = True
                raise ModelFault(f"the checker's model fails on purpose at call {calls}")

        return fail_once


class CallbackFaults(_Fault):
    def callback(self, i: int, deliver):
        if i != self.spec["request"]:
            return deliver

        def deliver_and_fail(tokens):
            deliver(tokens)
            if not self.fired:
                self.fired = True
                raise CallbackFault(f"r{i}'s callback fails on purpose")

        return deliver_and_fail


FAULTS = ("model", "callback")


def offers(engine_class) -> dict:
    """What the class claims of the optional features: a `cancel` method, and the faults its
    `handles_faults` lists (an adapter declares them: `handles_faults = ("model", "callback")`)."""
    try:
        declared = getattr(engine_class, "handles_faults", ())
        faults = [f for f in FAULTS if isinstance(declared, (tuple, list, set, frozenset)) and f in declared]
    except Exception:  # a hostile attribute claims nothing
        faults = []
    return {"cancel": callable(getattr(engine_class, "cancel", None)), "faults": faults}
