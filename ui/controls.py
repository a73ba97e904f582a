"""Sidebar controls: `*_ui()` functions that draw widgets and return plain values.

Widgets read their values from session state, seeded from the scenario's own settings
and, on a session's first run, from the URL (`ui/url.py`), which they also keep current.
"""

from __future__ import annotations

import streamlit as st

from engine.lab.scenario import Scenario, resolve_scenario
from ui import url
from ui.course import course, lesson_label, remember_link
from ui.runs import Overrides, UserError, parse_stop_sequences, parse_stop_token, uploaded_scenario

UPLOAD = "upload"  # the scenario choice that shows the file uploader
MAX_WORKLOAD = 5_000  # requests a generated workload may have in the app


def scenario_defaults(scenario: Scenario | None) -> dict:
    """The settings a scenario starts from (widgets read them from session state)."""
    defaults = {"stop_sequences": ""}
    if scenario is None:
        return {
            **defaults,
            "batch_size": 4,
            "stop_token": "0",
            "padded": False,
            "batching": "continuous",
            "fill_timeout": 0,
        }
    engine, model = scenario.engine, scenario.model
    defaults |= {
        "batch_size": engine.batch_size,
        "stop_token": "" if engine.stop_token is None else str(engine.stop_token),
        "padded": engine.padded,
        "batching": engine.batching,
        "fill_timeout": engine.fill_timeout or 0,
        "model_seed": model.seed,
        "stop_chance": model.stop_chance,
    }
    if scenario.workload is not None:
        defaults |= {
            "workload_count": min(scenario.workload.count, MAX_WORKLOAD),
            "workload_seed": scenario.workload.seed,
        }
    return defaults


def _reset_settings() -> None:
    """A newly chosen scenario starts from its own settings (this also rewrites the URL)."""
    name = st.session_state.get("scenario")
    for key, value in scenario_defaults(None if name == UPLOAD else resolve_scenario(name)).items():
        st.session_state[key] = value
    st.session_state.step = 0
    st.session_state.pop("link", None)  # a link's skipped predictions were for the lesson it opened, once


def next_lesson_ui(name: str, place) -> None:
    """The `next_lesson` button (in `place`): on to the next lesson, or disabled after the last."""
    following = course().following(name) if course().lesson(name) is not None else None
    place.button(
        f"Next lesson: {following.number}" if following else "Course complete",
        help=f"{following.label}" if following else "This was the last lesson.",
        key="next_lesson",
        on_click=_choose,
        args=(following.name if following else name,),
        disabled=following is None,
    )


def _choose(name: str) -> None:
    st.session_state.scenario = name
    _reset_settings()


def scenario_ui() -> tuple[str, object | None, Scenario | None]:
    """The lesson picker: the course's lessons in order ("3.2 Title"), then an upload.

    A session starts on lesson 1 unless its URL names a lesson (`lesson`: a scenario name
    or a number such as 3.2) or, in older links, a `scenario`.
    """
    names = [lesson.name for lesson in course().lessons]
    url.load_once()
    wanted = st.session_state.pop("lesson", None)  # the URL's lesson, on the session's first run
    if wanted is not None:
        found = course().lesson(wanted)
        st.session_state.scenario = found.name if found is not None else names[0]
        if found is None:
            st.session_state.unknown_lesson = wanted
    if st.session_state.get("scenario") not in [*names, UPLOAD]:
        if st.session_state.get("scenario") is not None:  # an old link's unknown `scenario`
            st.session_state.unknown_lesson = st.session_state.scenario
        st.session_state.scenario = names[0]
    name = st.selectbox(
        "Lesson",
        [*names, UPLOAD],
        key="scenario",
        on_change=_reset_settings,
        format_func=lambda n: "Upload a file (.toml or .jsonl)…" if n == UPLOAD else lesson_label(n),
    )
    remember_link(name)
    if name != UPLOAD:
        return name, None, resolve_scenario(name)
    upload = st.file_uploader(
        "Scenario TOML or event-log JSONL", type=["toml", "jsonl"], key="upload", on_change=_reset_for_upload
    )
    return name, upload, uploaded_scenario(upload)


def _reset_for_upload() -> None:
    """A newly uploaded scenario starts from its own settings."""
    for key, value in scenario_defaults(uploaded_scenario(st.session_state.get("upload"))).items():
        st.session_state[key] = value
    st.session_state.step = 0
    st.session_state.pop("link", None)  # a link's skipped predictions were for the lesson it opened, once


def settings_ui(scenario: Scenario | None, switches=None) -> Overrides:
    """Engine and model/workload knobs, starting from the scenario's own values.

    `switches`, if given, is where the batching and padded switches go instead (presentation
    mode keeps them on screen while the sidebar is hidden). Malformed stop-token or
    stop-sequence text shows an inline error and overrides nothing.
    """
    for key, value in scenario_defaults(scenario).items():
        st.session_state.setdefault(key, value)
    batch_size = st.number_input("Batch size (slots)", 1, 256, key="batch_size")
    stop_text = st.text_input("Stop token (empty: none)", key="stop_token", placeholder="none")
    stop_sequence_text = st.text_input(
        "Extra stop sequences for every request",
        key="stop_sequences",
        placeholder="7 8; 3 3 4",
    )
    place = switches if switches is not None else st
    batching = place.radio("Batching", ["continuous", "static"], horizontal=True, key="batching")
    padded = place.toggle("Padded batches (fixed shape + mask)", key="padded")
    fill_timeout = None
    if batching == "static":  # (continuous batching never has an empty batch to hold)
        fill_timeout = int(
            st.number_input(
                "Fill timeout (steps; 0: run at once)",
                0,
                1_000,
                key="fill_timeout",
                help="An empty static batch waits until the queue can fill it, or until its oldest request "
                "has waited this long.",
            )
        )
    stop_token, stops = _parsed(stop_text, parse_stop_token), _parsed(stop_sequence_text, parse_stop_sequences)
    knobs = _knobs_ui(scenario) if scenario else {}
    url.save(
        {
            **url.lesson_params(st.session_state.scenario, UPLOAD),
            "batch_size": batch_size,
            "stop_token": stop_text.strip() or None,  # an empty field is written as "none"
            "stop_sequences": stop_sequence_text,
            "padded": padded,
            "batching": batching,
            "fill_timeout": fill_timeout or "",  # (0: left out of the link)
            **knobs,
        }
    )
    return Overrides(
        batch_size=int(batch_size),
        stop_token=stop_token if type(stop_token) is int else None,  # (False: malformed)
        clear_stop_token=stop_token is None,
        batching=batching,
        padded=padded,
        fill_timeout=fill_timeout,
        stop_sequences=stops or (),
        **knobs,
    )


def _parsed(text: str, parse):
    """`parse(text)`, or an inline error and `False` (nothing overridden) if the text is malformed."""
    try:
        return parse(text or "")
    except UserError as exc:
        st.error(str(exc))
        return False


def _knobs_ui(scenario: Scenario) -> dict:
    knobs = {}
    answers_drawn = scenario.workload is not None and scenario.workload.max_tokens is not None
    if scenario.model.kind == "simulated":
        st.caption("Model: SimulatedLLM" + (", stopping each answer at its drawn length" if answers_drawn else ""))
        knobs["model_seed"] = int(st.number_input("Model seed", 0, 10**6, key="model_seed"))
        if not answers_drawn:  # (else the answer lengths decide: engine/lab/answer_model.py)
            knobs["stop_chance"] = st.slider(
                "Chance of the stop token per token", 0.0, 1.0, step=0.01, key="stop_chance"
            )
    if scenario.workload is not None:
        st.caption("Generated workload")
        knobs["workload_count"] = int(st.number_input("Requests", 1, MAX_WORKLOAD, key="workload_count"))
        knobs["workload_seed"] = int(st.number_input("Workload seed", 0, 10**6, key="workload_seed"))
    return knobs
