"""One request of a scenario, written in its TOML or drawn by a generated workload.

The engine's own records stay apart on purpose: `Request` is the seeds' public
`generate()` input, `Sequence` a request's running state inside the engine, and
`RequestInfo` what the event log keeps of it. A scenario's request also says when it
arrives, when it is cancelled, whether it streams and (scripted model) what it generates.
The checker's `CaseRequest` is apart too: it is sent to a user's code in a subprocess and
validated against much tighter bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.block_prompt import BlockPrompt


@dataclass(frozen=True)
class RequestSpec:
    """A request as a scenario or workload describes it, before any engine exists: it may
    leave its id to the engine and carries its arrival step and cancellation cue."""

    request_id: str | None  # None: the engine names it (r0, r1, ...)
    prompt: list[int] | BlockPrompt  # a trace's request: its hash-id blocks (engine/core/block_prompt.py)
    max_tokens: int
    stop_sequences: list[list[int]] | None = None
    arrival_step: int | None = None
    cancel_step: int | None = None  # cancelled before this step runs
    stream: bool = False  # attach an on_token callback
    script: list[int] | None = None  # scripted model: the continuation
    answer_len: int | None = None  # the answer's length: the model's stop token is generated token number answer_len
    answer_id_at: int = 0  # where the answer model's 2-token id sits in the prompt: after a system prompt, its length
    priority: int = 0  # admission order among arrived requests: lower first (vLLM's priority scheduling)
    arrival_ms: int | None = None  # a trace's request: its arrival time (engine/lab/trace_replay.py finds its step)
