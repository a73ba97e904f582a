"""Continuous Batching Lab (placeholder front end): run the engine and show its event log.

The animated slot grid arrives with the app issue; this page already reads only the log.
"""

import streamlit as st

from engine import BatchInferenceEngine, EventLog, SimulatedLLM
from engine.workload import submit_all, uniform_workload


@st.cache_data
def simulate(requests: int, batch_size: int, batching: str, padded: bool, seed: int) -> str:
    """Run the engine once per distinct setting; return its event log as JSON Lines."""
    model = SimulatedLLM(seed=seed, stop_chance=0.05)
    engine = BatchInferenceEngine(model, batch_size, model.eos_token, batching=batching, padded=padded)
    submit_all(engine, uniform_workload(requests, seed=seed, max_tokens=24))
    engine.run()
    return engine.event_log.to_jsonl()


st.set_page_config(page_title="Continuous Batching Lab", layout="wide")
st.title("Continuous Batching Lab")
with st.sidebar:
    requests = st.slider("Requests", 1, 200, 12, key="requests")
    batch_size = st.slider("Batch size", 1, 64, 4, key="batch_size")
    batching = st.radio("Batching", ["continuous", "static"], key="batching")
    padded = st.toggle("Padded batches", key="padded")
    seed = st.number_input("Seed", 0, 10_000, 0, key="seed")

log = EventLog.from_jsonl(simulate(requests, batch_size, batching, padded, int(seed)))
st.caption(f"{len(log.requests)} requests, {log.num_steps} steps, {len(log)} events")
st.dataframe(log.to_dataframe(), width="stretch", height=600)
