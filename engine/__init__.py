"""Continuous Batching Lab's engine: a mock-LLM continuous-batching scheduler and its log.

    from engine import BatchInferenceEngine, SimulatedLLM, MockModel, Request, generate

No UI imports here; the app, the metrics and the checker read `EventLog`s.
"""

from .engine import BatchInferenceEngine
from .errors import CallbackError, ModelError
from .events import Event, EventKind, EventLog
from .generate import generate
from .models import BatchModel, MockModel, PaddedBatchModel, SimulatedLLM
from .request import FinishReason, Request

__all__ = [
    "BatchInferenceEngine",
    "BatchModel",
    "CallbackError",
    "Event",
    "EventKind",
    "EventLog",
    "FinishReason",
    "MockModel",
    "ModelError",
    "PaddedBatchModel",
    "Request",
    "SimulatedLLM",
    "generate",
]
