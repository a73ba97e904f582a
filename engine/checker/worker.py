"""The subprocess that runs a user's solution: `python -m engine.checker.worker FILE CLASS`.

It loads the file, checks the class has the seeds' shape, prints one JSON line describing
it, then answers each case (one JSON line on stdin) with a trace (one JSON line on
stdout). The solution's own prints are sent to stderr so they cannot corrupt the protocol.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path

from .trace import run_case


def import_solution(path: str):
    """A file (`solution.py`) or an importable module (`engine.zoo`)."""
    file = Path(path)
    try:
        if path.endswith(".py"):
            if not file.is_file():
                raise ValueError(f"{path}: no such file")
            spec = importlib.util.spec_from_file_location("solution", file)
            module = importlib.util.module_from_spec(spec)
            sys.path.insert(0, str(file.parent.resolve()))
            spec.loader.exec_module(module)
            return module
        return importlib.import_module(path)
    except ValueError:
        raise
    except ModuleNotFoundError as exc:
        raise ValueError(f"{path}: not a .py file, and no module of that name ({exc})") from None
    except BaseException as exc:  # SyntaxError, SystemExit, anything the file does at import
        raise ValueError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from None


def load_class(path: str, name: str | None):
    """The solution class, or raise ValueError with a one-line reason."""
    module = import_solution(path)
    classes = {n: c for n, c in vars(module).items() if inspect.isclass(c) and c.__module__ == module.__name__}
    if name is not None:
        if name not in classes:
            raise ValueError(f"{path}: no class named {name} (classes: {', '.join(classes) or 'none'})")
        return classes[name]
    engines = [
        c
        for c in classes.values()
        if callable(getattr(c, "submit_request", None)) and callable(getattr(c, "run", None))
    ]
    if not engines:
        raise ValueError(f"{path}: no class with submit_request(...) and run() methods")
    preferred = [c for c in engines if c.__name__ == "BatchInferenceEngine"]
    if len(engines) > 1 and not preferred:
        raise ValueError(
            f"{path}: several engine classes ({', '.join(c.__name__ for c in engines)}); pick one with --class"
        )
    return (preferred or engines)[0]


def shape(engine_class) -> dict:
    """Check the seeds' signatures; report whether submit_request takes stop_sequences."""
    name = engine_class.__name__
    try:
        inspect.signature(engine_class).bind(object(), 1, 0)
    except TypeError:
        raise ValueError(f"{name}.__init__ must accept (model, batch_size, stop_token)") from None
    except ValueError:
        pass
    submit = inspect.signature(engine_class.submit_request)
    try:
        submit.bind(None, [1], 1, print)
    except TypeError:
        raise ValueError(f"{name}.submit_request must accept (prompt_tokens, max_tokens, callback)") from None
    params = submit.parameters
    stops = "stop_sequences" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    if not stops:
        try:
            submit.bind(None, [1], 1, print, [[1]])
            stops = True
        except TypeError:
            pass
    return {"class": name, "stop_sequences": stops}


def main(argv: list[str]) -> int:
    protocol = sys.stdout
    sys.stdout = sys.stderr  # the solution's prints must not reach the protocol stream
    try:
        engine_class = load_class(argv[0], argv[1] if len(argv) > 1 and argv[1] else None)
        info = shape(engine_class)
    except ValueError as exc:
        protocol.write(json.dumps({"load_error": str(exc)}) + "\n")
        protocol.flush()
        return 2
    protocol.write(json.dumps(info) + "\n")
    protocol.flush()
    for line in sys.stdin:
        case = json.loads(line)
        trace = run_case(engine_class, case, info["stop_sequences"])
        protocol.write(json.dumps(trace.to_json()) + "\n")
        protocol.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
