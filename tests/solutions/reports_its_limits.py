"""Correct, and at import writes what its process looks like to $LIMITS_REPORT (JSON)."""

import json
import os
import resource
import signal
import sys

from tests.solutions.correct import BatchInferenceEngine as Correct

LIMITS = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_NPROC")
protocol = [int(fd) for fd in sys.argv[1:3]]
report = {
    "limits": {name: list(resource.getrlimit(getattr(resource, name))) for name in LIMITS},
    "sigxfsz ignored": signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN,
    "fds 0-2": [os.readlink(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)],
    "protocol inheritable": [os.get_inheritable(fd) for fd in protocol],
    "own group and session": os.getpgrp() == os.getpid() == os.getsid(0),
    "threads": {name: os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")},
}
with open(os.environ["LIMITS_REPORT"], "w") as out:
    json.dump(report, out)


class BatchInferenceEngine(Correct):
    pass
