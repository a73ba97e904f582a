"""Resource limits for the worker process that runs a user's solution.

The worker sets them on itself before it imports the solution, so they also bind every
process the solution starts (limits are inherited). They are a second line of defence:
the checker's wall-clock limit per case, and killing the worker's process group, do the
main work (`sandbox.py`). Each limit and why:

| limit        | value                                       | past it                                   |
|--------------|---------------------------------------------|-------------------------------------------|
| RLIMIT_AS    | 1 GiB of address space                      | allocations fail: MemoryError             |
| RLIMIT_CPU   | soft: CPU used so far + case's limit + 1 s  | SIGXCPU ends the worker (a crash)         |
|              | hard: 3600 s over the worker's life         | SIGKILL                                   |
| RLIMIT_FSIZE | 16 MiB per file written                     | the write fails: OSError (File too large) |
| RLIMIT_CORE  | 0                                           | no core dump                              |
| RLIMIT_NPROC | 256 processes (threads included)            | fork and thread creation fail             |

RLIMIT_NPROC counts every process of the user, not just the worker's, and the kernel
does not enforce it for root: killing the process group is what stops leftovers.
A limit is only ever lowered (an existing lower hard limit wins).
"""

from __future__ import annotations

import math
import os
import signal

try:
    import resource
except ImportError:  # not on POSIX: no limits, the wall-clock limit and the kill still apply
    resource = None

ADDRESS_SPACE_BYTES = 1 << 30  # RLIMIT_AS: 1 GiB; numpy with one BLAS thread needs about 100 MB
CPU_GRACE_SECONDS = 1  # RLIMIT_CPU soft limit: CPU used so far + the case's time limit + this
CPU_LIFETIME_SECONDS = 3600  # RLIMIT_CPU hard limit: a worker's whole life (the kernel SIGKILLs past it)
FILE_SIZE_BYTES = 16 << 20  # RLIMIT_FSIZE: 16 MiB per file
CORE_BYTES = 0  # RLIMIT_CORE: no core dumps
PROCESSES = 256  # RLIMIT_NPROC: all the user's processes and threads; not enforced for root
LOAD_TIME_LIMIT = 10.0  # seconds at least for importing the solution (numpy alone can take 1 s)

# One thread per math library: each BLAS thread reserves address space, and a machine with
# 64 cores would otherwise need more than ADDRESS_SPACE_BYTES just to import numpy.
THREAD_VARIABLES = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}


def load_time_limit(timeout: float) -> float:
    """Seconds allowed for loading the solution, given the per-case limit."""
    return max(timeout, LOAD_TIME_LIMIT)


def worker_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The worker's environment: `base` (default: this process's) with one thread per math library."""
    return {**(os.environ if base is None else base), **THREAD_VARIABLES}


def _lower(kind: int, soft: int, hard: int) -> None:
    """Set a limit, never above the current hard limit; silently skipped where unsupported."""
    try:
        _, current_hard = resource.getrlimit(kind)
        if current_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, current_hard), min(hard, current_hard)
        resource.setrlimit(kind, (soft, hard))
    except (ValueError, OSError):
        pass


def apply_limits(first_cpu_budget: float) -> None:
    """Every limit of the table above, in the worker, before the solution is imported."""
    if resource is None:
        return
    _lower(resource.RLIMIT_AS, ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES)
    _lower(resource.RLIMIT_FSIZE, FILE_SIZE_BYTES, FILE_SIZE_BYTES)
    _lower(resource.RLIMIT_CORE, CORE_BYTES, CORE_BYTES)
    _lower(resource.RLIMIT_NPROC, PROCESSES, PROCESSES)
    _lower(resource.RLIMIT_CPU, CPU_LIFETIME_SECONDS, CPU_LIFETIME_SECONDS)
    set_cpu_budget(first_cpu_budget)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big write raises OSError instead of killing


def cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def set_cpu_budget(seconds: float) -> None:
    """Allow `seconds` more CPU time (+ the grace): the soft RLIMIT_CPU, raised again before each case."""
    if resource is None:
        return
    soft = math.ceil(cpu_used() + seconds) + CPU_GRACE_SECONDS
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
    except (ValueError, OSError):
        pass
