"""The batch as the model sees it at one step: the token matrix of that step's model call.

Padded mode draws the `batch_size × longest prefix` matrix, left-padded as decoder-only
models are, with the padding and the attention mask visible; ragged mode draws only the
occupied slots, each as long as its own prefix. Only the last positions are drawn, at most
`MAX_POSITIONS` and as many as fit the main column (`positions_that_fit`); the caption counts
the whole matrix. It is drawn as an HTML table in the request colours of the stage.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass

from cblab.ui import palette
from cblab.ui.stage.grid import token_label
from engine.analysis.replay import Replay

MAX_POSITIONS = 24
MIN_POSITIONS = 4  # drawn however long the labels (a narrower screen scrolls the table)
COLUMN_CH = {False: 120, True: 84}  # the main column's width in widths of a digit ("ch"), with a margin: 906 px
# of 13 px text at 1,400 px wide; with a projector, 24 px text in 1,086 px at 1,280 px wide
CELL_PADDING_CH = 2  # a cell's padding and border, either side together, in ch (13 px text: 6 + 6 + 2 px)


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
            lengths = lengths_text([len(p) for _, p, _ in self.rows])
            rows = "1 row of length" if len(self.rows) == 1 else f"{len(self.rows)} rows of lengths"
            return f"Ragged batch: {rows} {lengths}; nothing is padded."
        total = len(self.rows) * self.width
        fraction = self.padding_cells / total if total else 0.0
        return (
            f"Padded batch: a {len(self.rows)} × {self.width} matrix; {self.padding_cells} of its {total} "
            f"positions ({fraction:.0%}) are padding, masked out of attention."
        )


LISTED_LENGTHS = 8  # a batch of more rows summarises its prefix lengths


def lengths_text(lengths: list[int]) -> str:
    """`5, 3, 7`; for a big batch a summary: `512 (38 rows), 513 (2 rows)` or `512 to 900, median 530`."""
    if len(lengths) <= LISTED_LENGTHS:
        return ", ".join(f"{n:,}" for n in lengths)
    counts = Counter(lengths)
    if len(counts) <= 3:
        return ", ".join(f"{n:,} ({k} rows)" if k > 1 else f"{n:,} (1 row)" for n, k in sorted(counts.items()))
    ordered = sorted(lengths)
    return f"{ordered[0]:,} to {ordered[-1]:,}, median {ordered[len(ordered) // 2]:,}"


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


def positions_that_fit(view: BatchView, vocabulary: dict[int, str], projector: bool = False) -> int:
    """How many of the last positions to draw so that the table fits the main column: the row labels'
    column, then one column per position as wide as its widest text (a position or a token), at least
    two digits wide (the cells' min-width)."""
    labels = max((len(label) for label, _, _ in view.rows), default=0) + CELL_PADDING_CH
    last = [token_label(t, vocabulary) for _, prefix, _ in view.rows for t in (prefix or [])[-MAX_POSITIONS:]]
    text = max([2, len(f"{max(view.width - 1, 0)}")] + [len(t) for t in last])
    fit = (COLUMN_CH[projector] - labels) // (text + CELL_PADDING_CH)
    return min(view.width, MAX_POSITIONS, max(MIN_POSITIONS, fit))


def batch_table(view: BatchView, vocabulary: dict[int, str], projector: bool = False) -> str:
    """The matrix as an HTML table (no chart library, so the Grid tab paints sooner): one row
    per row sent, its label, then its last `MAX_POSITIONS` positions, padding in grey.

    One style sheet and a class per colour keep it small: a 64-row batch is sent on every
    step change."""
    shown = positions_that_fit(view, vocabulary, projector)
    start = view.width - shown  # the first position drawn
    size = 24 if projector else 13
    colours = "".join(f".batch-view .c{i}{{background:{c}}}" for i, c in enumerate(palette.REQUESTS))
    style = (
        f"<style>.batch-view table{{border-collapse:collapse}}"
        f".batch-view td,.batch-view th{{padding:{size // 3}px {size // 2}px;min-width:{2 * size}px;"
        f"text-align:center;border:2px solid white;font-size:{size}px;font-weight:400}}"
        f".batch-view th{{color:#6b7280}}.batch-view th.label{{text-align:right;white-space:nowrap;color:inherit}}"
        f".batch-view .pad{{background:{palette.PADDED}}}{colours}</style>"
    )
    head = "".join(f"<th>{start + c}</th>" for c in range(shown))
    body = []
    for label, prefix, colour in view.rows:
        tokens, cells = prefix or [], []
        offset = view.width - len(tokens) if view.padded else 0  # padded rows are left-padded
        for position in range(start, start + shown):
            if prefix is None or position < offset:
                cells.append("<td class=pad>pad</td>" if view.padded else "<td></td>")
            elif position - offset < len(tokens):
                text = html.escape(token_label(tokens[position - offset], vocabulary))
                cells.append(f"<td class=c{colour - 2}>{text}</td>")
            else:
                cells.append("<td></td>")
        body.append(f"<tr><th class=label>{html.escape(label)}</th>{''.join(cells)}</tr>")
    title = "position in the prefix" + (" (the last positions)" if start else "")
    return (
        f"{style}<div class=batch-view style='overflow-x:auto'><table>"
        f"<tr><th></th>{head}</tr>{''.join(body)}</table>"
        f"<div style='color:#6b7280;font-size:{size}px;margin-top:4px'>{title}</div></div>"
    )
