"""Check a scheduler without a model (`scheduler_solution.py`) with the checker:

    python -m engine check docs/adapters/scheduler_adapter.py --class SchedulerAdapter

The solution's `schedule()` returns the step's batch and leaves the model to its caller,
so the adapter is that caller: one model call a step on the batch exactly as scheduled
(never reordered, never a row added or dropped), then `update()` with the model's answer,
and each finished sequence's callback right away, before the next step. It delivers the
solution's own list, `token_ids` (prompt + generated), so a solution that reuses it is
caught. Requests that need no step (max_tokens = 0) are delivered before the first,
and whatever finished outside a step before each model call.

Since the adapter makes the model call and delivers the results, the contract's faults
are in its hands, and it claims them (`handles_faults`): a model that raises leaves the
scheduler untouched (`update()` is never reached), so run() again resumes; a callback that
raises does not keep the other results of its step from being delivered, and run()
raises its error once they are. `cancel(request_id)` aborts the sequence and delivers what
it has at once, so the checker's cancellation check runs too (`submit_request` returns
the id to cancel).
"""

from __future__ import annotations

from scheduler_solution import Scheduler, Sequence


class SchedulerAdapter:
    handles_faults = ("model", "callback")  # the checker's optional fault checks count for this adapter
    scheduler_type = Scheduler  # the solution's scheduler
    sequence_type = Sequence  # the solution's request record

    def __init__(self, model, batch_size, stop_token):
        self.model = model.generate_next_tokens
        self.scheduler = self.scheduler_type(max_num_seqs=batch_size, eos_id=stop_token)
        self.callbacks = []  # seq_id -> the checker's callback

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        self.callbacks.append(callback)
        stops = [list(s) for s in stop_sequences or []]
        self.scheduler.add(self.sequence_type(len(self.callbacks) - 1, list(prompt_tokens), max_tokens, stops))
        return len(self.callbacks) - 1

    def cancel(self, request_id):
        seq = self.scheduler.abort(request_id)
        if seq is not None:
            self._deliver([seq])

    def _deliver(self, finished):
        errors = []
        for seq in finished:
            try:
                self.callbacks[seq.seq_id](seq.token_ids)
            except Exception as exc:  # the others are still delivered; the error is raised below
                errors.append(exc)
        if errors:
            raise errors[0]

    def run(self):
        self._deliver(self.scheduler.take_finished())
        while not self.scheduler.is_finished():
            batch = self.scheduler.schedule()
            self._deliver(self.scheduler.take_finished())  # finished outside a step, before the model call
            next_tokens = self.model([seq.token_ids for seq in batch]) if batch else []  # the step's one call
            self._deliver(self.scheduler.update(batch, next_tokens))
