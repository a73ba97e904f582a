"""What some lessons show beside the stage, under their text: how real servers differ, and
the lessons whose point is not one run (a batch-size sweep, replicas behind a router, the
running-table invariant checked on the correct engine and on the crossed-results bug, this
machine's speed measurements, a whole trace's cache curve).

Each view is drawn only for a scenario that asks for it (`[[real_servers]]`, `[sweep]`,
`[replicas]`; the invariant for its own lesson), in an expander that a projector's screen,
and a lesson whose predictions are still open, start closed; while a prediction is open the
views of the whole run are not drawn (they would cost every rerun).
"""

from __future__ import annotations

import streamlit as st

from cblab.ui.charts.replicas_view import render_replicas
from cblab.ui.charts.sweep_view import render_sweep
from cblab.ui.course.cache_curve_view import render_cache_curve
from cblab.ui.course.invariant_view import render_invariant
from cblab.ui.course.measured_view import render_measured, render_measurement_notice
from cblab.ui.course.real_servers import render_callouts
from cblab.ui.kept_open import kept_expander
from engine.lab.scenario import Scenario

INVARIANT_LESSON = "running-equals-active-slots"
MEASURED_LESSON = "will-it-run-in-time"
CACHE_CURVE_LESSON = "traffic-kimi-cache"


def render_lesson_extras(scenario: Scenario, lesson: str | None, projector: bool, predicting: bool = False) -> None:
    """The views `scenario` asks for; `lesson` is its built-in name (None: an uploaded file). While a
    prediction is open (`predicting`) the views, which show the whole run, start closed and say so."""
    render_callouts(scenario, expanded=not projector and not predicting)  # (open, it pushed the first prediction
    # below the fold of a 1,400 x 900 screen)
    if lesson == MEASURED_LESSON:
        render_measurement_notice()
    if lesson == CACHE_CURVE_LESSON:
        render_measurement_notice(("cache_share",))
    views = [
        (scenario.sweep is not None, "Throughput and latency against the batch size", render_sweep),
        (scenario.replicas is not None, "Replicas behind a router: the autoscaling signal", render_replicas),
        (lesson == INVARIANT_LESSON, "The running table, checked at every step", render_invariant),
        (lesson == MEASURED_LESSON, "This machine's measurements: ns a token, and minutes", render_measured),
        (lesson == CACHE_CURVE_LESSON, "The whole hour: hit rate against the cache's size", render_cache_curve),
    ]
    for wanted, title, render in views:
        if wanted:
            if predicting:
                st.caption(f"{title}: the whole run, answers included. Open it after predicting.")
            # keyed, with a label that never changes: the expander stays the same one when the predictions
            # are done (a new label made a new expander, which ignored its first click). While a prediction
            # is open its view (a chart and a table made from several runs) is not drawn at all.
            # and each stays as the learner left it after Next lesson and Back (kept_open.py).
            expanded = not projector and not predicting
            with kept_expander(title, f"extra_{render.__name__}:{scenario.title}", expanded):
                if predicting:
                    st.caption("Check this lesson's predictions first: this view shows the whole run.")
                else:
                    render(scenario)
