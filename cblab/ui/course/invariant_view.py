"""The invariant lesson's view: `set(running) == set(active slots)` checked at every model call, for
the correct engine and for the zoo's crossed-results engine, on the same scenario.

The table has one row per model call: the slots sent with the request holding each, and whom each
engine credited with each slot's answer. The bare slot-id form of the check holds in both runs;
the pairs form fails for crossed results (engine/analysis/invariant.py says why).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from cblab.ui.runs.runs import scenario_digest
from engine.analysis.invariant import SlotCheck, check_slot_mapping
from engine.lab.scenario import Scenario
from engine.lab.simulate import simulate
from engine.practice.zoo import CrossedResults


@st.cache_data(max_entries=8, show_spinner="Running both engines…")
def invariant_checks(digest: str, _scenario: Scenario) -> tuple[list[SlotCheck], list[SlotCheck]]:
    """(the correct engine's checks, the crossed-results engine's), keyed by the scenario's digest."""
    return (
        check_slot_mapping(simulate(_scenario)),
        check_slot_mapping(simulate(_scenario, engine_class=CrossedResults)),
    )


def pairs(mapping: tuple[tuple[int, str], ...]) -> str:
    return ", ".join(f"{slot}→{rid}" for slot, rid in mapping)


def invariant_table(correct: list[SlotCheck], crossed: list[SlotCheck]) -> pd.DataFrame:
    """One row per step with a model call in either run (crossed answers can change when a row stops,
    so the runs may differ in length): who holds each slot sent, and whom each engine credited."""
    mine, theirs = {c.step: c for c in correct}, {c.step: c for c in crossed}
    rows = []
    for step in sorted(mine.keys() | theirs.keys()):
        check, other = mine.get(step), theirs.get(step)
        rows.append(
            {
                "step": step,
                "running (slot→request)": pairs((check or other).running),
                "answers credited: engine": pairs(check.credited) if check else "",
                "answers credited: crossed results": pairs(other.credited) if other else "",
                "slot ids agree (both)": all(c.slots_agree for c in (check, other) if c is not None),
                "invariant holds: crossed results": other.holds if other else None,
            }
        )
    return pd.DataFrame(rows)


def verdict(checks: list[SlotCheck]) -> str:
    failure = next((check for check in checks if not check.holds), None)
    if failure is None:
        return "holds at every model call"
    slot, holder, credited = failure.mismatches()[0]
    return f"fails first at step {failure.step}: slot {slot} holds {holder}, but its answer went to {credited}"


def render_invariant(scenario: Scenario) -> None:
    """The check for both engines, as two sentences and the step-by-step table."""
    correct, crossed = invariant_checks(scenario_digest(scenario), scenario)
    st.markdown(
        "**set(running.items()) == {(active slot, request credited with its answer)}**  \n"
        f"The engine: {verdict(correct)}.  \nCrossed results: {verdict(crossed)}."
    )
    st.dataframe(invariant_table(correct, crossed), key="invariant_table", hide_index=True)
