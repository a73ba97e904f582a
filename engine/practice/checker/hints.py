"""The hint for a wrong output: the classic mistake that fits the evidence, in plain words.

A hint is given only when the evidence fits one mistake, and it says what happened to this
request, not a list of guesses. Where a mistake would show on every request of the case
(`max_tokens` counting the prompt, a token counter per slot that is never reset), the hint
is given only if it explains every request delivered on its budget. The stop-sequence
mistakes are told apart by what the early or missed match needed (`stop_hints.py`). When
two mistakes explain a case equally well, the hint names both.
"""

from __future__ import annotations

from ...core.request import FinishReason
from .cases import Case
from .rows import finish_reason, previous_holders
from .stop_hints import early_stop_hint, missed_stop_hint
from .trace import FILLER, Trace

ADAPTERS = "docs/adapters.md"
COUNTS_PROMPT = "max_tokens seems to count the prompt; it counts generated tokens only"
ZERO_BUDGET = (
    "max_tokens = 0: this project completes such a request at once with its prompt (the seeds leave this open; "
    "docs/conventions.md); your engine generated a token before checking the budget"
)


class OutputHints:
    """Hints for the requests of one case whose outputs are wrong; `have` and `want` map each request
    to what its callback received and what the reference delivered."""

    def __init__(self, case: Case, got: Trace, have: dict[int, list], want: dict[int, list]):
        self.case, self.got, self.have, self.want = case, got, have, want
        self.previous = previous_holders(case, got)

    def generated(self, i: int, tokens: list) -> list:
        return tokens[len(self.case.requests[i].prompt) :]

    def for_request(self, i: int) -> str:
        request, have, want = self.case.requests[i], self.have[i], self.want[i]
        prompt, generated, expected = list(request.prompt), self.generated(i, have), self.generated(i, want)
        if have[: len(prompt)] != prompt:
            if have == expected:
                return (
                    f"r{i} received only its generated tokens; the callback gets prompt + generated tokens. If your "
                    f"engine returns generated tokens only by design, check it through an adapter ({ADAPTERS})"
                )
            return ""
        if request.max_tokens == 0 and generated:
            return ZERO_BUDGET
        if (
            self.case.stop_token is not None
            and want[-1] == self.case.stop_token
            and have == want[:-1]
            and self._sent(have)
        ):
            return "the stop token was trimmed; the contract delivers it inside the output (5, 5, 0 -> [..., 5, 5, 0])"
        if len(generated) < len(expected) and generated == expected[: len(generated)]:
            counts_prompt = self._budgets_fit(lambda j: len(self.case.requests[j].prompt))
            fits = [COUNTS_PROMPT] if counts_prompt else []
            fits += [h for h in (early_stop_hint(self, i, generated), self._slot_counter(i, generated)) if h]
            if len(fits) > 1:
                return "two mistakes fit this case: " + " ".join(f"({n}) {fit}." for n, fit in enumerate(fits, 1))
            return fits[0] if fits else self._ended(i, generated)
        if len(generated) > len(expected) and generated[: len(expected)] == expected:
            return self._went_on(i, want, expected)
        return self._crossed(i, generated, expected)

    def _sent(self, row: list) -> bool:
        """Whether the solution sent this row to the model (so it did get the token after it)."""
        return any(row in self.got.rows(n) for n in range(len(self.got.calls)))

    def _crossed(self, i: int, generated: list, expected: list) -> str:
        """The first wrong token is another request's, or the filler of a row past its script."""
        request = self.case.requests[i]
        k = next((k for k, token in enumerate(generated) if k >= len(expected) or token != expected[k]), None)
        if k is None or k >= len(expected) or request.script is None:
            return ""
        token = generated[k]
        meant = [j for j, other in self.want.items() if j != i and token in self.generated(j, other)]
        if meant:
            source = f"a token meant for r{meant[0]}"
        elif token == FILLER:
            source = f"the recording model's answer ({FILLER}) to a row past the end of its script, not r{i}'s"
        else:
            return ""
        return (
            f"r{i} got {token}, {source}: results were crossed "
            "(check how the model's answers map back to rows after a refill)"
        )

    def _budgets_fit(self, used_before) -> bool:
        """Whether every request that generated its whole budget in the reference got exactly
        max(max_tokens - used_before(j), 1) tokens, and one got fewer: a count that starts above zero explains them."""
        short = False
        for j, want in self.want.items():
            request = self.case.requests[j]
            if j not in self.have or request.max_tokens == 0 or len(self.generated(j, want)) != request.max_tokens:
                continue
            got = len(self.generated(j, self.have[j]))
            if got != max(request.max_tokens - used_before(j), 1):
                return False
            short = short or got < request.max_tokens
        return short

    def _slot_counter(self, i: int, generated: list) -> str:
        """A count of generated tokens kept per slot and never reset: each request starts from the count
        its slot's previous holders left."""
        counted: dict[int, int] = {}

        def used_before(j: int) -> int:
            if j not in counted:
                p = self.previous.get(j)
                counted[j] = 0 if p is None else used_before(p) + len(self.generated(p, self.have.get(p, [])))
            return counted[j]

        if not self._budgets_fit(used_before) or not used_before(i):
            return ""
        p, budget = self.previous[i], self.case.requests[i].max_tokens
        return (
            f"r{i} stopped after {len(generated)} of its max_tokens = {budget} tokens, as if the {used_before(i)} "
            f"generated before it in its slot (last by r{p}) were its own: is the count of generated tokens kept per "
            "slot and not reset when the slot is refilled? Keep it on the request"
        )

    def _ended(self, i: int, generated: list) -> str:
        """What is known of a row that stopped early for no reason the other hints see."""
        request, tokens = self.case.requests[i], self.have[i]
        if finish_reason(self.case, i, tokens) is not FinishReason.MAX_TOKENS:
            return ""
        return (
            f"r{i} ended after {len(generated)} of its max_tokens = {request.max_tokens} tokens, and its output ends "
            "with no stop token and none of its stop sequences: what ended it?"
        )

    def _went_on(self, i: int, want: list, expected: list) -> str:
        reason = finish_reason(self.case, i, want)
        if reason is FinishReason.STOP_TOKEN:
            return (
                f"r{i} generated the stop token {self.case.stop_token} as its token {len(expected)} and went on: "
                "end a row as soon as it generates the stop token"
            )
        if reason is FinishReason.STOP_SEQUENCE:
            return missed_stop_hint(self, i, want, expected)
        budget = self.case.requests[i].max_tokens
        return (
            f"r{i} generated more than its max_tokens = {budget} tokens: stop when the generated tokens (never the "
            "prompt) reach max_tokens"
        )
