"""Colours shared by the grid, the batch view and the timeline."""

EMPTY = "#f3f4f6"  # a free slot
PADDED = "#9ca3af"  # a padded row sent to the model (mask 0)
REQUESTS = [  # one per request, cycling
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


def request_code(index: int) -> int:
    """Heatmap code of a request: 0 is an empty slot, 1 a padded row, then the palette."""
    return 2 + index % len(REQUESTS)


def discrete_colorscale() -> list[list]:
    """A Plotly colorscale mapping integer codes 0..n-1 to EMPTY, PADDED, REQUESTS."""
    colors = [EMPTY, PADDED, *REQUESTS]
    n = len(colors)
    scale = []
    for i, color in enumerate(colors):
        scale += [[i / n, color], [(i + 1) / n, color]]
    return scale


CODES = len(REQUESTS) + 2
