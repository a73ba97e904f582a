"""The slot grid: one row per slot, one column per step, coloured by the request holding it.

`grid_data` turns a replay into cell arrays once (cached with the run); `grid_figure`
slices them up to the current step and adds the markers: admissions (▸), stop-sequence
matches (the matched tail outlined) and evictions (×). Long runs show the last
`columns_shown()` steps (200, or fewer for wide batches), so playback stays smooth; the
Timeline tab shows the whole run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go

from engine.replay import Replay
from ui import palette

MAX_COLUMNS = 200  # steps shown at once, at most
MAX_CELLS = 4_000  # and at most this many cells (64 slots: the last 62 steps), so a redraw stays light
MAX_LABELLED_CELLS = 2_500  # above this, tokens are in the hover text only


def token_label(token: int, vocabulary: dict[int, str]) -> str:
    return vocabulary.get(token, str(token))


@dataclass
class GridData:
    batch_size: int
    code: np.ndarray  # (slots, steps) int codes, see palette.request_code
    label: np.ndarray  # (slots, steps) str
    hover: np.ndarray  # (slots, steps) str
    admits: list[tuple[int, int]] = field(default_factory=list)  # (step, slot)
    evicts: list[tuple[int, int, str]] = field(default_factory=list)  # (step, slot, reason)
    tails: list[tuple[int, int, str]] = field(default_factory=list)  # (step, slot, matched sequence)

    @property
    def steps(self) -> int:
        return self.code.shape[1]


def grid_data(replay: Replay, vocabulary: dict[int, str]) -> GridData:
    log = replay.log
    slots, steps = log.settings.batch_size, len(replay)
    code = np.zeros((slots, steps), dtype=np.int16)
    label = np.full((slots, steps), "", dtype=object)
    hover = np.full((slots, steps), "", dtype=object)
    index = log.request_index
    padded = log.settings.padded
    for k, state in enumerate(replay.states):
        for s, row in enumerate(state.slots):
            if row is None:
                if padded and state.rows_sent:
                    code[s, k], label[s, k] = 1, "pad"
                    hover[s, k] = f"slot {s} · step {k}<br>padded row (mask 0): its output is ignored"
                else:
                    hover[s, k] = f"slot {s} · step {k}<br>free"
                continue
            code[s, k] = palette.request_code(index[row.request_id])
            event = "admitted" if row.admitted else ""
            if row.finish_reason:
                event = ", ".join(filter(None, [event, f"evicted ({row.finish_reason})"]))
            if row.token is None:
                text, where = "…", "no token (the step's model call failed)"
            else:
                text = token_label(row.token, vocabulary)
                where = f"position {row.generated - 1} · token {row.token}" + (
                    f" ({vocabulary[row.token]!r})" if row.token in vocabulary else ""
                )
            label[s, k] = text
            hover[s, k] = f"slot {s} · step {k}<br>request {row.request_id} · {where}" + (
                f"<br>{event}" if event else ""
            )
    data = GridData(slots, code, label, hover)
    for e in log:
        if e.kind == "admit":
            data.admits.append((e.step, e.slot))
        elif e.kind == "evict" and e.slot is not None:
            data.evicts.append((e.step, e.slot, e.reason))
        elif e.kind == "stop_match":
            for back in range(len(e.sequence)):
                data.tails.append((e.step - back, e.slot, str(list(e.sequence))))
    return data


def _markers(points, first: int, last: int, dx: float, **style) -> go.Scatter:
    shown = [p for p in points if first <= p[0] <= last]
    return go.Scatter(x=[p[0] + dx for p in shown], y=[p[1] for p in shown], mode="markers", hoverinfo="skip", **style)


def columns_shown(batch_size: int) -> int:
    return max(20, min(MAX_COLUMNS, MAX_CELLS // batch_size))


def grid_figure(
    data: GridData, step: int, height_scale: float = 1.0, highlight: tuple[int, int] | None = None
) -> go.Figure:
    """The grid up to `step` (its last `columns_shown` columns); `highlight` outlines one (step, slot) cell."""
    shown = columns_shown(data.batch_size)
    first = max(0, step - shown + 1)
    width = min(shown, data.steps)  # columns the axis leaves room for, so cells keep their size
    columns = slice(first, step + 1)
    x = list(range(first, step + 1))
    cells = data.batch_size * len(x)
    gap = 2 if width <= 60 and data.batch_size <= 32 else 0
    heatmap = go.Heatmap(
        z=data.code[:, columns],
        x=x,
        y=list(range(data.batch_size)),
        text=data.label[:, columns] if cells <= MAX_LABELLED_CELLS else None,
        texttemplate="%{text}" if cells <= MAX_LABELLED_CELLS else None,
        hovertext=data.hover[:, columns],
        hoverinfo="text",
        colorscale=palette.discrete_colorscale(),
        zmin=-0.5,
        zmax=palette.CODES - 0.5,
        showscale=False,
        xgap=gap,
        ygap=gap,
        name="slots",
    )
    marker_size = max(5, min(12, 600 // max(len(x), 1)))
    figure = go.Figure(
        [
            heatmap,
            _markers(
                data.tails,
                first,
                step,
                0.0,
                name="stop matched (token or sequence)",
                marker={
                    "symbol": "square-open",
                    "size": marker_size * 2.2,
                    "color": palette.STOP_MATCH,
                    "line": {"width": 3},
                },
            ),
            _markers(
                data.admits,
                first,
                step,
                -0.38,
                name="admitted",
                marker={"symbol": "triangle-right", "size": marker_size, "color": palette.ADMIT},
            ),
            _markers(
                [(k, s) for k, s, _ in data.evicts],
                first,
                step,
                0.38,
                name="evicted",
                marker={"symbol": "x-thin", "size": marker_size, "color": palette.EVICT, "line": {"width": 2}},
            ),
        ]
    )
    if highlight is not None and first <= highlight[0] <= step:
        figure.add_trace(
            _markers(
                [highlight],
                first,
                step,
                0.0,
                name="first difference",
                marker={"symbol": "square-open", "size": marker_size * 3, "color": palette.EVICT, "line": {"width": 4}},
            )
        )
    figure.add_vrect(
        x0=step - 0.5, x1=step + 0.5, line={"color": palette.CURRENT, "width": 2}, fillcolor="rgba(0,0,0,0)"
    )
    rows_height = max(12, min(48, 640 // data.batch_size)) * data.batch_size
    figure.update_layout(
        height=int((rows_height + 90) * height_scale),
        margin={"l": 60, "r": 10, "t": 30, "b": 40},
        xaxis={"title": "step", "dtick": 1 if width <= 40 else None, "range": [first - 0.5, first + width - 0.5]},
        yaxis={"title": "slot", "range": [data.batch_size - 0.5, -0.5], "dtick": 1 if data.batch_size <= 32 else None},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        plot_bgcolor="white",
        uirevision="grid",
    )
    return figure
