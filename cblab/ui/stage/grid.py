"""The slot grid: one row per slot, one column per step, coloured by the request holding it.

`grid_data` wraps a replay; `grid_figure` builds the cells of the columns it shows (the
last `columns_shown()` steps up to the current one: 200, or fewer for wide batches) and
adds the markers: admissions (▸), stop-sequence matches (the matched tail outlined) and
evictions (×). Only those columns are ever built, so a redraw costs the same whatever the
run's length; the Timeline tab shows the whole run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from cblab.ui import palette
from engine.analysis.replay import Replay
from engine.core.log.events import EventKind

MAX_COLUMNS = 200  # steps shown at once, at most
MAX_CELLS = 4_000  # and at most this many cells (64 slots: the last 62 steps), so a redraw stays light
MAX_LABELLED_CELLS = 2_500  # above this, tokens are in the hover text only


def token_label(token: int, vocabulary: dict[int, str]) -> str:
    return vocabulary.get(token, str(token))


@dataclass
class Window:
    """The cells of steps `first`..`last` and the markers that fall among them."""

    first: int
    last: int
    code: np.ndarray  # (slots, columns) int codes, see palette.request_code
    label: np.ndarray  # (slots, columns) str
    hover: np.ndarray  # (slots, columns) str
    admits: list[tuple[int, int]]  # (step, slot)
    evicts: list[tuple[int, int]]  # (step, slot): the last cell the evicted request held
    tails: list[tuple[int, int]]  # (step, slot) cells of matched stop tails


@dataclass
class GridData:
    replay: Replay
    vocabulary: dict[int, str]

    @property
    def batch_size(self) -> int:
        return self.replay.log.config.batch_size

    @property
    def steps(self) -> int:
        return len(self.replay)

    def window(self, first: int, last: int) -> Window:
        slots, columns = self.batch_size, last - first + 1
        code = np.zeros((slots, columns), dtype=np.int16)
        label = np.full((slots, columns), "", dtype=object)
        hover = np.full((slots, columns), "", dtype=object)
        view = Window(first, last, code, label, hover, [], [], [])
        for c, k in enumerate(range(first, last + 1)):
            self._column(view, c, k)
        self._boundary_cancellations(view)
        return view

    def _column(self, view: Window, c: int, k: int) -> None:
        replay, vocabulary = self.replay, self.vocabulary
        state, index, padded = replay[k], replay.log.request_index, replay.log.config.padded
        for s, row in enumerate(state.slots):
            if row is None:
                if padded and state.rows_sent:
                    view.code[s, c], view.label[s, c] = 1, "pad"
                    view.hover[s, c] = f"slot {s} · step {k}<br>padded row (mask 0): its output is ignored"
                else:
                    view.hover[s, c] = f"slot {s} · step {k}<br>free"
                continue
            view.code[s, c] = palette.request_code(index[row.request_id])
            event = "admitted" if row.admitted else ""
            if row.admitted:
                view.admits.append((k, s))
            if row.finish_reason:
                event = ", ".join(filter(None, [event, f"evicted ({row.finish_reason})"]))
                view.evicts.append((k, s))
            if row.stop_sequence is not None:
                back = min(len(row.stop_sequence), row.generated, k - view.first + 1)
                view.tails.extend((k - b, s) for b in range(back))
            if row.token is None and row.computed is not None:  # a chunked prefill under way
                target = row.prompt_len + row.generated
                text, where = f"{row.computed}/{target}", f"prefill: {row.computed} of {target} tokens in the KV cache"
            elif row.token is None:
                text, where = "…", "no token (the step's model call failed)"
            else:
                text = token_label(row.token, vocabulary)
                where = f"position {row.generated - 1} · token {row.token}" + (
                    f" ({vocabulary[row.token]!r})" if row.token in vocabulary else ""
                )
            view.label[s, c] = text
            view.hover[s, c] = f"slot {s} · step {k}<br>request {row.request_id} · {where}" + (
                f"<br>{event}" if event else ""
            )

    def _boundary_cancellations(self, view: Window) -> None:
        """A row cancelled at a step's start is marked on its own last cell, the step before."""
        log = self.replay.log
        for k in range(view.first + 1, view.last + 2):
            for i in log.step_range(k):
                if log.kind[i] == EventKind.MODEL_CALL:
                    break
                if log.kind[i] == EventKind.EVICT and log.slot[i] >= 0 and k - 1 <= view.last:
                    view.evicts.append((k - 1, log.slot[i]))


def grid_data(replay: Replay, vocabulary: dict[int, str]) -> GridData:
    return GridData(replay, vocabulary)


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
    view = data.window(first, step)
    x = list(range(first, step + 1))
    cells = data.batch_size * len(x)
    gap = 2 if width <= 60 and data.batch_size <= 32 else 0
    heatmap = go.Heatmap(
        z=view.code,
        x=x,
        y=list(range(data.batch_size)),
        text=view.label if cells <= MAX_LABELLED_CELLS else None,
        texttemplate="%{text}" if cells <= MAX_LABELLED_CELLS else None,
        hovertext=view.hover,
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
                view.tails,
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
                view.admits,
                first,
                step,
                -0.38,
                name="admitted",
                marker={"symbol": "triangle-right", "size": marker_size, "color": palette.ADMIT},
            ),
            _markers(
                view.evicts,
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
