"""Check an engine of dataclasses with `from __future__ import annotations` (`dataclass_solution.py`):

    python -m engine check docs/adapters/dataclass_adapter.py --class DataclassAdapter

Loaded by its path the plain way (`spec_from_file_location`, `exec_module`), that file
fails: its dataclasses look their module up in `sys.modules`, where it is not.
`load_file` puts it there while its code runs (and only then, so it clashes with no
other module). The engine delivers `on_done(request, generated)`, the generated tokens
only, so the adapter hands the checker `with_prompt(prompt, generated)`, a live view of
the engine's own list.
"""

from __future__ import annotations

from engine.practice.checker.adapting import load_file, with_prompt

solution = load_file("dataclass_solution.py", relative_to=__file__)


class DataclassAdapter:
    engine_type = solution.DataclassEngine  # the solution's engine
    request_type = solution.GenerationRequest  # the solution's request record

    def __init__(self, model, batch_size, stop_token):
        self.engine = self.engine_type(model.generate_next_tokens, batch_size, stop_token)

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        prompt = list(prompt_tokens)
        on_done = lambda request, generated: callback(with_prompt(prompt, generated))  # noqa: E731
        stops = [list(s) for s in stop_sequences or []]
        self.engine.add(self.request_type(prompt, max_tokens, on_done, stops))

    def run(self):
        while self.engine.busy():
            self.engine.step()
