"""Correct, claiming the contract's model faults, but a model error is retried in run() and never raised."""

from tests.solutions.correct import BatchInferenceEngine as Correct


class BatchInferenceEngine(Correct):
    handles_faults = ("model",)

    def run(self):
        while True:
            try:
                return super().run()
            except Exception:  # the model failed: try the step again
                continue
