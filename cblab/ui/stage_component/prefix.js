// The pool panel's prefix-cache parts (pool.js uses them for a run with prefix caching): the hit
// rate so far, the counts in the title, and the note on a clicked block naming every request
// that holds it, each a button that shows its block table. No state of its own but the block picked.

class PrefixPanel {
  static LEGEND = [["l-shared", "shared (×n: rows holding it; click for who)"], ["l-cached", "cached, free"],
    ["l-evicted", "cache evicted at this step"]];
  static CACHED_FREE = ", still caching a full block's tokens: a request whose tokens start the same way hits it,"
    + " until it is taken for a new use";
  static EVICTED = "; its cached tokens were dropped at this step (evicted), to take it for a new use";

  constructor(frames) {
    this.frames = frames;
    this.pool = frames.kv;
    this.picked = null;  // the block clicked last
    this.onSelect = null;
    // Hits so far: after admission i, the tokens looked up and the blocks hit (the summary's prefix_hit_rate).
    this.admissions = frames.raw.kv.admissions || [];
    this.lookedUp = [0];
    this.hitBlocks = [0];
    for (const [, , lookedUp, hits] of this.admissions) {
      this.lookedUp.push(this.lookedUp[this.lookedUp.length - 1] + lookedUp);
      this.hitBlocks.push(this.hitBlocks[this.hitBlocks.length - 1] + hits);
    }
    this.hits = el("div", "hits");
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
    return ` · ${state.holders.size.toLocaleString("en")} shared${by} · ${cachedFree.toLocaleString("en")} cached, free`
      + ` · ${state.evicted.size.toLocaleString("en")} evicted at this step`;
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
    this.hits.textContent = lookedUp ? `Prefix cache hits so far: ${n(hit)} of ${n(lookedUp)} tokens looked up at `
      + `admission (${Math.round((100 * hit) / lookedUp)} %)` : "Prefix cache hits so far: no admission yet";
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
