"""The "How real servers differ" box under a lesson: the scenario's `[[real_servers]]`
callouts (engine/lab/real_servers.py), each with a link to its source."""

from __future__ import annotations

from urllib.parse import urlsplit

import streamlit as st

from cblab.ui.kept_open import kept_expander
from engine.lab.real_servers import Callout
from engine.lab.scenario import Scenario

HEADING = "How real servers differ"


def callout_markdown(callout: Callout) -> str:
    """The callout's text, then its source as a link named by the site (`docs.vllm.ai`)."""
    return f"{callout.text}\n\nSource: [{urlsplit(callout.source).hostname}]({callout.source})"


def render_callouts(scenario: Scenario, expanded: bool = True) -> None:
    """Draw the box when the scenario has callouts; nothing when it has none. The first time a lesson
    draws it in a session it is open unless `expanded` is False; after that it is as the learner left
    it, open or closed, even after leaving the lesson and coming back (`kept_open.py`)."""
    if not scenario.real_servers:
        return
    with kept_expander(HEADING, f"real_servers:{scenario.title}", expanded, icon=":material/dns:"):
        for callout in scenario.real_servers:
            st.info(callout_markdown(callout))
