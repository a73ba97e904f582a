"""The lesson above the stage: its heading and Next lesson, the chapter's intro, the text, the
requests it runs (or, for a published trace, where the data comes from), what some lessons show
beside it, its predictions and, once they are checked, what happened.

The text describes the lesson's own settings. When the sidebar changes the run, a note above
it says which settings differ and offers the lesson's own back, since the stage then shows
another run than the one the text, captions and predictions were written for; the lesson's
checked verdict and reveal stay, marked as its settings, beside both runs' figures
(`cblab/ui/course/kept_reveal.py`), since a lesson may ask for the change.
"""

from __future__ import annotations

import streamlit as st

from cblab.ui.controls.controls import next_lesson_ui, own_overrides, reset_to_own_settings
from cblab.ui.controls.settings import changed_settings
from cblab.ui.course.course import course, lesson_label, render_checked, render_predictions, render_reveal
from cblab.ui.course.kept_reveal import figures_beside, kept_heading, settings_said
from cblab.ui.frame.lesson_extras import render_lesson_extras
from cblab.ui.frame.prefetch import after_lesson
from cblab.ui.runs.runs import Run, load
from engine.lab.scenario import Scenario
from engine.lab.trace_sources import attribution

MAX_TABLE_REQUESTS = 40  # a lesson's requests shown as a table (a generated workload is described instead)


def render_lesson(
    run: Run, name: str, scenario: Scenario | None, uploaded: bool, heading: tuple, switches: list | None
) -> int | None:
    """Draw the lesson of `run` (`scenario` as written, before the sidebar's changes); `heading` is
    the places of its title and its Next lesson button; `switches`, in presentation mode, the row
    of switches kept on screen (the last takes "Predict first"). Return the first step a
    prediction still hides."""
    shown, projector = run.scenario, switches is not None
    title, onward = heading
    title.subheader(shown.title if uploaded else lesson_label(name))
    if not uploaded:
        next_lesson_ui(name, onward)
        intro = course().chapter_of(name).intro
        if intro and not projector:
            st.info(intro)
    own = scenario if scenario is not None else shown
    _render_changed_settings(own)
    text, told = st.columns(2) if projector else (st.container(), st.container())
    if projector:  # one click away, so the grid still fits a projector's screen
        with text.expander("The lesson", key="lesson_text"):
            _render_text(own)
        _render_attribution(own)  # (outside the expander: the trace is on screen, so is its credit)
    else:
        with text:
            _render_text(own)
            _render_attribution(own)
    extras = st.container()  # filled below, once it is known whether a prediction is open
    cap = None
    if shown.quizzes:
        (switches[-1] if projector else st).toggle("Predict first", key="predict", value=True, bind="query-params")
        cap = render_predictions(run, name if not uploaded else f"upload_{run.digest[:8]}", projector)
    elif (own.quizzes or own.reveal) and not uploaded:  # the sidebar changed the run: the lesson's is elsewhere
        _render_kept_reveal(run, own, name, told, projector)
    elif own.quizzes:
        st.caption("This lesson's predictions are for its own settings: pick the lesson again to answer them.")
    if shown.reveal:
        with told:
            render_reveal(shown.reveal, cap, projector=projector)
    with extras:
        render_lesson_extras(shown, None if uploaded else name, projector=projector, predicting=cap is not None)
    if not uploaded:
        after_lesson(name)  # the class's Next lesson is made while it reads this one
    return cap


def _render_kept_reveal(run: Run, own: Scenario, name: str, told, projector: bool) -> None:
    """The sidebar changed lesson `name`'s run: the verdict last checked and, once no prediction is
    open, the lesson's reveal marked as its settings, beside both runs' figures (`cblab/ui/course/kept_reveal.py`)."""
    own_run = load(name, None, own_overrides(own))  # (the run the lesson opened with: in the caches)
    if not render_checked(own_run, name, projector):
        st.caption("This lesson's predictions are for its own settings: press “Lesson's settings” to answer them.")
        return
    if not own.reveal:
        return
    changed = changed_settings(own)
    headings = (f"lesson's settings ({settings_said(changed, 1)})", f"yours ({settings_said(changed, 2)})")
    pool = own_run.log.config.kv_blocks is not None or run.log.config.kv_blocks is not None
    cache = own_run.log.config.prefix_caching or run.log.config.prefix_caching
    with told:
        render_reveal(own.reveal, None, projector=projector, heading=kept_heading(changed))
        st.markdown(markdown_table(figures_beside(own_run.summary, run.summary, pool, cache, headings)))


def _render_text(scenario: Scenario) -> None:
    st.write(scenario.lesson)
    table = requests_table(scenario)
    if table is not None:
        stop = scenario.engine.stop_token
        st.caption(f"The requests (stop token: {'none' if stop is None else stop}, for every request)")
        st.markdown(markdown_table(table))


def _render_attribution(scenario: Scenario) -> None:
    """A published trace's source, licence and paper, under the lesson that replays it (engine/lab/trace_sources.py)."""
    said = attribution(scenario.trace, markdown=True)
    if said:
        st.caption(said)


PLAIN = {"stop sequences": "–", "arrives at step": 0, "cancelled before step": "–", "priority": 0}  # left out when so


def requests_table(scenario: Scenario) -> list[dict[str, object]] | None:
    """The lesson's own requests, one row each (its first column, "request", is the id): what a
    prediction may need (prompt, max_tokens, stops, arrival, priority), a column left out where
    every row has its plain value. None for a generated workload, or more than a table's worth.
    (Plain rows, not a DataFrame: drawn as markdown, the table costs a rerun no pandas and the
    browser no table code.)"""
    if not scenario.explicit_requests or len(scenario.explicit_requests) > MAX_TABLE_REQUESTS:
        return None
    rows = [
        {
            "request": r.request_id or f"r{i}",
            "prompt": prompt_text(r.prompt),
            "max_tokens": r.max_tokens,
            "stop sequences": "; ".join(str(s) for s in r.stop_sequences or []) or "–",
            "arrives at step": r.arrival_step or 0,
            "cancelled before step": "–" if r.cancel_step is None else r.cancel_step,
            "priority": r.priority,
        }
        for i, r in enumerate(scenario.explicit_requests)
    ]
    shown = [c for c in rows[0] if c not in PLAIN or any(row[c] != PLAIN[c] for row in rows)]
    return [{c: row[c] for c in shown} for row in rows]


SHOWN_WHOLE = 32  # a longer prompt shows its first tokens and its length (a 4,000-token prompt filled a screen)


def prompt_text(prompt: list[int]) -> str:
    if len(prompt) <= SHOWN_WHOLE:
        return str(list(prompt))
    return f"[{', '.join(map(str, prompt[:8]))}, …] ({len(prompt):,} tokens)"


def markdown_table(rows: list[dict[str, object]]) -> str:
    """`rows` as a markdown table, its cells escaped (a prompt may hold `|` or `*`)."""

    def cell(value: object) -> str:
        text = str(value).replace("\\", "\\\\")
        for mark in "|*_`[]<>#~":
            text = text.replace(mark, "\\" + mark)
        return text

    columns = list(rows[0])
    lines = [" | ".join(map(cell, columns)), " | ".join("---" for _ in columns)]
    lines += [" | ".join(cell(row[c]) for c in columns) for row in rows]
    return "\n".join(f"| {line} |" for line in lines)


def _render_changed_settings(scenario: Scenario) -> None:
    changed = changed_settings(scenario)
    if not changed:
        return
    said = "; ".join(f"{label}: {own} → {yours}" for label, own, yours in changed)
    note, back = st.columns([3, 1], vertical_alignment="center")
    note.warning(
        f"You changed this lesson's settings ({said}). The text, captions and predictions below describe the "
        "lesson's own settings; the stage shows your run.",
        icon=":material/tune:",
    )
    back.button(
        "Lesson's settings",  # (short enough for its column at 1,400 px, where the longer label was cut)
        key="own_settings",
        help="Back to the lesson's own settings",
        on_click=reset_to_own_settings,
        width="stretch",
    )
