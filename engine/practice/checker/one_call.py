"""One batched model call a step: a solution that calls the model once per row is named as such.

The solution's steps are invisible, so its calls are matched against the reference's steps:
consecutive calls whose rows together are exactly the rows of one reference step (and
never more) make up that step. A step made of several calls is the fault when it is the
first step (every row is new: an engine that batches sends them all at once), or when two
of its calls follow each other with no callback between: later, calls parted by a
callback may be steps of their own (a static batch that refills only once its rows are
delivered makes such calls). Such a
solution's calls are not its steps, so the step-counting checks (`on_time`,
`work_conserving`) would blame it for what it does not do: `evaluate` drops them.
"""

from __future__ import annotations

from collections import Counter

from .trace import Trace

HINT = (
    "make one model call a step with every active row (the batch), then append one token to each row: "
    "that is what batching buys"
)


def split_steps(got: Trace, expected: Trace) -> list[tuple[int, range]]:
    """(reference step, the solution's calls that make it up), as far as the calls match the reference's steps."""
    steps, call = [], 0
    for step in range(len(expected.calls)):
        want, have, start = Counter(map(tuple, expected.rows(step))), Counter(), call
        while have != want and call < len(got.calls):
            rows = Counter(map(tuple, got.rows(call)))
            if rows - (want - have):  # a row this step does not have: the calls no longer match
                return steps
            have, call = have + rows, call + 1
        if have != want:
            return steps
        steps.append((step, range(start, call)))
    return steps


def one_call_findings(got: Trace, expected: Trace) -> list[tuple[str, str]]:
    """(message, hint) for the first reference step the solution made with several model calls."""
    delivered_before = {before for _, _, before in got.callbacks}
    for step, calls in split_steps(got, expected):
        if len(calls) < 2 or step and all(n in delivered_before for n in calls[1:]):
            continue
        sizes = [len(got.rows(n)) for n in calls]
        how = "once per row" if set(sizes) == {1} else f"{len(calls)} times ({', '.join(map(str, sizes))} rows)"
        return [
            (
                f"the model was called {how}: {len(calls)} calls in step {step}, where one batched call was expected",
                HINT,
            )
        ]
    return []
