"""Where each built-in trace comes from, under which licence, and which paper to cite: said wherever the lab
shows trace data (the app, under the text of a lesson that replays a trace; `python -m engine run` on a trace
scenario), as the Azure data's CC BY 4.0 licence asks (engine/lab/traces/NOTICE holds both in full).

    attribution(scenario.trace)   ->  "Trace data: the Azure LLM inference trace 2023 (...), CC BY 4.0; ..."

A user's own trace file has no attribution of ours to show (None).
"""

from __future__ import annotations

from dataclasses import dataclass

from .trace_workload import TraceWorkload


@dataclass(frozen=True)
class TraceSource:
    url: str  # where it is published
    licence: str
    paper: str  # the work to cite


MOONCAKE = TraceSource(
    "https://github.com/kvcache-ai/Mooncake",
    "Apache-2.0",
    "Ruoyu Qin et al., “Mooncake: Trading More Storage for Less Computation — A KVCache-centric Architecture "
    "for Serving LLM Chatbot”, FAST 2025",
)
AZURE = TraceSource(
    "https://github.com/Azure/AzurePublicDataset",
    "CC BY 4.0",
    "Pratyush Patel, Esha Choukse, Chaojie Zhang, Aashaka Shah, Íñigo Goiri, Saeed Maleki, Ricardo Bianchini, "
    "“Splitwise: Efficient generative LLM inference using phase splitting”, ISCA 2024",
)
SOURCES = {  # built-in trace -> what it is, and its source
    "mooncake-conversation": ("Mooncake's conversation trace, Kimi's chat service (Moonshot AI)", MOONCAKE),
    "mooncake-synthetic": ("Mooncake's synthetic trace", MOONCAKE),
    "azure-code": ("the Azure LLM inference trace 2023, code", AZURE),
    "azure-conversation": ("the Azure LLM inference trace 2023, conversation", AZURE),
}


def attribution(trace: TraceWorkload | None, markdown: bool = False) -> str | None:
    """One line naming the built-in trace's source, licence and paper (with `markdown`, the source a link);
    None for no trace or a user's own file."""
    if trace is None or not trace.builtin:
        return None
    what, source = SOURCES[trace.name]
    where = f"[{source.url.removeprefix('https://')}]({source.url})" if markdown else source.url
    return f"Trace data: {what} ({where}), {source.licence}; {_changes(trace)}. Cite: {source.paper}."


def _changes(trace: TraceWorkload) -> str:
    """What the lab did with the data (the licence asks to say): "a part of it, replayed through this engine"."""
    part = "a part of it, " if (trace.start_ms, trace.end_ms, trace.first) != (None, None, None) else ""
    faster = f" at {trace.rate:g}× its speed" if trace.rate != 1 else ""
    return f"{part}replayed through this engine{faster}, the data itself unchanged"
