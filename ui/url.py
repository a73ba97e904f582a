"""The page URL's query parameters hold the scenario, its settings and the step, so a copied
link opens exactly the same view.

NOTE: these are synced by hand rather than with `bind="query-params"`. A bound widget
drops its parameter whenever its value equals the widget's own default (the first option,
the minimum), but here the defaults come from each scenario, so a shared link would lose
settings; and a bound widget whose parameters change (the step slider's maximum) is
re-initialised from the URL, undoing a reset. Only constant-default widgets (tab,
presentation) use bind.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import streamlit as st


def _number(kind: type, low: float, high: float) -> Callable[[str], float]:
    """A parser for `kind` (int or float) values in [low, high]."""

    def parse(text: str):
        value = kind(text)
        if not low <= value <= high:
            raise ValueError(text)
        return value

    return parse


def _bool(text: str) -> bool:
    if text not in ("true", "false"):
        raise ValueError(text)
    return text == "true"


def _stop_token(text: str) -> str:
    """The stop-token field's text: "none" is the empty field."""
    return "" if text == "none" else str(int(text))


def _batching(text: str) -> str:
    if text not in ("continuous", "static"):
        raise ValueError(text)
    return text


PARSERS: dict[str, Callable[[str], object]] = {
    "lesson": str,  # a course lesson: its scenario name or its number ("3.2")
    "scenario": str,  # older links' name for the lesson; now only "upload"
    "batch_size": _number(int, 1, 256),
    "stop_token": _stop_token,
    "stop_sequences": str,
    "padded": _bool,
    "batching": _batching,
    "fill_timeout": _number(int, 0, 1_000),
    "model_seed": _number(int, 0, 10**6),
    "stop_chance": _number(float, 0.0, 1.0),
    "workload_count": _number(int, 1, 5_000),
    "workload_seed": _number(int, 0, 10**6),
    "step": _number(int, 0, 2**31 - 1),
    "speed": _number(float, 0.5, 60.0),  # steps per second the stage starts playing at
}
KEPT = ("step", "speed")  # written by the stage's side (`save_step`) or only read, never by `save`


def load_once() -> None:
    """On a session's first run, copy valid URL parameters into session state (bad ones are ignored)."""
    if st.session_state.get("url_loaded"):
        return
    st.session_state.url_loaded = True
    for key, parse in PARSERS.items():
        if key in st.query_params:
            with contextlib.suppress(ValueError):
                st.session_state[key] = parse(st.query_params[key])


def _text(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def save(values: dict[str, object]) -> None:
    """Write these settings to the URL and drop the ones this view no longer has (the step
    is written by `save_step`, the speed only read)."""
    for key in PARSERS:
        if key not in KEPT:
            _put(key, values.get(key, ""))


def lesson_params(choice: str, upload: str) -> dict[str, str | None]:
    """The URL's name for the picker's choice: `lesson=<name>`, or `scenario=upload`."""
    return {"scenario": upload} if choice == upload else {"lesson": choice}


def save_step(step: int) -> None:
    _put("step", step or "")


def _put(key: str, value: object) -> None:
    if value == "":
        if key in st.query_params:
            del st.query_params[key]
    elif st.query_params.get(key) != _text(value):
        st.query_params[key] = _text(value)
