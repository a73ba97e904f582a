"""Asks for 2 GiB in run(): the address-space limit turns it into a MemoryError, a failing case."""

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    def run(self):
        self.hoard = bytearray(2 << 30)
        super().run()
