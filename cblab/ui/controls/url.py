"""The page URL's query parameters hold the lesson, its settings, the step and the speed, so a
copied link opens exactly the same view.

NOTE: these are synced by hand rather than with `bind="query-params"`. A bound widget
drops its parameter whenever its value equals the widget's own default (the first option,
the minimum), but here the defaults come from each scenario, so a shared link would lose
settings; and a bound widget whose parameters change (the step slider's maximum) is
re-initialised from the URL, undoing a reset. Only constant-default widgets (tab,
presentation) use bind.

Streamlit adds a browser history entry whenever the script changes the URL; the page
component (`cblab/ui/frame/page.py`) turns every change but a lesson's into a replacement, so Back goes
to the previous lesson. A URL whose lesson is not the one this session last wrote was
changed by the browser (Back, Forward): `changed_outside` tells, and the app follows it. The
root URL names no lesson and opens the first: Back to it returns to that lesson.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from cblab.ui.controls.settings import SETTINGS, parse, url_text


def _number(kind: type, low: float, high: float) -> Callable[[str], float]:
    """A parser for `kind` (int or float) values in [low, high]."""

    def parse_number(text: str):
        value = kind(text)
        if not low <= value <= high:
            raise ValueError(text)
        return value

    return parse_number


VIEW: dict[str, Callable[[str], object]] = {
    "lesson": str,  # a course lesson: its scenario name or its number ("3.2")
    "scenario": str,  # older links' name for the lesson; now only "upload"
    "step": _number(int, 0, 2**31 - 1),
    "speed": _number(float, 0.5, 60.0),  # steps per second the stage plays at
}
WRITTEN = "url_lesson"  # session state: the lesson this session last wrote to the URL
HOLD = "url_hold"  # session state: this run writes nothing to the URL (the session's first)


def load(link: bool) -> None:
    """Copy the URL's valid parameters into session state (bad ones are ignored). On a session's
    first run (`link`), a URL with a step is a link opened from outside: its lesson's predictions
    before that step are skipped (`st.session_state.link`); a URL reached by Back is not."""
    for key, parse_view in VIEW.items():
        if key in st.query_params:
            with contextlib.suppress(ValueError):
                st.session_state[key] = parse_view(st.query_params[key])
    for setting in SETTINGS:
        if setting.key in st.query_params:
            with contextlib.suppress(ValueError):
                st.session_state[setting.key] = parse(setting, st.query_params[setting.key])
    if link and "step" in st.query_params and "step" in st.session_state:
        st.session_state.link = (_where(st.query_params), st.session_state.step)


def load_once() -> None:
    """On a session's first run, load the URL (a link opened from outside).

    NOTE: that run writes nothing to the URL. Each write there is a history entry until the
    page component (`cblab/ui/frame/page.py`) has mounted and turned writes into replacements, and it
    mounts only as this first run is drawn; the URL opened is already the view."""
    first = not st.session_state.get("url_loaded")
    st.session_state[HOLD] = first
    if first:
        st.session_state.url_loaded = True
        load(link=True)


def changed_outside(home: str) -> bool:
    """Whether the browser's Back or Forward brought a URL naming another lesson than the one this
    session last wrote; a URL naming none (the root) is lesson `home`'s. (Only a history navigation
    counts: a click made while the URL was still being written carries an older URL, which must not
    undo the click.)"""
    ctx = get_script_run_ctx()
    written, current = st.session_state.get(WRITTEN), _where(st.query_params) or home
    return bool(ctx and ctx.is_history_navigation) and written is not None and current != written


def _where(params) -> str | None:
    """The lesson (or `scenario=upload`) a URL names."""
    return params.get("lesson") or params.get("scenario")


def save(values: dict[str, object]) -> None:
    """Write the view's settings to the URL and drop the ones it no longer has (the step and the
    speed are written by `save_step` and `save_speed`)."""
    for key in ("lesson", "scenario"):
        _put(key, values.get(key, ""))
    if not st.session_state.get(HOLD):
        st.session_state[WRITTEN] = _where(values)
    for setting in SETTINGS:
        _put(setting.key, url_text(setting, values[setting.key]) if setting.key in values else "")


def lesson_params(choice: str, upload: str) -> dict[str, str]:
    """The URL's name for the picker's choice: `lesson=<name>`, or `scenario=upload`."""
    return {"scenario": upload} if choice == upload else {"lesson": choice}


def save_step(step: int) -> None:
    _put("step", step or "")


def save_speed(speed: float, default: float) -> None:
    _put("speed", "" if speed == default else f"{speed:g}")


def _put(key: str, value: object) -> None:
    if st.session_state.get(HOLD):
        return
    text = str(value)
    if text == "":
        if key in st.query_params:
            del st.query_params[key]
    elif st.query_params.get(key) != text:
        st.query_params[key] = text
