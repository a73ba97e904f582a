"""Writes $FORGED_ANSWER (a line) onto the checker's own answer pipe, found in the worker's argv."""

import os
import sys

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def run(self):
        os.write(int(sys.argv[2]), os.environ["FORGED_ANSWER"].encode() + b"\n")
        super().run()
