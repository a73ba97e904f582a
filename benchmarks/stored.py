"""Where a benchmark's figures go: into the project's stored measurements (engine/lab/measurements/,
which the app's lessons read) with `--write`, else to standard output."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def store_or_print(figures: dict, out: Path, write: bool) -> None:
    """`figures` as indented JSON: written to `out` (saying so on standard error) if `write`, else printed."""
    text = json.dumps(figures, indent=1) + "\n"
    if write:
        out.write_text(text)
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
