"""Writes 17 MiB to $BIG_FILE in run(): the file-size limit makes the write fail."""

import os

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def run(self):
        with open(os.environ["BIG_FILE"], "wb") as out:
            out.write(b"x" * (17 << 20))
        super().run()
