"""One run in one file of the on-disk run cache: its event log as arrays and its stage frames, never pickled.

The file is a numpy `.npz` (a zip of `.npy` arrays), written with `np.savez_compressed` and
read with `np.load(allow_pickle=False)`, so reading it can only ever produce arrays:

- `step`, `kind`, `slot`, `request`, `a`, `b`: the log's six columns (events.py);
- `prompts`, `prompt_lengths`: every request's prompt, end to end;
- `meta`: UTF-8 JSON: the format, the run's key, the log's header (settings, model, words),
  the request table without prompts, and the attachments (model call masks, error messages);
- `wire`: the stage's compressed frames (cblab/ui/runs/stage_wire.py);
- `digest`: SHA-256 of all of the above, checked on reading.

Why not JSON Lines, the log's own format: it is about 20 times slower to read back (9 s for
the Anyscale cap-1536 run's 184k events, 21 MB), because it validates every line as an
upload must be. This file is only ever read back by the server that wrote it (or its sibling
workers), so a torn, truncated or foreign file (another format, another key, a digest that
does not match, the wrong shapes or types) is refused with `ValueError` and the run is made
again; its events are not checked one by one. See run_cache.py for the folder's trust.
"""

from __future__ import annotations

import hashlib
import io
import json
from array import array

import numpy as np

from engine import EventLog
from engine.core.config import EngineConfig
from engine.core.log.events import RequestInfo

FORMAT = "continuous-batching-lab/run/2"  # 2: the columns value and detail (were a and b), attachments
COLUMNS = {"step": "i", "kind": "b", "slot": "i", "request": "i", "value": "q", "detail": "i"}  # name -> array typecode
DTYPES = {"i": np.int32, "b": np.int8, "q": np.int64}


def write(log: EventLog, wire: bytes, key: str) -> bytes:
    """The file's bytes for the run `key` (its log and its stage frames)."""
    arrays = {name: np.frombuffer(getattr(log, name), DTYPES[code]) for name, code in COLUMNS.items()}
    arrays["prompts"] = np.array([t for info in log.requests for t in info.prompt], np.int64)
    arrays["prompt_lengths"] = np.array([len(info.prompt) for info in log.requests], np.int64)
    arrays["meta"] = np.frombuffer(json.dumps(_meta(log, key)).encode(), np.uint8)
    arrays["wire"] = np.frombuffer(wire, np.uint8)
    arrays["digest"] = np.frombuffer(_digest(arrays).encode(), np.uint8)
    out = io.BytesIO()
    np.savez_compressed(out, **arrays)
    return out.getvalue()


def read(data: bytes, key: str) -> tuple[EventLog, bytes]:
    """The log and the stage frames of the run `key`; ValueError if the file is not exactly that."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
        digest = arrays.pop("digest").tobytes().decode()
        if digest != _digest(arrays):
            raise ValueError("its digest does not match its content")
        meta = json.loads(arrays["meta"].tobytes())
        if meta.get("format") != FORMAT or meta.get("key") != key:
            raise ValueError("it is another format's or another run's")
        return _log(arrays, meta), arrays["wire"].tobytes()
    except ValueError:
        raise
    except Exception as exc:  # a zip, npy or JSON error, a missing array, a field of the wrong type
        raise ValueError(f"it cannot be read ({type(exc).__name__}: {exc})") from None


def _meta(log: EventLog, key: str) -> dict:
    config = {name: getattr(log.config, name) for name in EngineConfig.__slots__}
    requests = [[i.request_id, i.max_tokens, [list(s) for s in i.stop_sequences], i.priority] for i in log.requests]
    attachments = [list(item) if isinstance(item, tuple) else item for item in log.attachments]
    vocabulary = {str(token): word for token, word in log.vocabulary.items()}
    return {"format": FORMAT, "key": key, "config": config, "model": log.model, "vocabulary": vocabulary,
            "requests": requests, "attachments": attachments}  # fmt: skip


def _digest(arrays: dict[str, np.ndarray]) -> str:
    sha = hashlib.sha256()
    for name in sorted(arrays):
        sha.update(f"{name}:{arrays[name].dtype.str}:{arrays[name].size};".encode())
        sha.update(np.ascontiguousarray(arrays[name]).tobytes())
    return sha.hexdigest()


def _log(arrays: dict[str, np.ndarray], meta: dict) -> EventLog:
    vocabulary = {int(token): str(word) for token, word in meta["vocabulary"].items()}
    log = EventLog(EngineConfig(**meta["config"]), meta["model"], vocabulary)
    lengths = [int(n) for n in arrays["prompt_lengths"]]
    if len(lengths) != len(meta["requests"]) or sum(lengths) != len(arrays["prompts"]):
        raise ValueError("its prompts do not fit its request table")
    prompts, start = arrays["prompts"].tolist(), 0
    for (request_id, max_tokens, stops, priority), length in zip(meta["requests"], lengths):
        prompt, start = tuple(prompts[start : start + length]), start + length
        log.requests.append(RequestInfo(request_id, prompt, max_tokens, tuple(map(tuple, stops)), priority))
        log.request_index[request_id] = len(log.requests) - 1
    log.attachments = [tuple(item) if isinstance(item, list) else item for item in meta["attachments"]]
    events = {len(arrays[name]) for name in COLUMNS}
    if len(events) != 1 or any(arrays[name].dtype != DTYPES[code] for name, code in COLUMNS.items()):
        raise ValueError("its columns differ in length or type")
    for name, code in COLUMNS.items():
        setattr(log, name, array(code, arrays[name].tobytes()))
    return log
