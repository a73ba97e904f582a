"""Rewrite the golden event logs of the built-in scenarios (run only after a deliberate change).

    python -m tests.update_golden

Small scenarios keep their whole JSONL log in tests/golden/<name>.jsonl (readable in a
diff); generated workloads and trace replays keep a SHA-256 of it in tests/golden/digests.json.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from engine.lab.scenario import list_scenarios, load_scenario
from engine.lab.simulate import simulate

GOLDEN = Path(__file__).resolve().parent / "golden"


def golden_text(path: Path) -> str:
    return simulate(load_scenario(path)).to_jsonl()


def is_generated(path: Path) -> bool:
    """A generated workload or a replayed trace: a log too long to read in a diff, kept as a digest."""
    scenario = load_scenario(path)
    return scenario.workload is not None or scenario.trace is not None


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def main() -> None:
    digests = {}
    for path in list_scenarios():
        text = golden_text(path)
        if is_generated(path):
            digests[path.stem] = digest(text)
        else:
            (GOLDEN / f"{path.stem}.jsonl").write_text(text)
    (GOLDEN / "digests.json").write_text(json.dumps(digests, indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(list_scenarios())} golden logs to {GOLDEN}")


if __name__ == "__main__":
    main()
