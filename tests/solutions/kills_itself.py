"""Ends its own process with the signal named in $KILL_SIGNAL (SIGXCPU: as the kernel does past the CPU limit)."""

import os
import signal

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def run(self):
        os.kill(os.getpid(), getattr(signal, os.environ["KILL_SIGNAL"]))
