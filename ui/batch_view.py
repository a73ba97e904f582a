"""The batch as the model sees it at one step: the token matrix of that step's model call.

Padded mode draws the `batch_size × longest prefix` matrix, left-padded as decoder-only
models are, with the padding and the attention mask visible; ragged mode draws only the
occupied slots, each as long as its own prefix. Only the last `MAX_POSITIONS` positions
are drawn; the caption counts the whole matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from engine.analysis.replay import Replay
from ui import palette
from ui.grid import token_label

MAX_POSITIONS = 24
BOTTOM_MARGIN = 64  # px under the rows: tick labels, then the axis title clear of them


@dataclass
class BatchView:
    rows: list[tuple[str, list[int] | None, int]]  # (row label, prefix or None for padding, colour code)
    width: int  # longest prefix
    padded: bool

    @property
    def padding_cells(self) -> int:
        return sum(self.width - len(prefix or []) for _, prefix, _ in self.rows) if self.padded else 0

    def caption(self) -> str:
        if not self.rows:
            return "No model call at this step."
        if not self.padded:
            lengths = ", ".join(str(len(p)) for _, p, _ in self.rows)
            rows = "1 row of length" if len(self.rows) == 1 else f"{len(self.rows)} rows of lengths"
            return f"Ragged batch: {rows} {lengths}; nothing is padded."
        total = len(self.rows) * self.width
        fraction = self.padding_cells / total if total else 0.0
        return (
            f"Padded batch: a {len(self.rows)} × {self.width} matrix; {self.padding_cells} of its {total} "
            f"positions ({fraction:.0%}) are padding, masked out of attention."
        )


def batch_view(replay: Replay, step: int, colours: list[int] | None = None) -> BatchView:
    """The batch of `step`'s model call; `colours` (frames' colour per request index) matches the stage."""
    state, index = replay[step], replay.log.request_index
    colour = colours if colours is not None else range(len(replay.log.requests))  # by request index
    padded = replay.log.config.padded
    rows = []
    if state.rows_sent:
        for slot, row in enumerate(state.slots):
            if row is None or row.token is None:
                if padded and row is None:
                    rows.append((f"slot {slot} · mask 0", None, 1))
                continue
            prefix = replay.prefix(row.request_id, row.generated - 1)
            label = f"slot {slot} · mask 1" if padded else f"slot {slot}"
            rows.append((f"{label} · {row.request_id}", prefix, palette.request_code(colour[index[row.request_id]])))
    width = max((len(p) for _, p, _ in rows if p is not None), default=0)
    return BatchView(rows, width, padded)


def batch_figure(
    view: BatchView, vocabulary: dict[int, str], height_scale: float = 1.0, text_size: int = 12
) -> go.Figure:
    shown = min(view.width, MAX_POSITIONS)
    start = view.width - shown  # the first position drawn
    code = np.zeros((len(view.rows), shown), dtype=np.int16)
    text = np.full((len(view.rows), shown), "", dtype=object)
    for r, (_, prefix, colour) in enumerate(view.rows):
        tokens = prefix or []
        for c in range(shown):
            position = start + c
            if view.padded:
                offset = view.width - len(tokens)  # left padding
                if position < offset:
                    code[r, c], text[r, c] = 1, "pad"
                else:
                    code[r, c], text[r, c] = colour, token_label(tokens[position - offset], vocabulary)
            elif position < len(tokens):
                code[r, c], text[r, c] = colour, token_label(tokens[position], vocabulary)
    figure = go.Figure(
        go.Heatmap(
            z=code,
            text=text,
            texttemplate="%{text}",
            hoverinfo="text",
            x=[f"{start + c}" for c in range(shown)],
            y=[label for label, _, _ in view.rows],
            colorscale=palette.discrete_colorscale(),
            zmin=-0.5,
            zmax=palette.CODES - 0.5,
            showscale=False,
            xgap=2,
            ygap=2,
            textfont={"size": text_size},
        )
    )
    title = "position in the prefix" + (" (last positions)" if start else "")
    figure.update_layout(
        height=int(max(len(view.rows), 1) * 30 * height_scale) + 10 + BOTTOM_MARGIN,
        margin={"l": 10, "r": 10, "t": 10, "b": BOTTOM_MARGIN},  # room for the ticks, then the title below them
        xaxis={"title": {"text": title, "standoff": 14}, "type": "category", "automargin": True},
        yaxis={"autorange": "reversed"},
        plot_bgcolor="white",
        font_size=text_size,
    )
    return figure
