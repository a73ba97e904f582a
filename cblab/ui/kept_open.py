"""Boxes (expanders) that stay as the learner left them, open or closed, for the session.

NOTE: Streamlit forgets an element's state once a run does not draw it, and draws it anew from its
`expanded` argument: after Next lesson and Back, a box the learner never opened came back open (issue
33, item 10: "How real servers differ" on 7.6 pushed the page down 300 px). So each box's state is kept
in session state, keyed by the box, from its `on_change` (a click on a box reruns the page): the first
time a box is drawn in a session it takes `expanded`, and after that what the learner left.
"""

from __future__ import annotations

import streamlit as st

WAS_OPEN = "boxes_open"  # session state: a box's key -> whether the learner left it open


def kept_expander(label: str, key: str, expanded: bool, **options):
    """`st.expander(label, ...)`, open the first time as `expanded` says, then as the learner left it."""
    was_open = st.session_state.setdefault(WAS_OPEN, {})
    return st.expander(
        label, expanded=was_open.setdefault(key, expanded), key=key, on_change=_remember, args=(key,), **options
    )


def _remember(key: str) -> None:
    st.session_state.setdefault(WAS_OPEN, {})[key] = bool(st.session_state.get(key))
