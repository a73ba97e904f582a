"""Correct, but starts processes that would sleep for 5 minutes, marked with $LEFTOVER_MARKER.

Three are its own children, one is orphaned by a shell: all must be killed after each case.
"""

import os
import shlex
import subprocess
import sys

from tests.solutions.correct import BatchInferenceEngine as Correct

SLEEPER = [sys.executable, "-c", "import time; time.sleep(300)", os.environ["LEFTOVER_MARKER"]]


class BatchInferenceEngine(Correct):
    def run(self):
        for _ in range(3):
            subprocess.Popen(SLEEPER)
        os.system(shlex.join(SLEEPER) + " &")
        super().run()
