"""Colours shared by the stage, the batch view and the timeline: the one Python copy.

A request keeps one colour everywhere: `engine.analysis.frames.colours` gives each request
an index into REQUESTS, which the stage (cblab/ui/stage/stage_component/stage.css, --c0..--c11), the
batch view and the timeline all use, so teal always means the same request.
"""

EMPTY = "#f3f4f6"  # a free slot
PADDED = "#9ca3af"  # a padded row sent to the model (mask 0)
REQUESTS = [  # a request's colour by its frames colour index; stage.css's --c0..--c11 must match
    "#8dd3c7",
    "#fdb462",
    "#bebada",
    "#fb8072",
    "#80b1d3",
    "#b3de69",
    "#fccde5",
    "#ffed6f",
    "#bc80bd",
    "#ccebc5",
    "#a6cee3",
    "#e5c494",
]
ADMIT = "#15803d"
EVICT = "#b91c1c"
STOP_MATCH = "#b45309"
CURRENT = "#111827"
SHARED_BLOCK = "#1e3a8a"  # the border and badge of a KV block several rows share (stage.css --shared)
CACHED_BLOCK = "#374151"  # the dot and dashed border of a free block still caching its tokens (--cached)
CACHE_EVICTED = "#c2410c"  # the ring of a block whose cached tokens were dropped at this step (--cache-evicted)
OVER_TIME = {"active rows": "#1d4ed8", "queue depth": "#c2410c", "padded rows": PADDED}  # Metrics lines


def of_requests(colours: list[int], indices: list[int]) -> list[str]:
    """The colours of the requests at `indices` (into the log's requests), from frames' `colours`."""
    return [REQUESTS[colours[i]] for i in indices]


def request_code(colour: int) -> int:
    """Heatmap code of a request's colour index: 0 is an empty slot, 1 a padded row, then REQUESTS."""
    return 2 + colour % len(REQUESTS)


def discrete_colorscale() -> list[list]:
    """A Plotly colorscale mapping integer codes 0..n-1 to EMPTY, PADDED, REQUESTS."""
    colors = [EMPTY, PADDED, *REQUESTS]
    n = len(colors)
    scale = []
    for i, color in enumerate(colors):
        scale += [[i / n, color], [(i + 1) / n, color]]
    return scale


CODES = len(REQUESTS) + 2
