"""Check a solution whose file name starts with a digit (`01_batching.py`) with the checker:

    python -m engine check docs/adapters/digit_name_adapter.py --class DigitNameAdapter

`import 01_batching` is a syntax error, and `importlib.import_module("01_batching")` works
only with the file's folder on the import path and leaves the module in `sys.modules`
under a name another file may want. `load_file("01_batching.py", relative_to=__file__)`
loads it from beside this adapter, by its path. The rest is a rename: the solution
already has the seeds' semantics under other names.
"""

from __future__ import annotations

from engine.practice.checker.adapting import load_file

batching = load_file("01_batching.py", relative_to=__file__)


class DigitNameAdapter:
    engine_type = batching.ContinuousBatcher  # the solution's engine

    def __init__(self, model, batch_size, stop_token):
        self.engine = self.engine_type(model, max_batch=batch_size, eos_id=stop_token)

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        self.engine.add_request(list(prompt_tokens), max_tokens, callback, stop=stop_sequences)

    def run(self):
        self.engine.run_all()
