"""Continuous Batching Lab's engine: a mock-LLM continuous-batching scheduler and its log.

    from engine import BatchInferenceEngine, SimulatedLLM, MockModel, Request, generate

No UI imports here; the app, the metrics and the checker read `EventLog`s.

Two words the code uses throughout: "the seeds" are the four interview problem statements
the project grew out of (implement the decoding loop of an LLM server over a mock
`model(batch) -> next_tokens`: static batching, then continuous batching, stop sequences,
a padded batch with a mask, streaming, cancellation); "the contract" is
`docs/conventions.md`, the project's one answer to each question they leave open
(`max_tokens` does not count the prompt, the stop token is not in the output, ...).
"""

from .core.config import EngineConfig
from .core.engine import BatchInferenceEngine
from .core.errors import CallbackError, ModelError
from .core.generate import generate
from .core.log.event_log import EventLog
from .core.log.events import Event, EventKind
from .core.models import BatchModel, MockModel, PaddedBatchModel, SimulatedLLM
from .core.request import FinishReason, Request

__all__ = [
    "BatchInferenceEngine",
    "BatchModel",
    "CallbackError",
    "EngineConfig",
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
