"""The page component: the browser's side of the whole page, with nothing to see.

It keeps the browser history to one entry per lesson, so Back returns to the previous
lesson (a step, a tab or a speed replaces the entry), and it keeps the learner's checked
predictions in the browser's localStorage, never on the server, so a reload or the next
visit keeps every chapter's score. Its JavaScript ships in `cblab/ui/frame/page_component/` (a package
asset: `cblab/ui/components.py`).

It also says when a browser's first page has painted its stage. Until then the sidebar's widgets
(the lesson menu, the settings) are left out: each kind of widget is its own code for the browser
to fetch, compile and draw, and on a landing those came before the stage (1.1 painted 0.2-0.4 s
sooner without them: docs/performance.md). The first run gives the sidebar an empty place; the
page component reports the stage's first paint (or, on a page with no stage, its own mount), and
that run and every later one of the session draw the sidebar whole. A session with no browser
(Streamlit's AppTest, which has no page URL) draws it at once.
"""

from __future__ import annotations

import functools
import secrets

import streamlit as st

from cblab.ui.components import PackagedComponent
from cblab.ui.course.course import course, kept_scores, restore_scores

PAGE = PackagedComponent("page", js="page.js")
RESTORED = "scores_restored"  # session state: the browser's kept predictions were taken (or there were none)
PAINTED = "page_painted"  # session state: the browser reported its first paint; the sidebar is drawn from then on


def sidebar_waits() -> bool:
    """Whether this run leaves the sidebar's widgets out: a browser's first page, until it reports its paint."""
    return st.context.url is not None and not st.session_state.get(PAINTED, False)


def render_page(waits: bool, stage: bool) -> None:
    """Mount the page component (once per run, anywhere on the page: the app mounts it at the end of the
    sidebar, once the run knows whether it drew a `stage`). While the sidebar `waits`, it reports the page's
    first paint: the stage's, or at once if there is no `stage`. Everything it sends is settled before the
    script runs: checks are recorded by their buttons' callbacks."""
    session = st.session_state.setdefault("page_session", secrets.token_hex(8))
    PAGE(
        key="page",
        data={
            "session": session,
            "restored": st.session_state.get(RESTORED, False),
            "scores": kept_scores(),
            "aliases": lesson_aliases(),
            "home": course().lessons[0].name,  # the lesson of a URL that names none
            "report": ("stage" if stage else "now") if waits else None,  # when the first paint is reported
        },
        default={"saved": None},
        on_saved_change=_take_saved,
        on_painted_change=_painted,
    )


def _painted() -> None:
    st.session_state[PAINTED] = True


@functools.cache
def lesson_aliases() -> dict[str, str]:
    """Each lesson's number -> its name: a URL may name a lesson either way."""
    return {lesson.number: lesson.name for lesson in course().lessons}


def _take_saved() -> None:
    state = st.session_state.get("page")
    restore_scores(state.get("saved") if isinstance(state, dict) else getattr(state, "saved", None))
    st.session_state[RESTORED] = True
