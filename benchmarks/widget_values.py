"""The value a browser reports for a widget it shows, read from the widget's element.

On every rerun Streamlit's frontend sends the state of every widget on the page, which it
holds between runs: a widget new to the page starts at its default; a run that sets the
widget's value (`set_value`, e.g. from session state) replaces what the page held; a learner's
input replaces it too; otherwise the page keeps what it had. `held_state` applies those rules
to one widget's element, for the widget kinds the app shows on a lesson page, as the classroom
client (`benchmarks/streamlit_client.py`) does after every run. A widget with no value
(`index=None`, `value=None`) is sent as its id alone, as the frontend does.

Buttons (a trigger, sent once when clicked), file uploaders and custom components report
nothing until the learner acts on them, so `shown_state` returns None for them.
"""

from __future__ import annotations

from streamlit.proto.Element_pb2 import Element
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState

OPTIONS = ("selectbox", "radio")
TEXT = ("text_input", "text_area")
REPORTED_WHEN_USED = ("button", "file_uploader", "bidi_component", "download_button", "chat_input")


def widget_id(element: Element) -> str | None:
    """The element's widget id (`$$ID-<hash>-<user key>`), or None for an element that is not a widget."""
    kind = element.WhichOneof("type")
    inner = getattr(element, kind) if kind else None
    return getattr(inner, "id", None) or None


def held_state(element: Element, held: WidgetState | None) -> WidgetState | None:
    """The state the page holds for a widget after a run showed `element`, given what it `held`
    before (None: it holds nothing, or the widget reports nothing until used)."""
    kind = element.WhichOneof("type")
    if held is not None and not getattr(getattr(element, kind), "set_value", False):
        return held
    return shown_state(element)


def shown_state(element: Element) -> WidgetState | None:
    """The state the frontend takes from a widget's element: the value the script set, or its default."""
    kind = element.WhichOneof("type")
    if kind in REPORTED_WHEN_USED or widget_id(element) is None:
        return None
    widget = getattr(element, kind)
    state = WidgetState(id=widget.id)
    if kind == "checkbox":
        state.bool_value = widget.value if widget.set_value else widget.default
    elif kind in OPTIONS:
        if widget.set_value:
            if widget.raw_value:
                state.string_value = widget.raw_value
        elif widget.HasField("default"):
            state.string_value = widget.options[widget.default]
    elif kind in TEXT:
        state.string_value = widget.value if widget.set_value else widget.default
    elif kind == "number_input":
        if widget.set_value or widget.HasField("default"):
            value = widget.value if widget.set_value else widget.default
            if widget.data_type == NumberInput.INT:
                state.int_value = int(value)
            else:
                state.double_value = value
    else:  # a widget kind this app does not show on a lesson page: let the server keep its own value
        return None
    return state


def given_state(element: Element, value) -> WidgetState:
    """The state a learner gives a widget: `value` as that widget's frontend would send it."""
    kind = element.WhichOneof("type")
    widget = getattr(element, kind)
    state = WidgetState(id=widget.id)
    if value is None:
        return state
    if kind == "checkbox":
        state.bool_value = bool(value)
    elif kind in (*OPTIONS, *TEXT):
        state.string_value = str(value)
    elif kind == "number_input" and widget.data_type == NumberInput.INT:
        state.int_value = int(value)
    elif kind == "number_input":
        state.double_value = float(value)
    else:
        raise ValueError(f"the classroom client cannot set a {kind} widget ({widget.id})")
    return state
