"""A scenario's `[[real_servers]]` tables: where this lab's convention differs from a real
server (vLLM, the OpenAI API), each with the source that says so.

The app shows them under the lesson as "How real servers differ"; `--narrate` prints them.
Each table is checked like every other field (errors name `real_servers[1].source`):

    [[real_servers]]
    text = "vLLM leaves stop strings out of the output unless include_stop_str_in_output."
    source = "https://docs.vllm.ai/en/latest/api/vllm/sampling_params.html"
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .toml_reader import Table

MAX_CALLOUTS = 10  # [[real_servers]] tables in one scenario
MAX_TEXT = 2_000  # characters of one callout's text
URL = re.compile(r"https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~:/?#@!$&'*+,;=%-]*)?")  # no spaces, quotes or brackets


@dataclass(frozen=True)
class Callout:
    text: str  # what a real server does differently (Markdown)
    source: str  # an https:// address that says so


def parse_callouts(top: Table) -> tuple[Callout, ...]:
    """The scenario's `[[real_servers]]` tables, checked; () when it has none."""
    callouts = []
    for t in top.tables("real_servers", MAX_CALLOUTS):
        text, source = t.str("text").strip(), t.str("source")
        if not text or len(text) > MAX_TEXT:
            raise t.fail("text", f"must be 1 to {MAX_TEXT:,} characters", text)
        if len(source) > MAX_TEXT or not URL.fullmatch(source):
            raise t.fail("source", "must be an https:// address without spaces, quotes or brackets", source)
        t.check_no_unknown_keys()
        callouts.append(Callout(text, source))
    return tuple(callouts)
