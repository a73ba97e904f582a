"""What one engine step runs through: its Python calls, functions and source files in engine/.

    python benchmarks/trace_step.py [--case plain|budget|kv|all] [--verbose] [--json]

Each case warms an engine up to a mid-run step, then traces exactly one `engine.step()` with
`sys.setprofile`, counting the 'call' events of Python functions whose code is in the engine
package (C functions and the standard library are left out; a comprehension or generator
expression is a function of its own, a generator counts each resumption):

- plain: continuous batching, batch 4, six requests (four decode, two wait), no memory options;
- budget: `token_budget=8`: two rows decode while a 24-token prompt prefills in chunks of 6;
- kv: a paged KV pool (`kv_blocks=16, block_size=4`), the step where every row takes a new block.

The model is `MockModel(stop_chance=0)`, so the figures are the same every run (for one Python
version: 3.12 inlines list comprehensions). It is in the package (engine/core/models.py), so its
own calls are counted, and also shown apart. `--verbose` lists the calls in order, indented by
depth (engine frames only), so a reader can follow the step.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import BatchInferenceEngine, MockModel  # noqa: E402

PACKAGE = Path(sys.modules["engine"].__file__).parent  # the engine imported, whichever tree it comes from
PREFIX = str(PACKAGE) + os.sep
MODELS = "engine/core/models.py"  # the mock model's own calls: counted, and shown apart


def new_engine(**options) -> BatchInferenceEngine:
    return BatchInferenceEngine(MockModel(stop_chance=0.0), 4, 0, **options)


def plain() -> tuple[BatchInferenceEngine, int]:
    engine = new_engine()
    for i in range(6):
        engine.submit_request([1 + i, 2, 3], 8 + 2 * i)
    return engine, 3


def budget() -> tuple[BatchInferenceEngine, int]:
    engine = new_engine(token_budget=8)
    for i in range(2):
        engine.submit_request([1 + i, 2, 3], 16)
    engine.submit_request(list(range(1, 25)), 8, arrival_step=2)  # prefills 6 tokens a step from step 2
    return engine, 3


def kv() -> tuple[BatchInferenceEngine, int]:
    engine = new_engine(kv_blocks=16, block_size=4, kv_policy="paged")
    for i in range(3):
        engine.submit_request([1 + i, 2, 3], 12)  # 3 prompt tokens: the 5th token needs a 2nd block
    return engine, 2


CASES = {"plain": plain, "budget": budget, "kv": kv}


def trace(name: str) -> dict:
    """Warm the case's engine up, then trace its next step."""
    engine, warm = CASES[name]()
    for _ in range(warm):
        engine.step()
    calls: list[tuple[int, str, int, str]] = []  # (depth, file, first line, function), in call order
    stack: list[bool] = []  # per open Python frame: is it the engine's?

    def profile(frame, event, arg) -> None:
        if event == "call":
            code = frame.f_code
            ours = code.co_filename.startswith(PREFIX)
            if ours:
                rel = Path(code.co_filename).relative_to(PACKAGE.parent).as_posix()
                calls.append((sum(stack), rel, code.co_firstlineno, code.co_qualname))
            stack.append(ours)
        elif event == "return" and stack:
            stack.pop()

    step = engine.clock
    sys.setprofile(profile)  # from here to setprofile(None), only engine.step() runs Python code
    try:
        engine.step()
    finally:
        sys.setprofile(None)
    log = engine.event_log
    return {
        "case": name,
        "step": step,
        "events": dict(Counter(log[i].kind for i in log.step_range(step))),
        "calls": len(calls),
        "model_calls": sum(file == MODELS for _, file, _, _ in calls),
        "functions": len({(file, line) for _, file, line, _ in calls}),
        "files": sorted({file for _, file, _, _ in calls}),
        "trace": [f"{'  ' * depth}{file}:{function}" for depth, file, _, function in calls],
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=[*CASES, "all"], default="all")
    parser.add_argument("--verbose", action="store_true", help="list every call, in order, indented by depth")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = [trace(name) for name in (CASES if args.case == "all" else [args.case])]
    if not args.verbose:
        for result in results:
            del result["trace"]
    if args.json:
        print(json.dumps(results, indent=2))
        return results
    for result in results:
        events = ", ".join(f"{kind} {n}" for kind, n in result["events"].items())
        print(f"{result['case']}: step {result['step']} ({events})")
        calls, model, functions = result["calls"], result["model_calls"], result["functions"]
        print(f"  {calls} calls ({model} in the model), {functions} distinct functions, {len(result['files'])} files:")
        for file in result["files"]:
            print(f"    {file}")
        for line in result.get("trace", []):
            print(f"    {line}")
    return results


if __name__ == "__main__":
    main()
