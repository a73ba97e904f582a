"""Correct, but writes to the real stdout and stderr every way it can: none of it may reach the checker."""

import os
import sys

from tests.solutions.correct import BatchInferenceEngine as Correct

os.write(1, b"{not json at import\n")
print("print at import")


class BatchInferenceEngine(Correct):
    def run(self):
        print("a print")
        print("to sys.__stdout__", file=sys.__stdout__, flush=True)
        os.write(1, b"os.write to fd 1\n")
        os.write(2, b"os.write to fd 2\n")
        os.system("echo from a child process; echo to stderr >&2")
        super().run()
