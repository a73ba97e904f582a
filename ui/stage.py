"""The main view of one step: the slot grid, the waiting queue, the narration, the model's batch."""

from __future__ import annotations

import html

import streamlit as st

from engine.analysis.narration import names, narrate
from ui.batch_view import batch_figure, batch_view
from ui.grid import grid_figure
from ui.runs import Run


def narration_lines(run: Run, step: int) -> list[str]:
    captions = run.scenario.captions if run.scenario else {}
    if step in captions:
        return [captions[step]]
    return narrate(run.replay, step, run.log.vocabulary)


def render_stage(run: Run, step: int, presentation: bool) -> None:
    scale = 1.45 if presentation else 1.0
    state = run.replay[step]
    grid_column, side = st.columns([3, 1.25] if not presentation else [3, 1.6])
    with grid_column:
        st.plotly_chart(grid_figure(run.grid, step, scale), key="grid", config={"displayModeBar": False})
    with side:
        waiting = list(state.waiting)
        st.markdown(
            f"**Waiting queue at step {step}:** "
            + (names(waiting) if waiting else "empty")
            + (f" ({len(waiting)})" if len(waiting) > 1 else "")
        )
        size = "1.35rem" if presentation else "1rem"
        sentences = "".join(f"<li>{html.escape(s)}</li>" for s in narration_lines(run, step))
        st.markdown(
            f'<div class="narration" style="font-size:{size}"><b>Step {step}</b><ul>{sentences}</ul></div>',
            unsafe_allow_html=True,
        )
    render_batch(run, step, scale)


def render_batch(run: Run, step: int, scale: float) -> None:
    view = batch_view(run.replay, step)
    with st.expander("The batch as the model sees it at this step", expanded=True):
        st.caption(view.caption())
        if view.rows:
            figure = batch_figure(view, run.log.vocabulary, scale)
            st.plotly_chart(figure, key="batch", config={"displayModeBar": False})
