"""The project's engine, which has cancel(request_id) and the contract's fault behaviour, and says so."""

from engine import BatchInferenceEngine as Reference


class BatchInferenceEngine(Reference):
    handles_faults = ("model", "callback")
