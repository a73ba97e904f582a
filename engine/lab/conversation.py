"""Prefixes that requests share, as on a real server: one system prompt, and multi-turn chats.

`[workload.system_prompt]`: `len` tokens, drawn once, come first in the prompts of a `share`
of the conversations: `round(share × count)` of them (halves up), which ones drawn. With
`output.max_tokens` its first two tokens are an answer id that no request has
(`answer_id(count)`), so the answer model tells a prompt with it from one without it by
their first two tokens (engine/lab/answer_model.py).

`[workload.chat]`: each of the `count` conversations is `turns` requests. Turn 1 is the
request the workload draws without a chat; turn k+1's prompt is turn k's prompt, then turn
k's answer, its stop token included (a chat template keeps an assistant message's
end-of-turn token, as ChatML's `<|im_end|>`), then a new question of `question_len`
tokens. So turn k's whole sequence is the start of turn k+1's prompt, and every block turn
k filled can be a prefix-cache hit. The answer is the model's own (`answer_model.answer`),
which is why a chat needs `output.max_tokens`. Turn k+1 arrives `gap` steps after turn k
arrived: arrivals are drawn in advance, so a turn does not wait for the one before. If turn
k is still running (a short gap, a long answer, a long queue), turn k+1 hits only the
blocks turn k has filled so far, and a real client would not have sent it yet.

Requests are in conversation order: conversation c's turns are requests c·turns up to
c·turns + turns − 1 (with 3 turns, r0, r1, r2 are conversation 0). Each draw has its own
seeded generator (`"{seed}/system"`, `"{seed}/chat"` for the later turns' answer lengths,
`"{seed}/questions"`), so the workload's own draws are those it makes without these keys.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from .answer_model import answer_id


@dataclass(frozen=True)
class SystemPrompt:
    length: int  # tokens (TOML `len`), drawn once
    share: float = 1.0  # the share of the conversations whose prompts start with it, 0..1

    def members(self, count: int) -> int:
        """How many of `count` conversations start with it."""
        return int(self.share * count + 0.5) if self.length else 0


@dataclass(frozen=True)
class Chat:
    turns: int  # requests per conversation
    gap: int  # steps from one turn's arrival to the next turn's
    question_len: tuple[int, int] = (16, 16)  # tokens of a later turn's new question: [min, max]


def system_prompt(seed: int, count: int, config: SystemPrompt | None, vocab_size: int, with_id: bool):
    """(The conversations whose prompts start with the system prompt, its tokens)."""
    if config is None or not config.length:
        return set(), []
    rng = random.Random(f"{seed}/system")
    members = set(rng.sample(range(count), config.members(count)))
    tokens = [rng.randrange(1, vocab_size) for _ in range(config.length)]
    if with_id:
        tokens[:2] = answer_id(count, vocab_size)
    return members, tokens


def questions(seed: int, chat: Chat, vocab_size: int) -> Iterator[list[int]]:
    """The later turns' new questions, in request order."""
    rng = random.Random(f"{seed}/questions")
    low, high = chat.question_len
    while True:
        yield [rng.randrange(1, vocab_size) for _ in range(rng.randint(low, high))]


def turns_in_order(firsts: list[int], later: list[int], arrivals: list[int], chat: Chat):
    """(Answer lengths, arrival steps) in request order, from the first turns' and the later turns' lengths."""
    more = chat.turns - 1
    lengths, steps = [], []
    for c, (first, arrives) in enumerate(zip(firsts, arrivals)):
        lengths += [first, *later[c * more : (c + 1) * more]]
        steps += [arrives + turn * chat.gap for turn in range(chat.turns)]
    return lengths, steps


def longest_prompts(own: int, system: int, chat: Chat | None, lengths: list[int], max_tokens: int | None) -> list[int]:
    """Each request's longest possible prompt, in request order: the system prompt, the own prompt's
    longest and, for a later turn, each earlier turn's answer (its drawn length, at most `max_tokens`)
    and longest question. Cheap: it needs the answer lengths only."""
    if chat is None:
        return [system + own] * len(lengths)
    bounds = []
    for first in range(0, len(lengths), chat.turns):
        bound = system + own
        for turn in range(chat.turns):
            if turn:
                bound += min(lengths[first + turn - 1], max_tokens) + chat.question_len[1]
            bounds.append(bound)
    return bounds
