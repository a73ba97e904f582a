"""A trace's prompt and output lengths at a glance: median, p90 and p99, as Splitwise characterises the Azure
traces (Patel et al., ISCA 2024: coding prompts about 1,500 tokens and answers 13 at the median, conversation
about 1,020 and 129).

Percentiles are nearest-rank (numpy's "inverted_cdf"): the smallest length at least that share of the
requests have at most, so each figure is a length some request has, in whole tokens.
"""

from __future__ import annotations

import numpy as np

from .trace_table import TraceTable

PERCENTILES = {"median": 50, "p90": 90, "p99": 99}


def length_statistics(table: TraceTable) -> dict[str, dict[str, int]]:
    """{"prompt": {"median": ..., "p90": ..., "p99": ...}, "output": {...}}, in tokens."""
    columns = {"prompt": table.input_length, "output": table.output_length}
    return {
        name: {key: int(np.percentile(values, q, method="inverted_cdf")) for key, q in PERCENTILES.items()}
        for name, values in columns.items()
    }
