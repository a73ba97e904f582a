"""Continuous Batching Lab (placeholder front end): pick a scenario, read its log and narration.

The animated slot grid arrives with the app issue; this page already reads only the log.
"""

import streamlit as st

from engine import EventLog
from engine.metrics import summary
from engine.narration import narrate
from engine.replay import Replay
from engine.scenario import list_scenarios, resolve_scenario
from engine.simulate import simulate


@st.cache_data
def simulate_jsonl(name: str, batch_size: int, batching: str, padded: bool) -> str:
    """Run a built-in scenario once per distinct setting; return its event log as JSON Lines."""
    scenario = resolve_scenario(name).with_engine(batch_size=batch_size, batching=batching, padded=padded)
    return simulate(scenario).to_jsonl()


st.set_page_config(page_title="Continuous Batching Lab", layout="wide")
st.title("Continuous Batching Lab")
names = [path.stem for path in list_scenarios()]
with st.sidebar:
    name = st.selectbox("Scenario", names, index=names.index("part2-slot-refill"), key="scenario")
    scenario = resolve_scenario(name)
    batch_size = st.number_input("Batch size", 1, 256, scenario.engine.batch_size, key="batch_size")
    batching = st.radio(
        "Batching",
        ["continuous", "static"],
        key="batching",
        index=["continuous", "static"].index(scenario.engine.batching),
    )
    padded = st.toggle("Padded batches", value=scenario.engine.padded, key="padded")

log = EventLog.from_jsonl(simulate_jsonl(name, int(batch_size), batching, padded))
replay = Replay(log)
st.subheader(scenario.title)
st.write(scenario.lesson)
figures = summary(log)
st.caption(
    f"{figures['requests']} requests, {figures['steps']} steps, {len(log)} events, "
    f"slot utilisation {figures['slot_utilization']:.0%}"
)
step = st.slider("Step", 0, max(len(replay) - 1, 0), 0, key="step")
for sentence in narrate(replay, step, scenario.vocabulary):
    st.write(sentence)
st.dataframe(log.to_dataframe(), width="stretch", height=400)
