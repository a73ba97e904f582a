"""What an adapter may use: check a solution of another shape through a thin class of the seeds' shape.

An adapter (docs/adapters.md) is a class with the seeds' signatures that drives a solution
of another shape. Two things here keep it honest:

- `Unsupported`: raise it (from `__init__` or `submit_request`) when a case asks for what
  the solution cannot express, e.g. two stop sequences for an engine that takes one. The
  checker then skips that case and says so, instead of failing it or letting the adapter
  quietly change the request.
- `with_prompt(prompt, output)`: what to hand the checker's callback when the solution
  delivers generated tokens only. It is a live view of the solution's own list, not a
  copy, so a solution that later reuses that list for another request is still caught
  (the checker reads every delivered result again after each model call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


class Unsupported(Exception):
    """The solution cannot express this case; the message says what, in plain words."""


class PromptAndOutput(Sequence):
    """`prompt` followed by the current contents of `output` (the solution's own list), each token
    passed through `token` (`int` for a solution with string tokens)."""

    def __init__(self, prompt: Sequence, output: Sequence, token: Callable = lambda t: t):
        self.prompt, self.output, self.token = list(prompt), output, token

    def __len__(self) -> int:
        return len(self.prompt) + len(self.output)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return list(self)[index]

    def __iter__(self):
        yield from self.prompt
        yield from map(self.token, self.output)

    def __repr__(self) -> str:
        return f"with_prompt({list(self)})"


def with_prompt(prompt: Sequence, output: Sequence, token: Callable = lambda t: t) -> PromptAndOutput:
    return PromptAndOutput(prompt, output, token)
