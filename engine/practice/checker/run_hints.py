"""The hint for a case that did not run to the end: what the request it failed on has to do with it.

Today's one classic mistake here is `max_tokens = 0`, which the seeds leave open: an
engine that refuses it, one that generates for it and never stops (a budget check made
only after a token is appended, `generated == max_tokens`), one that waits for it forever.
"""

from __future__ import annotations

from .cases import Case
from .hints import ADAPTERS
from .rows import appearances
from .stuck import culprit
from .trace import Trace

AT_ONCE = "Complete such a request at once with its prompt (docs/conventions.md)"


def runs_hint(case: Case, got: Trace) -> str:
    i = culprit(case, got)
    if i is None or case.requests[i].max_tokens != 0:
        return ""
    if got.failed_at == f"submit_request r{i}":
        return (
            f"submit_request refused r{i}, whose max_tokens is 0. The seeds leave max_tokens = 0 open; this project "
            "completes such a request at once with its prompt (docs/conventions.md). If your engine refuses it by "
            f"design, its adapter can say so, and the checker then skips such cases ({ADAPTERS})"
        )
    first, _ = appearances(case, got)
    if not got.timeout:
        return f"r{i} has max_tokens = 0 and was not delivered when the run failed. {AT_ONCE}"
    if i in first:
        return (
            f"r{i} has max_tokens = 0, yet it was sent to the model and nothing ended it: a budget check made only "
            f"after a token is appended (generated == max_tokens) never holds for 0. {AT_ONCE}"
        )
    return (
        f"r{i} has max_tokens = 0; it never reached the model and its callback never fired, so run() waited for a "
        f"result that never came. {AT_ONCE}"
    )
