"""Starts a process marked with $LEFTOVER_MARKER that would sleep for 5 minutes, then hangs itself."""

import os
import subprocess
import sys
import time

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def run(self):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", os.environ["LEFTOVER_MARKER"]])
        time.sleep(300)
