"""The subprocess that runs a user's solution.

    python -m engine.practice.checker.worker CASES_FD ANSWERS_FD TIMEOUT FILE [CLASS]

Before it imports the solution, it makes the two protocol pipes (CASES_FD in,
ANSWERS_FD out) non-inheritable, points fds 0, 1 and 2 at /dev/null (so nothing the
solution or its child processes read or print touches the protocol), starts a thread
that kills its process group if the checker goes away, and sets the resource limits of
`resources.py`. Then it loads the file, checks the class has the seeds' shape, writes one
JSON line describing it, and answers each case (one JSON line in: the case and its time
limit) with a trace (one JSON line out). A case that overruns is answered by the
watchdog (`watchdog.py`) with the trace so far.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

from .driver import run_case, stop_style
from .interruptions import offers
from .resources import apply_limits, load_time_limit, set_cpu_budget
from .scale.measuring import measure
from .trace import Trace
from .watchdog import Watchdog

OTHER_SHAPE = "; a solution of another shape can be checked through an adapter (docs/adapters.md)"
PARENT_POLL_SECONDS = 0.5  # how often the worker checks that the checker is still there
THREADS_END_SECONDS = 0.2  # after a case, how long the solution's threads get to end before they count as left
_module_numbers = itertools.count(1)


def import_solution(path: str):
    """A file (`solution.py`) or an importable module (`engine.practice.zoo`)."""
    file = Path(path)
    try:
        if path.endswith(".py"):
            if not file.is_file():
                raise ValueError(f"{path}: no such file")
            # registered in sys.modules before it runs: dataclasses and typing look the module up there
            name = f"_checked_solution_{next(_module_numbers)}"
            spec = importlib.util.spec_from_file_location(name, file)
            module = importlib.util.module_from_spec(spec)
            sys.path.insert(0, str(file.parent.resolve()))
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                sys.modules.pop(name, None)
                raise
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
        raise ValueError(f"{path}: no class with submit_request(...) and run() methods{OTHER_SHAPE}")
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
        raise ValueError(f"{name}.__init__ must accept (model, batch_size, stop_token){OTHER_SHAPE}") from None
    except ValueError:
        pass
    submit = inspect.signature(engine_class.submit_request)
    try:
        submit.bind(None, [1], 1, print)
    except TypeError:
        raise ValueError(
            f"{name}.submit_request must accept (prompt_tokens, max_tokens, callback){OTHER_SHAPE}"
        ) from None
    return {"class": name, "stop_sequences": stop_style(engine_class) is not None, "offers": offers(engine_class)}


def isolate(protocol_fds: tuple[int, ...]) -> None:
    """Keep the protocol to this process: child processes do not inherit it, and fds 0-2 lead nowhere."""
    for fd in protocol_fds:
        os.set_inheritable(fd, False)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    if devnull > 2:
        os.close(devnull)


def watch_parent() -> None:
    """Kill this process group (the worker and whatever the solution started) once the checker is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="checker-watch", daemon=True).start()


def answer_scale(answers, engine_class, message: dict) -> None:
    """One measurement of the scale section (`scale/measuring.py`); the checker's deadline bounds it."""
    answers.write(json.dumps(measure(engine_class, inspect.getsourcefile(engine_class) or "", message)) + "\n")
    answers.flush()


def main(argv: list[str]) -> int:
    cases_fd, answers_fd, timeout, path = int(argv[0]), int(argv[1]), float(argv[2]), argv[3]
    class_name = argv[4] if len(argv) > 4 and argv[4] else None
    isolate((cases_fd, answers_fd))
    cases = os.fdopen(cases_fd, "r", encoding="utf-8")
    answers = os.fdopen(answers_fd, "w", encoding="utf-8")
    watch_parent()  # the threads first: under the limits, RLIMIT_NPROC may forbid a new thread
    watchdog = Watchdog(answers)
    apply_limits(load_time_limit(timeout))
    try:
        engine_class = load_class(path, class_name)
        info = shape(engine_class)
    except ValueError as exc:
        answers.write(json.dumps({"load_error": str(exc)}) + "\n")
        answers.flush()
        return 2
    answers.write(json.dumps(info) + "\n")
    answers.flush()
    own_threads = threading.active_count()  # the checker's, and any the solution started on import
    for line in cases:
        message = json.loads(line)  # {"case": Case.to_json(), "timeout": seconds} or {"scale": ..., "timeout": ...}
        set_cpu_budget(message["timeout"])
        if "scale" in message:
            answer_scale(answers, engine_class, message["scale"])
            continue
        trace = Trace()
        watchdog.start(trace, message["timeout"])
        run_case(engine_class, message["case"], info["stop_sequences"], trace)
        trace.threads_left = threads_left(own_threads)
        watchdog.finish(trace)
    return 0


def threads_left(own_threads: int) -> int:
    """The solution's threads still running after a case (given a moment to end). The checker then replaces
    this worker: threads left hung would hold locks, CPU and the thread limit against later cases."""
    deadline = time.monotonic() + THREADS_END_SECONDS
    while threading.active_count() > own_threads and time.monotonic() < deadline:
        time.sleep(0.01)
    return max(threading.active_count() - own_threads, 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
