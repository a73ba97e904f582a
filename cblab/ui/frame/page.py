"""The page component: the browser's side of the whole page, with nothing to see.

It keeps the browser history to one entry per lesson, so Back returns to the previous
lesson (a step, a tab or a speed replaces the entry), and it keeps the learner's checked
predictions in the browser's localStorage, never on the server, so a reload or the next
visit keeps every chapter's score. Its JavaScript ships in `cblab/ui/frame/page_component/` (a package
asset: `cblab/ui/components.py`).
"""

from __future__ import annotations

import functools
import secrets

import streamlit as st

from cblab.ui.components import PackagedComponent
from cblab.ui.course.course import course, kept_scores, restore_scores

PAGE = PackagedComponent("page", js="page.js")
RESTORED = "scores_restored"  # session state: the browser's kept predictions were taken (or there were none)


def render_page() -> None:
    """Mount the page component (once per run, anywhere on the page: the app mounts it at the end of the
    sidebar, which the browser draws first, so it asks for Streamlit's component code before the stage does).
    Everything it sends is settled before the script runs: checks are recorded by their buttons' callbacks."""
    session = st.session_state.setdefault("page_session", secrets.token_hex(8))
    PAGE(
        key="page",
        data={
            "session": session,
            "restored": st.session_state.get(RESTORED, False),
            "scores": kept_scores(),
            "aliases": lesson_aliases(),
            "home": course().lessons[0].name,  # the lesson of a URL that names none
        },
        default={"saved": None},
        on_saved_change=_take_saved,
    )


@functools.cache
def lesson_aliases() -> dict[str, str]:
    """Each lesson's number -> its name: a URL may name a lesson either way."""
    return {lesson.number: lesson.name for lesson in course().lessons}


def _take_saved() -> None:
    state = st.session_state.get("page")
    restore_scores(state.get("saved") if isinstance(state, dict) else getattr(state, "saved", None))
    st.session_state[RESTORED] = True
