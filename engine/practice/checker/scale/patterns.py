"""The catalogue of known slow patterns, and the hint for a SLOW axis.

Each pattern names what grows, a test on a line of code, the axes it slows, and the fix.
The hint comes from the solution's hottest lines at the largest size measured (`sampler.py`),
hottest first: the first line with at least `MIN_SHARE` of the samples that one of the patterns
slowing that axis matches (in the catalogue's order). Where no line matches, the report still
names the hottest lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MIN_SHARE = 0.05  # a line with fewer of the samples is not where the time went
FOR_CLAUSE = re.compile(r"\bfor\b.*?\bin\b")  # `for x in ...`: iteration, not a membership test
COPY_CALL = re.compile(r"\blist\(|\.copy\(\)|\[\*|\bcopy\.|\bdeepcopy\(|\+ \[|\btuple\(")


@dataclass(frozen=True)
class Pattern:
    name: str
    axes: tuple[str, ...]
    test: re.Pattern | _Test
    hint: str

    def matches(self, line: str) -> bool:
        return bool(self.test.search(line))


def _membership(line: str) -> bool:
    """An `in` that is a membership test on a line (not the `in` of a for clause or comprehension)."""
    return bool(re.search(r"\bin\b", FOR_CLAUSE.sub(" ", line)))


def _copies(line: str) -> bool:
    """A copy of a whole list on a line: `list(x)`, `x.copy()`, `[*x]`, `x + [t]`, or a slice open at
    its end from a start that is not counted from the end (`x[n:]`, `x[:]`; `x[-3:]` is a tail)."""
    if COPY_CALL.search(line):
        return True
    for end in re.finditer(r":\s*\]", line):
        depth, i = 0, end.start()
        while i > 0:
            i -= 1
            depth += {"]": 1, "[": -1}.get(line[i], 0)
            if depth < 0:
                break
        if not line[i + 1 : end.start()].strip().startswith("-"):
            return True
    return False


class _Test:
    def __init__(self, test: Callable[[str], bool]):
        self.test = test

    def search(self, line: str):
        return self.test(line) or None


CATALOGUE = (
    Pattern(
        "list.pop(0) queue",
        ("requests",),
        re.compile(r"\.pop\(\s*0\s*\)"),
        "list.pop(0) moves every element behind the head: use collections.deque and popleft()",
    ),
    Pattern(
        "scanning every request each step",
        ("requests",),
        re.compile(r"\bfor\b.*\bin\b.*\b(self\.)?\w*(request|req|all|submitted|jobs|queue|pending)\w*\b", re.I),
        "each step walks every request ever submitted to find the waiting ones: keep a queue of the waiting "
        "ones (collections.deque) and the running ones by slot",
    ),
    Pattern(
        "`in` on a list",
        ("requests", "batch size"),
        _Test(_membership),
        "`x in a_list` compares x with every element: keep the members in a set or a dict (O(1) a lookup)",
    ),
    Pattern(
        "searching the whole output for a stop sequence",
        ("answer length", "stop sequences"),
        re.compile(r"range\(\s*len\(|\.index\(|\.find\(|\bjoin\(|\bstr\(|\btuple\((self\.)?\w*(out|gen|token)", re.I),
        "each token searches the whole generated output: compare only the tail (the last len(stop) tokens), "
        "or advance a matcher one token at a time (an Aho-Corasick automaton)",
    ),
    Pattern(
        "copying every prefix each step",
        ("answer length",),
        _Test(_copies),
        "each step copies every row's whole prefix (or its whole output): hand the model the rows' own lists, "
        "append one token a step, and look only at the tail of the output",
    ),
    Pattern(
        "comparing the tail with every stop sequence",
        ("stop sequences",),
        re.compile(r"\bfor\b.*\bin\b.*stop|\bany\(.*stop|\bstop\w*\s*==|==\s*\w*stop", re.I),
        "each token is compared with every stop sequence: look the tail up in a set or dict of stop sequences "
        "by length, or advance an Aho-Corasick automaton (O(1) a token)",
    ),
)


def hint_for(axis: str, hot: list[dict]) -> tuple[str, str, dict] | None:
    """(pattern name, hint, the hot line it was found on) for a SLOW axis, or None."""
    patterns = [p for p in CATALOGUE if axis in p.axes]
    for line in hot:
        if line["share"] < MIN_SHARE:
            break
        for pattern in patterns:
            if pattern.matches(line["text"]):
                return pattern.name, pattern.hint, line
    return None
