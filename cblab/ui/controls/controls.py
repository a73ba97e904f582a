"""Sidebar controls: `*_ui()` functions that draw widgets and return plain values.

Widgets read their values from session state, seeded from the scenario's own settings
and, on a session's first run, from the URL (`cblab/ui/controls/url.py`), which they also keep current.
"""

from __future__ import annotations

import streamlit as st

from cblab.ui.controls import url
from cblab.ui.controls.settings import SETTINGS, Setting, answers_drawn, own_values
from cblab.ui.course.course import course, lesson_label
from cblab.ui.runs.runs import MEMORY, Overrides, UserError, parse_stop_sequences, parse_stop_token, uploaded_scenario
from engine.lab.scenario import Scenario, resolve_scenario

UPLOAD = "upload"  # the scenario choice that shows the file uploader


def reset_to_own_settings() -> None:
    """A newly chosen lesson starts from its own settings, at step 0, with all its predictions
    (this also rewrites the URL; only a link opened from outside skips predictions)."""
    name = st.session_state.get("scenario")
    upload = st.session_state.get("upload") if name == UPLOAD else None
    scenario = uploaded_scenario(upload) if name == UPLOAD else resolve_scenario(name)
    for key, value in own_values(scenario).items():
        st.session_state[key] = value
    st.session_state.step = 0
    st.session_state.pop("link", None)


def next_lesson_ui(name: str, place) -> None:
    """The `next_lesson` button (in `place`): on to the next lesson, or disabled after the last."""
    following = course().following(name)
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
    reset_to_own_settings()


def scenario_ui(drawn: bool = True) -> tuple[str, object | None, Scenario | None]:
    """The lesson picker: the course's lessons in order ("3.2 Title"), then an upload.

    A session starts on lesson 1 unless its URL names a lesson (`lesson`: a scenario name
    or a number such as 3.2) or, in older links, a `scenario`. Back and Forward in the
    browser move between the lessons this session visited, with their settings and steps.
    Not `drawn` (a browser's first page: `cblab/ui/frame/page.py`), the lesson is the same and
    only the picker is left out.
    """
    names = [lesson.name for lesson in course().lessons]
    url.load_once()
    if url.changed_outside(names[0]):
        _follow_the_url(names[0])
    wanted = st.session_state.pop("lesson", None)  # the URL's lesson, on a first run or after Back
    if wanted is not None:
        found = course().lesson(wanted)
        st.session_state.scenario = found.name if found is not None else names[0]
        if found is None:
            st.session_state.unknown_lesson = wanted
    if st.session_state.get("scenario") not in [*names, UPLOAD]:
        if st.session_state.get("scenario") is not None:  # an old link's unknown `scenario`
            st.session_state.unknown_lesson = st.session_state.scenario
        st.session_state.scenario = names[0]
    if not drawn:
        name = st.session_state.scenario
        return name, None, None if name == UPLOAD else resolve_scenario(name)
    name = st.selectbox(
        "Lesson",
        [*names, UPLOAD],
        key="scenario",
        on_change=reset_to_own_settings,
        format_func=lambda n: "Upload a file (scenario, event log or trace)…" if n == UPLOAD else lesson_label(n),
    )
    if name != UPLOAD:
        return name, None, resolve_scenario(name)
    upload = st.file_uploader(
        "Scenario TOML, event-log JSONL, or a request trace (Mooncake's JSONL, Azure's CSV; .xz or .gz too)",
        type=["toml", "jsonl", "csv", "xz", "gz"],
        key="upload",
        on_change=reset_to_own_settings,
    )
    return name, upload, uploaded_scenario(upload)


def _follow_the_url(home: str) -> None:
    """Back or Forward: the URL's lesson (`home` where it names none, as the root URL), from its own
    settings, then the URL's settings and step."""
    lesson = course().lesson(st.query_params.get("lesson", ""))
    st.session_state.scenario = lesson.name if lesson is not None else st.query_params.get("scenario", home)
    reset_to_own_settings()
    url.load(link=False)


GROUP_CAPTIONS = {"memory": "Memory: the KV cache and the token budget", "workload": "Generated workload"}


def settings_ui(scenario: Scenario | None, switches=None, drawn: bool = True) -> Overrides:
    """The engine, memory, model and workload knobs (`cblab/ui/controls/settings.py`), starting from the scenario's
    own values; the settings a scenario has no use for are not shown.

    `switches`, if given, are the places the batching and padded switches go instead, in a row
    (presentation mode keeps them on screen while the sidebar is hidden). Malformed stop-token or
    stop-sequence text shows an inline error and overrides nothing. Not `drawn` (a browser's first
    page), the sidebar's widgets are left out and their values are the ones they will show.
    """
    for key, value in own_values(scenario).items():
        st.session_state.setdefault(key, value)
    values: dict[str, object] = {}
    projected = [setting.key for setting in SETTINGS if setting.projector]
    places = dict(zip(projected, switches)) if switches is not None else {}
    group = "engine"
    for setting in SETTINGS:
        if not setting.shown(scenario, values):
            continue
        if not drawn and setting.key not in places:
            values[setting.key] = st.session_state[setting.key]  # (what its widget returns)
            continue
        if setting.group != group:
            group = setting.group
            _group_caption(group, scenario)
        values[setting.key] = _widget(places.get(setting.key, st), setting)
    url.save({**url.lesson_params(st.session_state.scenario, UPLOAD), **values})
    return _overrides(values)


def own_overrides(scenario: Scenario) -> Overrides:
    """What `settings_ui` returns for a lesson at its own settings, as Next lesson opens it."""
    own, values = own_values(scenario), {}
    for setting in SETTINGS:
        if setting.shown(scenario, values):
            values[setting.key] = own[setting.key]
    return _overrides(values)


def _group_caption(group: str, scenario: Scenario | None) -> None:
    if group == "model":
        drawn = ", stopping each answer at its drawn length" if answers_drawn(scenario) else ""
        st.caption(f"Model: SimulatedLLM{drawn}")  # (the answer lengths decide: engine/lab/answer_model.py)
    elif group in GROUP_CAPTIONS:
        st.caption(GROUP_CAPTIONS[group])


def _widget(place, setting: Setting):
    """Draw one setting's widget (its value comes from session state) and return its value."""
    common = {"key": setting.key, "help": setting.help or None}
    if setting.widget == "number":
        return place.number_input(setting.label, int(setting.low), int(setting.high), **common)
    if setting.widget == "optional_number":
        low, high = int(setting.low), int(setting.high)
        return place.number_input(setting.label, low, high, value=None, placeholder=setting.placeholder, **common)
    if setting.widget == "text":
        return place.text_input(setting.label, placeholder=setting.placeholder, **common)
    if setting.widget == "radio":
        return place.radio(setting.label, setting.options, horizontal=True, **common)
    if setting.widget == "toggle":
        return place.toggle(setting.label, wrap=True, **common)
    return place.slider(setting.label, float(setting.low), float(setting.high), step=0.01, **common)


def _overrides(values: dict) -> Overrides:
    """The sidebar's values as changes to the scenario (a setting not shown changes nothing)."""
    stop_token = _parsed(values["stop_token"], parse_stop_token)
    stops = _parsed(values["stop_sequences"], parse_stop_sequences)
    kept = {key: values[key] for key in MEMORY if key in values}
    plain = {key: values.get(key) for key in ("model_seed", "stop_chance", "workload_count", "workload_seed")}
    return Overrides(
        batch_size=int(values["batch_size"]),
        stop_token=stop_token if type(stop_token) is int else None,  # (False: malformed)
        clear_stop_token=stop_token is None,
        batching=values["batching"],
        padded=values["padded"],
        fill_timeout=values.get("fill_timeout"),  # (shown for static batching only)
        stop_sequences=stops or (),
        **plain,
        **kept,
    )


def _parsed(text: str, parse):
    """`parse(text)`, or an inline error and `False` (nothing overridden) if the text is malformed."""
    try:
        return parse(text or "")
    except UserError as exc:
        st.error(str(exc))
        return False
