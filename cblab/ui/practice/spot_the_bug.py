"""Spot the bug: a zoo engine beside the correct one, and "spot it first", a guess before the answer.

`bug_demo` runs one zoo engine and the correct engine on the first fixed checker case that
exposes the mistake (a memory mistake: on its own demo case, with a KV pool). "Spot it
first", on by default (the course asks before it tells), hides the explanation, the caption,
the outline and the hints, and asks the learner for the cell where the run with the mistake
first goes wrong. The answer is a pair of
number inputs (step, slot) and a Check button, not a click on the chart: AppTest cannot
drive a Plotly selection, a heatmap click is easy to miss, and inputs work from the
keyboard. Checking says whether the guess was right (or close) and reveals the rest.
"""

from __future__ import annotations

import streamlit as st

from cblab.ui.practice.pair_view import render_pair
from cblab.ui.practice.paired_runs import Demo, first_difference, run_logged
from engine.core.engine import BatchInferenceEngine
from engine.practice.checker.cases import fixed_cases
from engine.practice.checker.checks import evaluate
from engine.practice.checker.trace import CheckModel
from engine.practice.memory_demos import DemoCase
from engine.practice.zoo import BUGS


@st.cache_resource(max_entries=16, show_spinner=False)
def bug_demo(name: str) -> Demo:
    """The first fixed case that exposes the bug (or the bug's own demo case), run on the zoo engine
    and on the correct one."""
    bug = BUGS[name]
    for demo in [bug.demo] if bug.demo else [DemoCase(case) for case in fixed_cases()]:
        got, buggy, buggy_received = run_logged(bug.engine, demo)
        want, correct, correct_received = run_logged(BatchInferenceEngine, demo)
        if bug.demo or evaluate(demo.case, got, want):
            answer = CheckModel(demo.case.to_json()).token
            return Demo(demo.title, buggy, correct, (buggy_received, correct_received), answer)
    raise AssertionError(f"no fixed case exposes {name}")


def verdict(guess: tuple[int, int], difference: tuple[int, int] | None) -> tuple[str, str]:
    """(level, message) for a learner's guess at the first difference: success, warning (close) or error."""
    if difference is None:
        return "info", "The two runs agree everywhere: there is nothing to spot."
    (step, slot), where = difference, f"step {difference[0]}, slot {difference[1]}"
    if tuple(guess) == difference:
        return "success", f"Right: the run with the mistake first goes wrong at {where}."
    if guess[0] == step:
        return "warning", f"Close: same step, but the first difference is in slot {slot} ({where})."
    if guess[1] == slot and abs(guess[0] - step) == 1:
        return "warning", f"Close: same slot, one step {'late' if guess[0] > step else 'early'}; it is {where}."
    if guess[0] > step:
        return "error", f"Not quite: it goes wrong earlier, at {where}."
    return "error", f"Not quite: at step {guess[0]} both runs still agree; the first difference is at {where}."


def _record_guess(name: str) -> None:
    """The Check button's callback: the guess is kept for this bug, so the rerun reveals the answer."""
    st.session_state["spot_answer"] = (name, int(st.session_state["spot_step"]), int(st.session_state["spot_slot"]))


def _forget_guess() -> None:
    st.session_state.pop("spot_answer", None)


def answered(name: str) -> tuple[int, int] | None:
    """The learner's checked guess for this bug, if any."""
    answer = st.session_state.get("spot_answer")
    return tuple(answer[1:]) if answer and answer[0] == name else None


def render_question(name: str, demo: Demo) -> None:
    """Spot it first: two number inputs (step, slot) and a Check button, reset for every bug."""
    if st.session_state.get("spot_for") != name:
        st.session_state["spot_step"], st.session_state["spot_slot"], st.session_state["spot_for"] = 0, 0, name
    st.info(
        "Spot it first: where does the run with the mistake (left) first go wrong? Step through both grids "
        "and their narration, then name the cell."
    )
    steps = max(demo.buggy.num_steps, demo.correct.num_steps)
    step, slot, check = st.columns([1, 1, 2], vertical_alignment="bottom")
    step.number_input("Your guess: step", 0, max(steps - 1, 0), step=1, key="spot_step")
    slot.number_input("Your guess: slot", 0, demo.buggy.config.batch_size - 1, step=1, key="spot_slot")
    check.button("Check", key="spot_check", on_click=_record_guess, args=(name,))


def render_spot_the_bug() -> None:
    """A zoo engine beside the correct one; with "spot it first", the explanation waits for a guess."""
    choose, mode = st.columns([3, 1], vertical_alignment="bottom")
    name = choose.selectbox("A classic mistake", list(BUGS), key="bug", format_func=lambda n: BUGS[n].title)
    spot = mode.toggle(
        "Spot it first",
        key="spot_first",
        value=True,  # asked first, as the course's predictions are: the learner looks before being told
        on_change=_forget_guess,
        help="Hide the explanation until you have named the cell; switch off to read it at once.",
    )
    bug, demo = BUGS[name], bug_demo(name)
    guess = answered(name)
    revealed = not spot or guess is not None
    if revealed:
        st.markdown(f"**What goes wrong.** {bug.why}  \n**How to avoid it.** {bug.avoid}")
    source = "The memory demo case" if bug.demo else "The checker's case"
    st.caption(f"{source}: {demo.title}. Left: the engine with this one mistake; right: the correct engine.")
    if not revealed:
        render_question(name, demo)
    elif spot:
        level, message = verdict(guess, first_difference(demo.buggy, demo.correct, demo.received))
        getattr(st, level)(f"You said step {guess[0]}, slot {guess[1]}. {message}")
    labels = ("With the mistake", "Correct")
    render_pair(
        demo.buggy,
        demo.correct,
        labels,
        "bug",
        received=demo.received,
        answer=demo.answer,
        identity=name,
        reveal=revealed,
    )
