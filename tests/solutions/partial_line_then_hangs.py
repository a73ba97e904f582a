"""Writes half a line to fd 1 and then sleeps: the time limit must still fire."""

import os
import time

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def run(self):
        os.write(1, b'{"calls": [')
        time.sleep(300)
