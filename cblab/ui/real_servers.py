"""The "How real servers differ" box under a lesson: the scenario's `[[real_servers]]`
callouts (engine/lab/real_servers.py), each with a link to its source."""

from __future__ import annotations

from urllib.parse import urlsplit

import streamlit as st

from engine.lab.real_servers import Callout
from engine.lab.scenario import Scenario

HEADING = "How real servers differ"
WAS_OPEN = "real_servers_open"  # session state: the box's key -> whether the learner left it open


def callout_markdown(callout: Callout) -> str:
    """The callout's text, then its source as a link named by the site (`docs.vllm.ai`)."""
    return f"{callout.text}\n\nSource: [{urlsplit(callout.source).hostname}]({callout.source})"


def render_callouts(scenario: Scenario, expanded: bool = True) -> None:
    """Draw the box when the scenario has callouts; nothing when it has none. The first time a lesson
    draws it in a session it is open unless `expanded` is False; after that it is as the learner left
    it, open or closed, even after leaving the lesson and coming back (Next lesson, then Back).

    NOTE: Streamlit forgets a widget's state once a run does not draw it, and draws it anew from
    `expanded`, which is True once the lesson's predictions are checked: a box never opened came back
    open. So the state is kept per lesson in session state (`WAS_OPEN`), taken from the box's
    `on_change` (a click on the box reruns the page)."""
    if not scenario.real_servers:
        return
    key = f"real_servers:{scenario.title}"
    was_open = st.session_state.setdefault(WAS_OPEN, {})
    shown = st.expander(
        HEADING,
        expanded=was_open.setdefault(key, expanded),
        icon=":material/dns:",
        key=key,
        on_change=_remember,
        args=(key,),
    )
    with shown:
        for callout in scenario.real_servers:
            st.info(callout_markdown(callout))


def _remember(key: str) -> None:
    st.session_state[WAS_OPEN][key] = bool(st.session_state.get(key))
