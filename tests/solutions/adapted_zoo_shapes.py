"""Every zoo engine rebuilt in the five shapes of docs/adapters/ added for issue 32, behind their worked adapters.

`<Shape><Bug>` is the zoo engine `<Bug>` (or `Correct`, the project's engine) rebuilt as:
`Scheduler`, a scheduler whose `schedule()` returns the batch and whose `update()` takes
the model's answer (the engine's step runs in a thread that pauses at its model call);
`PerRequest`, an engine asking a per-request model function for one row at a time;
`Asyncio`, a background task serving futures; `DigitName`, the `01_batching.py` shape;
`Dataclass`, the dataclass engine. Each sits behind its adapter, so tests/test_adapters.py
can check that no adapter hides a mistake.
"""

import asyncio
import queue
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "adapters"))

from asyncio_adapter import AsyncioAdapter  # noqa: E402
from dataclass_adapter import DataclassAdapter  # noqa: E402
from digit_name_adapter import DigitNameAdapter  # noqa: E402
from per_request_adapter import PerRequestAdapter  # noqa: E402
from scheduler_adapter import SchedulerAdapter  # noqa: E402

from tests.solutions.adapted_zoo import ENGINES  # noqa: E402


class Row:
    """A sequence as the scheduler shape hands it out: an id and its tokens."""

    def __init__(self, seq_id, token_ids):
        self.seq_id, self.token_ids = seq_id, token_ids


def as_scheduler(engine_class):
    class PausedScheduler:
        """The engine's step() run in a thread that stops at its model call: `schedule()` returns that
        call's batch, `update()` hands the answer back and returns what the step finished."""

        def __init__(self, max_num_seqs, eos_id=None):
            self.engine = engine_class(self._model, max_num_seqs, eos_id)
            self.answers, self.events = queue.Queue(), queue.Queue()
            self.finished, self.thread, self.batch = [], None, []
            self.ids = {}  # seq_id -> the engine's request id

        def _model(self, batch):  # in the step's thread
            self.events.put(("batch", batch))
            return self.answers.get()

        def _step(self):
            try:
                self.engine.step()
            finally:
                self.events.put(("done", None))

        def add(self, seq):
            done = lambda tokens, i=seq.seq_id: self.finished.append(Row(i, tokens))  # noqa: E731
            self.ids[seq.seq_id] = self.engine.submit_request(seq.token_ids, seq.max_new_tokens, done, seq.stop or None)

        def abort(self, seq_id):
            self.engine.cancel(self.ids[seq_id])  # its callback comes in the next step, before its model call

        def is_finished(self):
            return not self.engine.has_work() and not self.finished

        def take_finished(self):  # what the paused step delivered before its model call (a cancelled request)
            finished, self.finished = self.finished, []
            return finished

        def schedule(self):
            if self.thread is not None:  # the last step's model call failed: the step is still to make
                return self.batch
            self.thread = threading.Thread(target=self._step)
            self.thread.start()
            kind, batch = self.events.get()
            if kind == "done":  # a step without a model call
                self.thread.join()
                self.thread = None
                return []
            self.batch = [Row(None, row) for row in batch]
            return self.batch

        def update(self, batch, next_tokens):
            if self.thread is not None:
                self.answers.put(next_tokens)
                self.events.get()
                self.thread.join()
                self.thread = None
            finished, self.finished = self.finished, []
            return finished

    return PausedScheduler


def as_per_request(engine_class):
    class PerRequestEngine:
        def __init__(self, next_token, num_slots):
            self.next_token, self.current = next_token, []
            self.engine = engine_class(self._model, num_slots, None)

        def _model(self, batch):  # the engine's batch, asked row by row
            self.current = batch
            return [self.next_token(row) for row in batch]

        def running(self):
            return self.current

        def add(self, prompt, max_new_tokens, on_finish, stop=()):
            n = len(prompt)
            self.engine.submit_request(prompt, max_new_tokens, lambda tokens: on_finish(tokens[n:]), stop or None)

        def run(self):
            self.engine.run()

    return PerRequestEngine


def as_asyncio(engine_class):
    class AsyncEngine:
        def __init__(self, model, max_batch, eos=None):
            self.engine, self.closing, self.wakeup = engine_class(model, max_batch, eos), False, asyncio.Event()

        def submit(self, prompt, max_tokens, stops=()):
            future, n = asyncio.get_running_loop().create_future(), len(prompt)
            self.engine.submit_request(prompt, max_tokens, lambda tokens: future.set_result(tokens[n:]), stops or None)
            self.wakeup.set()
            return future

        def close(self):
            self.closing = True
            self.wakeup.set()

        async def serve(self):
            while True:
                if self.engine.has_work():
                    self.engine.step()
                    await asyncio.sleep(0)
                elif self.closing:
                    return
                else:
                    self.wakeup.clear()
                    await self.wakeup.wait()

    return AsyncEngine


def as_digit_name(engine_class):
    class ContinuousBatcher:
        def __init__(self, model, max_batch, eos_id):
            self.engine = engine_class(model, max_batch, eos_id)

        def add_request(self, prompt, max_new_tokens, on_complete, stop=None):
            self.engine.submit_request(prompt, max_new_tokens, on_complete, stop)

        def run_all(self):
            self.engine.run()

    return ContinuousBatcher


def as_dataclass(engine_class):
    class DataclassEngine:
        def __init__(self, model, num_slots, eos_token=None):
            self.engine = engine_class(model, num_slots, eos_token)

        def add(self, request):
            n = len(request.prompt)
            done = lambda tokens: request.on_done(request, tokens[n:])  # noqa: E731
            self.engine.submit_request(request.prompt, request.max_new_tokens, done, request.stop_sequences or None)

        def busy(self):
            return self.engine.has_work()

        def step(self):
            self.engine.step()

    return DataclassEngine


SHAPES = {
    "Scheduler": (SchedulerAdapter, "scheduler_type", as_scheduler),
    "PerRequest": (PerRequestAdapter, "engine_type", as_per_request),
    "Asyncio": (AsyncioAdapter, "engine_type", as_asyncio),
    "DigitName": (DigitNameAdapter, "engine_type", as_digit_name),
    "Dataclass": (DataclassAdapter, "engine_type", as_dataclass),
}
for _shape, (_adapter, _attribute, _rebuild) in SHAPES.items():
    for _name, _engine in ENGINES.items():
        _class = f"{_shape}{_name}"
        globals()[_class] = type(_class, (_adapter,), {_attribute: staticmethod(_rebuild(_engine))})


class PerRequestOneCallPerRow(PerRequestAdapter):
    """The per-request solution behind a naive adapter: one model call per row, which the checker reports."""

    def __init__(self, model, batch_size, stop_token):
        super().__init__(model, batch_size, stop_token)
        self.engine.next_token = lambda tokens: model.generate_next_tokens([tokens])[0]
