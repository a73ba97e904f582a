"""Boxes that stay as the learner left them (cblab/ui/kept_open.py): the state that Next lesson and
Back would lose is kept per box for the session, and every lesson box goes through it."""

import inspect

from streamlit.testing.v1 import AppTest

from cblab.ui.course import real_servers
from cblab.ui.frame import lesson_extras


def box_script(expanded: bool = True, closed_by_learner: bool = False):
    import streamlit as st

    from cblab.ui.kept_open import WAS_OPEN, _remember, kept_expander

    if closed_by_learner and not st.session_state.get("closed"):
        st.session_state["box"] = False  # what a click on the open box leaves, then its on_change
        _remember("box")
        st.session_state["closed"] = True
    if st.session_state.get("show", True):
        with kept_expander("A box", "box", expanded):
            st.write("inside")
    st.write(f"kept: {st.session_state[WAS_OPEN].get('box') if WAS_OPEN in st.session_state else None}")


def expanded_flags(at: AppTest) -> list[bool]:
    return [box.proto.expanded for box in at.expander]


def test_a_box_opens_as_asked_the_first_time_and_then_as_the_learner_left_it():
    at = AppTest.from_function(box_script, kwargs={"expanded": True}).run()
    assert expanded_flags(at) == [True]
    at = AppTest.from_function(box_script, kwargs={"expanded": True, "closed_by_learner": True}).run()
    assert expanded_flags(at) == [False] and at.markdown[-1].value == "kept: False"
    at.session_state["show"] = False  # another lesson: the box is not drawn, and Streamlit forgets it
    at.run()
    assert expanded_flags(at) == []
    at.session_state["show"] = True  # Back: drawn anew, still closed though `expanded` says open
    at.run()
    assert expanded_flags(at) == [False]


def test_the_lesson_boxes_are_kept_boxes_keyed_by_their_lesson():
    for module in (real_servers, lesson_extras):
        source = inspect.getsource(module)
        assert "kept_expander(" in source and "st.expander(" not in source
        assert "scenario.title}" in source
