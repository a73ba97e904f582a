"""Cost models grounded in hardware: a model on a GPU, priced as a real step is.

A decode step is memory-bound: it reads the weights once, then the keys and values of
every token in the batch's context; the prompt tokens it prefills are compute-bound.

    step seconds = weight bytes / bandwidth                          (the step's fixed cost)
                 + KV bytes per token × context tokens / bandwidth   (grows with context)
                 + 2 × parameters × prefill tokens / (peak FLOP/s × efficiency)

Each preset names its sources. A parameter keeps its cited value: a figure this model
gets wrong is reported as such, never tuned away.

Sources:
- [vLLM] W. Kwon et al., "Efficient Memory Management for Large Language Model Serving
  with PagedAttention", SOSP 2023, §2.3 and §3: OPT-13B's KV cache is 800 KB a token
  (2 × 5,120 hidden × 40 layers × 2 bytes); its 13B fp16 parameters take 26 GB of an
  A100-40GB.
- [A100] NVIDIA A100 Tensor Core GPU datasheet: 40GB: 1,555 GB/s HBM2; 80GB SXM:
  2,039 GB/s HBM2e; both 312 TFLOP/s dense fp16/bf16 Tensor Core.
- [Llama 2] H. Touvron et al., "Llama 2: Open Foundation and Fine-Tuned Chat Models",
  2023, Table 1 and the released config: Llama-2-7B has 6.74B parameters, 32 layers,
  hidden size 4,096 (so 2 × 4,096 × 32 × 2 bytes = 512 KiB of fp16 KV a token).
- [H100] NVIDIA H100 Tensor Core GPU datasheet: H100 SXM 80GB: 3.35 TB/s HBM3, 989 TFLOP/s
  dense bf16 Tensor Core (1,979 with sparsity).
- [PaLM] A. Chowdhery et al., "PaLM: Scaling Language Modeling with Pathways", 2022,
  Table 3: 46.2% model FLOPs utilisation, the dense-matmul efficiency used for prefill.
"""

from __future__ import annotations

from dataclasses import dataclass

from .metrics import CostModel

PREFILL_EFFICIENCY = 0.462  # [PaLM]: the share of peak FLOP/s that dense matrix maths reaches


@dataclass(frozen=True)
class Hardware:
    """One model on `gpus` GPUs (tensor parallel), in the units its sources give for one GPU.

    NOTE: `gpus` > 1 splits every step evenly, with no cost for the GPUs' all-reduces (NVLink's):
    the ideal a real split approaches but does not reach. The trace replays use it for a node of
    eight, enough to serve a real service's hour (engine/lab/trace_replay.py)."""

    name: str
    parameters: float  # model parameters
    weight_bytes: float  # the weights in memory (fp16: 2 bytes a parameter)
    kv_bytes_per_token: float  # keys and values of one token, every layer
    memory_bytes: float  # the GPU's memory
    bandwidth: float  # bytes/s of memory bandwidth
    peak_flops: float  # dense fp16 FLOP/s
    efficiency: float = PREFILL_EFFICIENCY
    gpus: int = 1  # GPUs the model is split over (tensor parallel, ideal: see the NOTE)

    def cost_model(self) -> CostModel:
        """This pairing's price of a step (see the module's formula)."""
        bandwidth, flops = self.bandwidth * self.gpus, self.peak_flops * self.gpus
        return CostModel(
            step_s=self.weight_bytes / bandwidth,
            row_s=0.0,  # a row costs what its context costs: see kv_token_s
            prefill_token_s=2 * self.parameters / (flops * self.efficiency),
            kv_token_s=self.kv_bytes_per_token / bandwidth,
            name=self.name,
        )

    def kv_pool_blocks(self, block_size: int) -> int:
        """KV blocks of `block_size` tokens in what the weights leave of the GPUs' memory."""
        return int((self.memory_bytes * self.gpus - self.weight_bytes) // (self.kv_bytes_per_token * block_size))


LLAMA_2_7B = {"parameters": 6.74e9, "weight_bytes": 2 * 6.74e9, "kv_bytes_per_token": 2 * 4096 * 32 * 2}  # [Llama 2]
H100 = {"memory_bytes": 80 * 2**30, "bandwidth": 3.35e12, "peak_flops": 989e12}  # H100 SXM [H100]

PRESETS = {
    hardware.name: hardware
    for hardware in (
        Hardware(  # Anyscale's setup: OPT-13B on one A100-40GB [vLLM], [A100]
            name="opt-13b-a100-40gb",
            parameters=13e9,
            weight_bytes=26e9,
            kv_bytes_per_token=2 * 5120 * 40 * 2,
            memory_bytes=40 * 2**30,
            bandwidth=1555e9,
            peak_flops=312e12,
        ),
        Hardware(  # a current pairing: Llama-2-7B on one A100-80GB SXM [Llama 2], [A100]
            name="llama-2-7b-a100-80gb", **LLAMA_2_7B, memory_bytes=80 * 2**30, bandwidth=2039e9, peak_flops=312e12
        ),
        Hardware(name="llama-2-7b-h100-80gb", **LLAMA_2_7B, **H100),  # the same model on one H100
        Hardware(name="llama-2-7b-8xh100-80gb", **LLAMA_2_7B, **H100, gpus=8),  # on eight: the trace replays' server
    )
}


COST_MODELS = ("default", *PRESETS)  # what a scenario's `cost` and the CLI's --cost may name


def cost_model(name: str) -> CostModel:
    """The cost model called `name`: "default" (metrics.CostModel's round figures) or a preset."""
    return CostModel() if name == "default" else preset(name).cost_model()


def preset(name: str) -> Hardware:
    """The preset called `name`; a KeyError names the ones there are."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown cost preset {name!r}; the presets are {', '.join(PRESETS)}") from None
