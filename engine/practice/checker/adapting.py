"""What an adapter may use: check a solution of another shape through a thin class of the seeds' shape.

An adapter (docs/adapters.md) is a class with the seeds' signatures that drives a solution
of another shape. Two things here keep it honest, and two more reach solutions of awkward
shapes:

- `Unsupported`: raise it (from `__init__` or `submit_request`) when a case asks for what
  the solution cannot express, e.g. two stop sequences for an engine that takes one. The
  checker then skips that case and says so, instead of failing it or letting the adapter
  quietly change the request.
- `with_prompt(prompt, output)`: what to hand the checker's callback when the solution
  delivers generated tokens only. It is a live view of the solution's own list, not a
  copy, so a solution that later reuses that list for another request is still caught
  (the checker reads every delivered result again after each model call).
- `row_by_row(model, rows)`: a per-request model function `next_token(prefix) -> int` for a
  solution that asks for each row's token on its own, answered from one batched call a
  step (a solution that asks for a row it does not hold, or skips one, is stopped).
- `load_file(path)`: a solution's module from its file, for a name that cannot be imported
  (`01_batching.py`), in `sys.modules` only while its code runs, as dataclasses need.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType


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


class RowByRow:
    """A per-request model function answered from one batched call a step.

    A row asked for with no answer waiting makes a new step's one call, on `rows()` (the
    rows the solution holds now, read from it); each answer is then handed out once, to
    the row it belongs to. So a solution that asks for each of its rows once a step makes
    one model call a step; one that asks for a row twice makes another call (which the
    checker reports); one that asks for a row it does not hold is stopped."""

    def __init__(self, model: Callable[[list[list[int]]], list[int]], rows: Callable[[], list]):
        self.model, self.rows = model, rows
        self.answers: dict[tuple, deque] = {}  # prefix -> this step's answers not handed out yet

    def __call__(self, prefix) -> int:
        key = tuple(prefix)
        if not self.answers.get(key):  # a new step: one batched call on every row the solution holds
            batch = [list(row) for row in self.rows()]
            self.answers = defaultdict(deque)
            for row, token in zip(batch, self.model(batch)):
                self.answers[tuple(row)].append(token)
        if not self.answers.get(key):
            raise LookupError(
                f"row {list(prefix)} is not one of the rows the solution holds (row_by_row's rows): the model "
                "answers only those"
            )
        return self.answers[key].popleft()


def row_by_row(model: Callable, rows: Callable[[], list]) -> RowByRow:
    return RowByRow(model, rows)


_loaded = itertools.count(1)


def load_file(path: str | Path, relative_to: str | Path | None = None) -> ModuleType:
    """The module of a solution's file (`path`, relative to the folder of the file `relative_to`, if given), for a
    file name that is not a module name (`01_batching.py`), left out of `sys.modules` (so two files of one name
    never clash). While its code runs it is there, under a name of its own, as in the checker's worker: a
    dataclass looks its module up in `sys.modules`, and with `from __future__ import annotations` (string
    annotations) defining it fails without that entry."""
    file = Path(relative_to).resolve().parent / path if relative_to is not None else Path(path)
    name = "_adapted_" + re.sub(r"\W", "_", file.stem) + f"_{next(_loaded)}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"{file}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module
