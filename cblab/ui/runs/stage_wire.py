"""The stage's data as sent: one bytes payload, a small JSON header, and each new run's frames compressed.

Streamlit sends a component's `data` either as JSON (serialized to send it, and again,
sorted, to identify the element: twice 2.1 MB for the 4,330-step Anyscale run) or as raw
bytes, which it only hashes. The stage gets bytes:

    [header length: 4 bytes, big-endian] [header: UTF-8 JSON] [run 1's frames] [run 2's frames] ...

The header holds what may change from one rerun to the next (the run's id, the step to
start at, the speed, the prediction's limit and goto, ...) and, when frames are sent, `runs`:
the byte length of each run's frames. A run's frames are `for_the_wire(frames)` as compact
JSON, compressed with zlib once per run (`compress`; kept with the run, and in the on-disk
run cache), which the browser inflates with its own `DecompressionStream("deflate")`
(cblab/ui/stage/stage_component/wire.js; nothing is fetched). The Anyscale run's 2.1 MB are 0.35 MB sent.
"""

from __future__ import annotations

import json
import zlib

from engine.analysis.frames import for_the_wire

HEADER_BYTES = 4


def compress(frames: dict) -> bytes:
    """A run's frames as the stage receives them, compressed (zlib, which the browser calls "deflate")."""
    return zlib.compress(json.dumps(for_the_wire(frames), separators=(",", ":")).encode(), 6)


def inflate(wire: bytes) -> dict:
    """`compress`'s frames back, each step's narration as its sentences again (as `encode` gave them)."""
    frames = json.loads(zlib.decompress(wire))
    sentences = frames.pop("sentences")
    frames["narration"] = {step: [sentences[i] for i in said] for step, said in frames["narration"].items()}
    return frames


def pack(header: dict, runs: list[bytes]) -> bytes:
    """The stage's data: `header`, with the lengths of the compressed `runs` that follow it."""
    text = json.dumps({**header, "runs": [len(run) for run in runs]} if runs else header).encode()
    return b"".join([len(text).to_bytes(HEADER_BYTES, "big"), text, *runs])


def unpack(data: bytes) -> tuple[dict, list[dict]]:
    """The header and the runs' frames as wire.js reads them (each sentence once, `for_the_wire`)."""
    size = int.from_bytes(data[:HEADER_BYTES], "big")
    header = json.loads(data[HEADER_BYTES : HEADER_BYTES + size])
    runs, offset = [], HEADER_BYTES + size
    for length in header.get("runs", []):
        runs.append(json.loads(zlib.decompress(data[offset : offset + length])))
        offset += length
    return header, runs
