// The pool panel's prefix-cache parts (pool.js uses them for a run with prefix caching): the hit
// rate so far, the counts in the title, who shares which blocks (a table beside a pool whose boxes are
// too small for their ×n, as runs of blocks with the same holders; a sentence for a run in which no
// block is ever shared), and the note on a clicked block naming every request that holds it, each a
// button that shows its block table. No state of its own but the block picked.

import { bisectRight } from "./frames.js";
import { counted } from "./pool.js";
import { el } from "./stage.js";

export class PrefixPanel {
  static LEGEND = [["l-shared", "shared (×n: rows holding it; click for who)"], ["l-cached", "cached, free"],
    ["l-evicted", "cache evicted at this step"]];
  static CACHED_FREE = ", still caching a full block's tokens: a request whose tokens start the same way hits it,"
    + " until it is taken for a new use";
  static EVICTED = "; its cached tokens were dropped at this step (evicted), to take it for a new use";
  static NEVER_SHARED = "No block is held by two rows at once in this run, so no block carries a count (×n):"
    + " each row that hits the cache finds blocks an earlier row has already let go (cached, free).";
  static MAX_RUNS = 12;  // rows of the sharing table; more are summed up in its last line

  constructor(frames) {
    this.frames = frames;
    this.pool = frames.kv;
    this.picked = null;  // the block clicked last
    this.onSelect = null;
    // Hits so far: after admission i, the tokens looked up and the blocks hit (the summary's prefix_hit_rate).
    this.admissions = frames.raw.kv.admissions || [];
    const before = frames.raw.kv.before || [0, 0];  // a window: the run's admissions before it, not listed
    this.lookedUp = [before[0]];
    this.hitBlocks = [before[1]];
    for (const [, , lookedUp, hits] of this.admissions) {
      this.lookedUp.push(this.lookedUp[this.lookedUp.length - 1] + lookedUp);
      this.hitBlocks.push(this.hitBlocks[this.hitBlocks.length - 1] + hits);
    }
    this.hits = el("div", "hits");
    this.sharing = el("div", "sharing");
    this.tabulate = false;  // whether the sharing table is drawn (pool.js: when the boxes carry no ×n)
    this.note = el("div", "blocknote");
    this.note.onclick = (event) => {
      const button = event.target.closest("button[data-request]");
      if (button && this.onSelect) this.onSelect(Number(button.dataset.request));
    };
  }

  // " · 32 shared (by up to 4 rows) · 1 cached, free · 1 evicted at this step", for the panel's title (a big
  // pool's boxes are too small for their ×n badges: the title says the most rows sharing one block).
  counts(state, cachedFree) {
    let most = 0;
    for (const holders of state.holders.values()) most = Math.max(most, holders.length);
    const by = most > 1 ? ` (by up to ${most} rows)` : "";
    return ` · ${counted(state.holders.size, "block")} shared${by} · ${counted(cachedFree, "block")} cached, free`
      + ` · ${counted(state.evicted.size, "block")} evicted at this step`;
  }

  // `labelled`: the pool's boxes are big enough to carry their ×n, so no sharing table is drawn.
  showSharing(labelled) {
    this.tabulate = !labelled && this.pool.mostRefs !== 1;
    if (this.pool.mostRefs === 1) this.sharing.append(el("p", "", PrefixPanel.NEVER_SHARED));
  }

  // The sharing table at a step: blocks, ×n, who; consecutive blocks with the same holders on one row.
  renderSharing(state) {
    if (!this.tabulate) return;
    const f = this.frames, runs = [];
    for (const block of [...state.holders.keys()].sort((a, b) => a - b)) {
      const holders = state.holders.get(block), who = holders.map((r) => f.label(r)).join(", ");
      const last = runs[runs.length - 1];
      if (last && last.who === who && last.to === block - 1) last.to = block;
      else runs.push({ from: block, to: block, who, n: holders.length });
    }
    this.sharing.replaceChildren();
    if (!runs.length) {
      this.sharing.append(el("p", "", "No block is shared at this step."));
      return;
    }
    const table = el("table");
    const head = table.appendChild(el("tr"));
    for (const text of ["blocks", "×n", "who (rows holding them)"]) head.appendChild(el("th", "", text));
    for (const { from, to, who, n } of runs.slice(0, PrefixPanel.MAX_RUNS)) {
      const row = table.appendChild(el("tr"));
      row.dataset.blocks = `${from}-${to}`;
      for (const text of [from === to ? `${from}` : `${from}–${to}`, `×${n}`, who]) row.appendChild(el("td", "", text));
    }
    if (runs.length > PrefixPanel.MAX_RUNS) {
      const rest = runs.slice(PrefixPanel.MAX_RUNS).reduce((sum, run) => sum + run.to - run.from + 1, 0);
      table.appendChild(el("tr")).appendChild(el("td", "", `and ${counted(rest, "block")} more`)).colSpan = 3;
    }
    this.sharing.append(table);
  }

  // A click on `block`: the request to select, one that holds it (the selected one if it does).
  pick(block, step, selected) {
    this.picked = block;
    const holders = this.holders(block, step);
    return holders.includes(selected) || !holders.length ? selected : holders[0];
  }

  holders(block, step) {
    return [...this.pool.at(step).tables].filter(([, table]) => table.includes(block)).map(([request]) => request);
  }

  render(step, state) {
    const n = (value) => value.toLocaleString("en");
    const i = bisectRight(this.admissions, step, (a) => a[1]);
    const lookedUp = this.lookedUp[i], hit = this.hitBlocks[i] * this.pool.blockSize;
    Object.assign(this.hits.dataset, { hit, lookedUp });
    this.renderSharing(state);
    this.hits.textContent = lookedUp ? `Prefix cache hits so far: ${n(hit)} of ${n(lookedUp)} tokens looked up at `
      + `admission (${Math.round((100 * hit) / lookedUp)}\u00a0%)` : "Prefix cache hits so far: no admission yet";
    this.note.replaceChildren();
    const block = this.picked;
    if (block === null) return;
    const f = this.frames, holders = this.holders(block, step);
    this.note.dataset.block = String(block);
    const head = `Block ${block} at step ${n(step)}: `;
    if (!holders.length) {
      const cached = state.cached[block] === 1;
      this.note.textContent = head + (cached ? "free, still caching its tokens (a later request may hit it)" : "free");
      return;
    }
    this.note.append(head + (holders.length > 1 ? `shared by ${holders.length} requests: ` : "held by "));
    for (const request of holders) {
      const button = el("button", `holder chip k${f.colour(request)}`, f.label(request));
      button.dataset.request = String(request);
      button.title = `show request ${f.label(request)}'s block table`;
      this.note.append(button);
    }
  }
}
