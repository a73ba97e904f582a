"""Sidebar and playback controls: `*_ui()` functions that draw widgets and return plain values.

Widgets read their values from session state, seeded from the scenario's own settings
and, on a session's first run, from the URL (`ui/url.py`), which they also keep current.
"""

from __future__ import annotations

import streamlit as st

from engine.lab.scenario import Scenario, list_scenarios, resolve_scenario
from ui import url
from ui.runs import Overrides, UserError, parse_stop_sequences, uploaded_scenario

UPLOAD = "upload"  # the scenario choice that shows the file uploader
SPEEDS = [0.5, 1.0, 2.0, 4.0, 8.0]  # steps per second
MAX_WORKLOAD = 5_000  # requests a generated workload may have in the app


def scenario_defaults(scenario: Scenario | None) -> dict:
    """The settings a scenario starts from (widgets read them from session state)."""
    defaults = {"stop_sequences": ""}
    if scenario is None:
        return {**defaults, "batch_size": 4, "stop_token": 0, "padded": False, "batching": "continuous"}
    engine, model = scenario.engine, scenario.model
    defaults |= {
        "batch_size": engine.batch_size,
        "stop_token": engine.stop_token,
        "padded": engine.padded,
        "batching": engine.batching,
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
    st.session_state.step, st.session_state.play = 0, False


def scenario_ui() -> tuple[str, object | None, Scenario | None]:
    names = [path.stem for path in list_scenarios()]
    url.load_once()
    if st.session_state.get("scenario") not in [*names, UPLOAD]:
        st.session_state.scenario = "part2-slot-refill"
    name = st.selectbox(
        "Scenario",
        [*names, UPLOAD],
        key="scenario",
        on_change=_reset_settings,
        format_func=lambda n: "Upload a file (.toml or .jsonl)…" if n == UPLOAD else n,
    )
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
    st.session_state.step, st.session_state.play = 0, False


def settings_ui(scenario: Scenario | None) -> Overrides:
    """Engine and model/workload knobs, starting from the scenario's own values.

    Malformed stop-sequence text shows an inline error and adds no stop sequences.
    """
    for key, value in scenario_defaults(scenario).items():
        st.session_state.setdefault(key, value)
    batch_size = st.number_input("Batch size (slots)", 1, 256, key="batch_size")
    stop_token = st.number_input("Stop token (empty: none)", step=1, key="stop_token", placeholder="none")
    stop_text = st.text_input(
        "Extra stop sequences for every request",
        key="stop_sequences",
        placeholder="7 8; 3 3 4",
    )
    padded = st.toggle("Padded batches (fixed shape + mask)", key="padded")
    batching = st.radio("Batching", ["continuous", "static"], horizontal=True, key="batching")
    stops = ()
    try:
        stops = parse_stop_sequences(stop_text or "")
    except UserError as exc:
        st.error(str(exc))
    knobs = _knobs_ui(scenario) if scenario else {}
    url.save(
        {
            "scenario": st.session_state.scenario,
            "batch_size": batch_size,
            "stop_token": stop_token,
            "stop_sequences": stop_text,
            "padded": padded,
            "batching": batching,
            **knobs,
        }
    )
    overrides = Overrides(
        batch_size=int(batch_size),
        stop_token=None if stop_token is None else int(stop_token),
        clear_stop_token=stop_token is None,
        batching=batching,
        padded=padded,
        stop_sequences=stops,
        **knobs,
    )
    return overrides


def _knobs_ui(scenario: Scenario) -> dict:
    knobs = {}
    if scenario.model.kind == "simulated":
        st.caption("Model: SimulatedLLM")
        knobs["model_seed"] = int(st.number_input("Model seed", 0, 10**6, key="model_seed"))
        knobs["stop_chance"] = st.slider("Chance of the stop token per token", 0.0, 1.0, step=0.01, key="stop_chance")
    if scenario.workload is not None:
        st.caption("Generated workload")
        knobs["workload_count"] = int(st.number_input("Requests", 1, MAX_WORKLOAD, key="workload_count"))
        knobs["workload_seed"] = int(st.number_input("Workload seed", 0, 10**6, key="workload_seed"))
    return knobs


def _move(delta: int, last: int) -> None:
    st.session_state.step = min(max(st.session_state.get("step", 0) + delta, 0), last)
    st.session_state.play = False


def _toggle_play() -> None:
    st.session_state.play = not st.session_state.get("play", False)


def playback_ui(last_step: int) -> tuple[bool, float]:
    """prev / next / play / speed; returns (playing, steps per second)."""
    st.session_state.step = min(st.session_state.get("step", 0), last_step)
    prev, nxt, play, key, speed = st.columns([1, 1, 0.8, 1, 2], vertical_alignment="center")
    prev.button("◀ Prev", key="prev", on_click=_move, args=(-1, last_step), shortcut="Left", width="stretch")
    nxt.button("Next ▶", key="next", on_click=_move, args=(1, last_step), shortcut="Right", width="stretch")
    playing = play.toggle("Play", key="play")
    key.button(
        "Play/pause",
        key="play_pause",
        on_click=_toggle_play,
        shortcut="Space",
        type="tertiary",
        help="Play or pause (space bar)",
    )
    rate = speed.select_slider(
        "Speed (steps/s)",
        SPEEDS,
        value=2.0,
        key="speed",
        label_visibility="collapsed",
        format_func=lambda v: f"{v:g} steps/s",
    )
    return playing, float(rate)
