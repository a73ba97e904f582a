"""The "How real servers differ" box under a lesson: the scenario's `[[real_servers]]`
callouts (engine/lab/real_servers.py), each with a link to its source."""

from __future__ import annotations

from urllib.parse import urlsplit

import streamlit as st

from engine.lab.real_servers import Callout
from engine.lab.scenario import Scenario

HEADING = "How real servers differ"


def callout_markdown(callout: Callout) -> str:
    """The callout's text, then its source as a link named by the site (`docs.vllm.ai`)."""
    return f"{callout.text}\n\nSource: [{urlsplit(callout.source).hostname}]({callout.source})"


def render_callouts(scenario: Scenario, expanded: bool = True) -> None:
    """Draw the box (open unless `expanded` is False) when the scenario has callouts; nothing when it has none.
    Keyed by the lesson: once drawn, it stays as the learner left it (open or closed) in this session."""
    if not scenario.real_servers:
        return
    with st.expander(HEADING, expanded=expanded, icon=":material/dns:", key=f"real_servers:{scenario.title}"):
        for callout in scenario.real_servers:
            st.info(callout_markdown(callout))
