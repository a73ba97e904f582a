"""Every zoo engine rebuilt in the two shapes of docs/adapters/, behind the worked adapters.

`ModelNext<Bug>` is the zoo engine as the seeds' third statement's function
(`dynamic_batching_decode(model_next, requests, capacity)`, callbacks of generated tokens),
driven by `ModelNextAdapter`; `AddRequest<Bug>` is it as an `add_request(Request)` engine
whose `step()` returns what it finished, driven by `AddRequestAdapter`. Checking them shows
that an adapter lets every mistake through (tests/test_adapters.py), and so do the two
below it: a `model_next` solution that reuses its output list, and an `add_request` engine
that reports what it finished only at the end.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "adapters"))

from add_request_adapter import AddRequestAdapter  # noqa: E402
from model_next_adapter import ModelNextAdapter  # noqa: E402

from engine.core.engine import BatchInferenceEngine  # noqa: E402
from engine.practice.zoo import BUGS  # noqa: E402


def generated_part(n: int, reused: list | None):
    """What the rebuilt solution hands on: the generated tokens, in a new list or in one list it reuses."""
    if reused is None:
        return lambda tokens: tokens[n:]
    return lambda tokens: (reused.clear(), reused.extend(tokens[n:]), reused)[-1]


def as_model_next(engine_class, reuse: bool = False):
    """The engine as `dynamic_batching_decode(model_next, requests, capacity)`; with `reuse`, every
    callback gets the same output list, refilled."""

    def decode(model_next, requests, capacity):
        (stop_token,) = {r.stop_token for r in requests} or {None}  # the adapter gives every request the same
        engine, reused = engine_class(model_next, capacity, stop_token), [] if reuse else None
        for r in requests:
            stops = [r.stop_sequence] if r.stop_sequence else None
            part = generated_part(len(r.prompt), reused)
            engine.submit_request(
                r.prompt, r.max_tokens, lambda tokens, r=r, part=part: r.callback(part(tokens)), stops
            )
        engine.run()

    return staticmethod(decode)


def as_add_request(engine_class, late: bool = False):
    """The engine as an `add_request(Request)` engine whose `step()` returns what it finished; with
    `late`, finished requests are reported only once nothing is left to run."""

    class Engine:
        def __init__(self, model, max_num_seqs, eos_token_id=None):
            self.engine, self.finished = engine_class(model, max_num_seqs, eos_token_id), []

        def add_request(self, request):
            part, rid = generated_part(len(request.prompt_ids), None), request.request_id
            done = lambda tokens: self.finished.append((rid, part(tokens)))  # noqa: E731
            self.engine.submit_request(request.prompt_ids, request.max_new_tokens, done, request.stop or None)

        def has_unfinished(self):
            return self.engine.has_work() or bool(self.finished)

        def step(self):
            self.engine.step()
            if late and self.engine.has_work():
                return []
            finished, self.finished = self.finished, []
            return finished

    return Engine


ModelNextReusesItsOutputList = type(
    "ModelNextReusesItsOutputList", (ModelNextAdapter,), {"decode": as_model_next(BatchInferenceEngine, reuse=True)}
)
AddRequestReportsLate = type(
    "AddRequestReportsLate",
    (AddRequestAdapter,),
    {"engine_type": staticmethod(as_add_request(BatchInferenceEngine, late=True))},
)
ENGINES = {"Correct": BatchInferenceEngine} | {bug.engine.__name__: bug.engine for bug in BUGS.values()}
for _name, _engine in ENGINES.items():
    globals()[f"ModelNext{_name}"] = type(f"ModelNext{_name}", (ModelNextAdapter,), {"decode": as_model_next(_engine)})
    globals()[f"AddRequest{_name}"] = type(
        f"AddRequest{_name}", (AddRequestAdapter,), {"engine_type": staticmethod(as_add_request(_engine))}
    )
