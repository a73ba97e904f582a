"""The built-in lessons' runs kept on disk, so a restarted server (or a sibling worker) need not make them again.

The folder is `$CBL_RUN_CACHE` (`off` turns the cache off), else `$XDG_CACHE_HOME/continuous-batching-lab/runs`,
else `~/.cache/continuous-batching-lab/runs`, created readable by its owner only. Each run is one
file (`run_file.py`) named by its key: SHA-256 of the file format, the package's version, a
digest of the code that makes a run (engine/ and the stage's wire format), and the scenario
with the sidebar's settings (`scenario_digest`). A change to any of them is another key, so a
stale file is never read; it ages out. The folder holds at most `$CBL_RUN_CACHE_MB` (default 256)
MiB: after each write the files used longest ago are removed (a read refreshes a file's time).

Trust: the folder is the server's own, like its code. Nothing in it is ever unpickled or run
(arrays and JSON only); a file that is torn, foreign, too big or unreadable is ignored, deleted
and made again. Its events are not validated one by one (as an upload's are), so do not point
`CBL_RUN_CACHE` at a folder other users can write. Uploaded scenarios are never kept.
Writes go to a temporary file renamed into place, so workers sharing the folder never read half a file.

Compare's figures for a built-in lesson (every configuration's summary, `cblab/ui/runs/comparisons.py`)
are kept in the same folder as `<key>.json` (`load_figures`, `store_figures`): plain numbers
by name, checked for that shape when read, under the same budget.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from functools import cache
from importlib import metadata
from pathlib import Path

from cblab.ui.runs import run_file
from engine import EventLog

ROOT = Path(__file__).resolve().parents[3]
CODE = ("engine", "cblab/ui/runs/stage_wire.py", "cblab/ui/runs/run_file.py")  # what decides a run's log and frames
DEFAULT_MB = 256
LOG = logging.getLogger(__name__)


def folder() -> Path | None:
    """The cache folder (None: the cache is off)."""
    chosen = os.environ.get("CBL_RUN_CACHE", "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base) / "continuous-batching-lab" / "runs"


def limit_bytes() -> int:
    try:
        return max(0, int(os.environ.get("CBL_RUN_CACHE_MB", DEFAULT_MB))) * 2**20
    except ValueError:
        return DEFAULT_MB * 2**20


def key(scenario_digest: str) -> str:
    return hashlib.sha256(f"{run_file.FORMAT}|{_version()}|{_code_digest()}|{scenario_digest}".encode()).hexdigest()


def load(run_key: str) -> tuple[EventLog, bytes] | None:
    """The run's log and stage frames if a good file holds them, else None (a bad file is removed)."""
    return _read(f"{run_key}.npz", limit_bytes(), lambda data: run_file.read(data, run_key))


def store_later(run_key: str, log: EventLog, wire: bytes) -> None:
    """Write the run's file in the background (the learner who made the run does not wait for it)."""
    if folder() is not None:
        threading.Thread(target=store, args=(run_key, log, wire), name="run-cache", daemon=True).start()


def store(run_key: str, log: EventLog, wire: bytes) -> None:
    try:
        data = run_file.write(log, wire, run_key)
    except OSError as exc:
        LOG.warning("could not keep a run: %s", exc)
        return
    if len(data) <= limit_bytes():
        _write(f"{run_key}.npz", data)


Figures = dict[str, dict[str, float | int | None]]  # configuration -> summary figure -> value
MAX_FIGURES_BYTES = 2**20  # a comparison's file is a few kB; a bigger one is not ours


def load_figures(figures_key: str) -> Figures | None:
    """The figures a good `<key>.json` holds, else None (a bad file is removed)."""
    return _read(f"{figures_key}.json", MAX_FIGURES_BYTES, _figures_from)


def store_figures(figures_key: str, figures: Figures) -> None:
    """Keep `figures` as `<key>.json`."""
    try:
        data = json.dumps(figures).encode()
    except (TypeError, ValueError) as exc:  # (a figure JSON cannot write: not kept)
        LOG.warning("could not keep figures: %s", exc)
        return
    _write(f"{figures_key}.json", data)


def _figures_from(data: bytes) -> Figures:
    found = json.loads(data)  # (bytes not UTF-8, or not JSON: a ValueError)
    if not _is_figures(found):
        raise ValueError("not a comparison's figures")
    return found


def _read(name: str, limit: int, parse):
    """What `parse` makes of the folder's file `name` if it is there and at most `limit` bytes, else None. A file
    `parse` refuses (ValueError) is removed; one removed meanwhile by another worker, or an unreadable folder,
    is a miss (the caller makes it again)."""
    where = folder()
    path = where / name if where else None
    try:
        if path is None or not path.is_file() or path.stat().st_size > limit:
            return None
        found = parse(path.read_bytes())
        os.utime(path)  # (used now: the last to be removed)
        return found
    except ValueError as exc:
        LOG.warning("ignoring the run cache file %s: %s", path, exc)
        path.unlink(missing_ok=True)
    except OSError:
        pass
    return None


def _write(name: str, data: bytes) -> None:
    """Keep `data` as the folder's file `name`: written whole, then renamed into place (workers sharing the folder
    never read half a file), and the folder trimmed to its budget. A full or read-only disk only logs: the cache
    is an optimisation, never a failure."""
    where = folder()
    if where is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tempfile.NamedTemporaryFile(dir=where, prefix=".writing-", delete=False) as out:
            out.write(data)
        os.replace(out.name, where / name)
        _trim(where, limit_bytes())
    except OSError as exc:
        LOG.warning("could not keep %s in %s: %s", name, where, exc)


def _is_figures(value: object) -> bool:
    number = (int, float, type(None))
    return isinstance(value, dict) and all(
        isinstance(name, str)
        and isinstance(row, dict)
        and all(isinstance(k, str) and type(v) in number for k, v in row.items())
        for name, row in value.items()
    )


def _trim(where: Path, budget: int) -> None:
    """Remove the files used longest ago until the folder holds at most `budget` bytes."""
    files = []
    for path in where.glob(".writing-*"):  # left by a worker stopped mid-write
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < time.time() - 3600:
                path.unlink()
    for path in [*where.glob("*.npz"), *where.glob("*.json")]:
        try:
            stat = path.stat()
            files.append((stat.st_mtime, stat.st_size, path))
        except OSError:
            continue
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= budget:
            break
        path.unlink(missing_ok=True)
        total -= size


@cache
def _version() -> str:
    try:
        return metadata.version("continuous-batching-lab")
    except metadata.PackageNotFoundError:
        return "unknown"


@cache
def _code_digest() -> str:
    sha = hashlib.sha256()
    for entry in CODE:
        paths = sorted((ROOT / entry).rglob("*.py")) if (ROOT / entry).is_dir() else [ROOT / entry]
        for path in paths:
            sha.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()
