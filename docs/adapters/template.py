"""An adapter template: check a solution of another shape with `python -m engine check`.

Copy this file next to your solution (its folder is on the import path when the checker
loads it), change the four numbered places, and run

    python -m engine check my_adapter.py --class Adapter

The checker drives a class of the seeds' shape, `Adapter(model, batch_size, stop_token)`,
`submit_request(prompt_tokens, max_tokens, callback, stop_sequences=None)` and `run()`;
the adapter hands each call to your solution and changes nothing on the way (docs/adapters.md
has the rules, and two worked examples beside this file).
"""

from my_solution import MyEngine  # 1. your solution's module and class (or function)

from engine.practice.checker.adapting import Unsupported, with_prompt


class Adapter:
    refuses_zero_budget = False  # True if your engine refuses max_tokens = 0 by design

    def __init__(self, model, batch_size, stop_token):
        # 2. Build your engine. `model` answers `model.generate_next_tokens(rows)` (also `model.next_tokens(rows)`
        #    and `model(rows)`): one token per row, each row a list of token ids.
        self.engine = MyEngine(model.generate_next_tokens, batch_size, stop_token)

    def submit_request(self, prompt_tokens, max_tokens, callback, stop_sequences=None):
        # 3. Hand the request over as it is. What your engine cannot express, refuse:
        #    `raise Unsupported("several stop sequences for one request")`, and the checker skips the case.
        #    Hand `callback` the very list your engine delivers, or a live view of it: with_prompt(prompt, generated)
        #    for an engine that delivers generated tokens only (with_prompt(prompt, out, token=int) for string tokens).
        if max_tokens == 0 and self.refuses_zero_budget:
            raise Unsupported("max_tokens = 0")
        prompt = list(prompt_tokens)
        stops = [list(s) for s in stop_sequences or []]
        self.engine.add(prompt, max_tokens, stops, lambda generated: callback(with_prompt(prompt, generated)))

    def run(self):
        # 4. Run until every request is delivered. An engine that returns results instead of calling back:
        #    deliver each one right after the step that finished it, before the next model call.
        self.engine.run()
