// The KV pool panel under a run's slot grid (only for a run with a pool): every block in its
// holder's colour (the grid's), filled as far as it holds tokens, hatched when reserved but
// empty, pale when free; a gauge of the pool's tokens; and the selected request's block table.
// With prefix caching (prefix.js): a shared block has a thick border and its count (×3), a free
// block that still caches its tokens is outlined with a dot, a block whose cached tokens were
// dropped at this step has a ring, and clicking a block names every request holding it.
// A big pool of which the run uses few blocks (7.6: 50 of 400) is drawn zoomed to those, large
// enough for their ids and counts; every figure names its unit (blocks or tokens).
// The boxes are made once and only those whose state changed are touched at each step.

import { PrefixPanel } from "./prefix.js";
import { el } from "./stage.js";

const MAX_DRAWN_BLOCKS = 8192;  // a bigger pool shows its gauge and block tables, not a box per block
const LABELLED_BLOCKS = 128;  // up to this many blocks, each box shows its id
const MAX_TABLE_ENTRIES = 256;  // a block table longer than this shows its first entries

export class PoolView {
  constructor(frames, parent, select) {
    this.frames = frames;
    this.pool = frames.kv;
    this.prefix = this.pool.prefixCaching ? new PrefixPanel(frames) : null;
    this.root = el("div", "kv");
    this.title = el("h4");
    this.gauge = el("div", "gauge");
    const parts = this.prefix ? ["held", "reserved", "cached", "free"] : ["held", "reserved", "free"];
    this.bars = parts.map((name) => this.gauge.appendChild(el("span", `g-${name}`)));
    this.numbers = el("div", "gauge-text");
    this.grid = el("div", "pool");
    this.unused = el("div", "unused");
    this.table = el("div", "blocktable");
    const key = el("div", "legend");
    for (const [cls, text] of [["l-full", "full"], ["l-part", "part-filled"], ["l-empty", "reserved, empty"],
      ["l-free", "free"], ...(this.prefix ? PrefixPanel.LEGEND : [])]) key.appendChild(el("span", cls, text));
    const beside = el("div", "poolrow");  // the boxes, and beside them who shares which (prefix caching)
    beside.append(this.grid, ...(this.prefix ? [this.prefix.sharing] : []));
    this.root.append(this.title, this.gauge, this.numbers, ...(this.prefix ? [this.prefix.hits] : []), beside,
      this.unused, key, ...(this.prefix ? [this.prefix.note] : []), this.table);
    parent.appendChild(this.root);
    const used = Math.max(1, Math.min(this.pool.used, this.pool.blocks));
    const blocks = this.pool.blocks > LABELLED_BLOCKS && used <= LABELLED_BLOCKS ? used : this.pool.blocks;
    if (blocks < this.pool.blocks) {
      const n = (value) => value.toLocaleString("en");
      this.unused.textContent = `Zoomed to the blocks this run uses: blocks ${n(blocks)}–${n(this.pool.blocks - 1)}`
        + ` (${n(this.pool.blocks - blocks)} of ${n(this.pool.blocks)} blocks) are never taken, so they are not drawn.`;
    }
    this.prefix?.showSharing(blocks <= LABELLED_BLOCKS);
    this.labelled = blocks <= LABELLED_BLOCKS;
    this.grid.classList.toggle("labelled", this.labelled);
    this.boxes = [];
    if (blocks <= MAX_DRAWN_BLOCKS) {
      for (let b = 0; b < blocks; b++) {
        const box = this.grid.appendChild(el("div", "blk free", this.labelled ? String(b) : undefined));
        box.dataset.block = String(b);
        this.boxes.push(box);
      }
    } else {
      this.grid.textContent = `${blocks.toLocaleString("en")} blocks: too many to draw one by one.`;
    }
    this.drawn = new Array(this.boxes.length).fill("");
    this.grid.onclick = (event) => {
      const box = event.target.closest(".blk");
      if (this.prefix && box) return select(this.prefix.pick(Number(box.dataset.block), this.at, this.selected));
      if (box && box.dataset.request !== undefined) select(Number(box.dataset.request));
    };
    if (this.prefix) this.prefix.onSelect = select;
  }

  // Per block at `step`: who holds it (-1: nobody; shared, the first of its holders), its logical index
  // and its tokens; with prefix caching, each block's references and the holders of each shared one.
  state(step) {
    const f = this.frames, pool = this.pool.at(step), size = pool.blockSize, shared = pool.prefixCaching;
    const fill = new Int32Array(pool.blocks), logical = new Int32Array(pool.blocks);
    const owner = shared ? new Int32Array(pool.blocks).fill(-1) : pool.owner, holders = new Map();
    for (const [request, table] of pool.tables) {
      const tokens = f.cached(request, step);
      table.forEach((block, i) => {
        if (shared) {
          if (pool.refs[block] > 1) (holders.get(block) || holders.set(block, []).get(block)).push(request);
          if (owner[block] !== -1) return;
          owner[block] = request;
        } else if (pool.owner[block] !== request) return;
        logical[block] = i;
        fill[block] = Math.max(0, Math.min(size, tokens - i * size));
      });
    }
    const evicted = new Set(shared ? pool.evictedAt(step) : []);
    return { owner, fill, logical, size, holders, refs: pool.refs, cached: pool.cached, evicted, shared };
  }

  render(step, selected) {
    this.at = step;
    this.selected = selected;
    const state = this.state(step), { owner, fill, size } = state;
    let held = 0, taken = 0, cachedFree = 0;
    for (let b = 0; b < owner.length; b++) {
      if (owner[b] === -1) {
        if (state.shared && state.cached[b]) cachedFree += 1;
        continue;
      }
      taken += 1;
      held += fill[b];
    }
    const mine = new Set(state.shared ? this.pool.tables.get(selected) || [] : []);
    this.boxes.forEach((box, b) => this.drawBox(box, b, state, state.shared ? mine.has(b) : owner[b] === selected));
    const capacity = this.pool.blocks * size, reserved = taken * size - held;
    const cached = cachedFree * size, free = capacity - taken * size - cached;
    this.title.textContent = `KV cache at step ${step.toLocaleString("en")}: ${taken.toLocaleString("en")} of `
      + `${counted(this.pool.blocks, "block")} held (${counted(size, "token")} a block, ${this.pool.policy}`
      + (this.prefix ? `, prefix caching)${this.prefix.counts(state, cachedFree)}` : ")");
    const values = this.prefix ? { held, reserved, cached, free } : { held, reserved, free };
    Object.values(values).forEach((value, i) => { this.bars[i].style.flexGrow = String(value); });
    Object.assign(this.gauge.dataset, values);
    this.numbers.replaceChildren(...[["g-held", held, "held"], ["g-reserved", reserved, "reserved but empty"],
      ...(this.prefix ? [["g-cached", cached, "cached, free"]] : []), ["g-free", free, "free"]]
      .map(([cls, value, what]) => el("span", cls, `${counted(value, "token")} ${what}`)),
    el("span", "", `of ${counted(capacity, "token")}`));
    if (this.prefix) this.prefix.render(step, state);
    this.renderTable(step, selected, state);
  }

  drawBox(box, b, state, chosen) {
    const request = state.owner[b], tokens = state.fill[b], index = state.logical[b], size = state.size;
    const refs = state.shared ? state.refs[b] : 1, cached = state.shared && state.cached[b] === 1;
    const evicted = state.evicted.has(b);
    const key = request === -1 ? `${cached}:${evicted}` : `${request}:${tokens}:${index}:${chosen}:${refs}:${evicted}`;
    if (key === this.drawn[b]) return;
    this.drawn[b] = key;
    if (request === -1) {
      box.className = `blk free${cached ? " cached" : ""}${evicted ? " evicted" : ""}`;
      delete box.dataset.request;
      delete box.dataset.refs;
      box.title = `block ${b}: free` + (cached ? PrefixPanel.CACHED_FREE : "");
      return;
    }
    const f = this.frames;
    const how = tokens === size ? "full" : tokens === 0 ? "empty" : "part";
    box.className = `blk k${f.colour(request)} ${how}${chosen ? " sel" : ""}${refs > 1 ? " shared" : ""}`
      + (evicted ? " evicted" : "");
    box.style.setProperty("--f", `${(100 * tokens) / size}%`);
    box.dataset.request = String(request);
    if (refs > 1) box.dataset.refs = String(refs); else delete box.dataset.refs;
    const who = refs > 1 ? `shared by ${listed(state.holders.get(b).map((r) => f.label(r)))} (${refs} references)`
      : `request ${f.label(request)}`;
    box.title = `block ${b}: ${who}, its logical block ${index}, ${tokens}/${size} tokens`
      + (tokens === 0 ? " (reserved, still empty)" : "") + (evicted ? PrefixPanel.EVICTED : "");
  }

  renderTable(step, selected, state) {
    const f = this.frames, { owner, fill, size } = state;
    this.table.replaceChildren();
    delete this.table.dataset.request;
    if (selected === null || selected === undefined) {
      this.table.appendChild(el("p", "hint", "Click a cell of the grid or a block to see its request's block table."));
      return;
    }
    this.table.dataset.request = f.label(selected);
    const table = (this.pool.tables.get(selected) || []).filter((block) => state.shared || owner[block] === selected);
    if (!table.length) {
      this.table.appendChild(el("h5", "", `Request ${f.label(selected)} holds no blocks at step ${step}.`));
      return;
    }
    const tokens = table.reduce((sum, block) => sum + fill[block], 0);
    this.table.appendChild(el("h5", "", `Request ${f.label(selected)}'s block table at step ${step}: `
      + `${table.length} blocks, ${tokens} tokens (logical → physical block, tokens held)`));
    const list = this.table.appendChild(el("div", "entries"));
    table.slice(0, MAX_TABLE_ENTRIES).forEach((block, i) => {
      const how = fill[block] === size ? "full" : fill[block] === 0 ? "empty" : "part";
      const refs = state.shared ? state.refs[block] : 1;
      const entry = list.appendChild(el("span", `entry blk k${f.colour(selected)} ${how}${refs > 1 ? " shared" : ""}`));
      entry.style.setProperty("--f", `${(100 * fill[block]) / size}%`);
      Object.assign(entry.dataset, { logical: i, block, fill: fill[block] });
      entry.append(el("b", "", `${i} → ${block}`), el("small", "", `${fill[block]}/${size}${refs > 1 ? ` ×${refs}` : ""}`));
    });
    if (table.length > MAX_TABLE_ENTRIES) list.appendChild(el("span", "", `and ${table.length - MAX_TABLE_ENTRIES} more`));
  }
}

// "1 block", "2 blocks", "1,024 tokens": every figure of the panel with its unit.
export function counted(value, unit) {
  return `${value.toLocaleString("en")} ${unit}${value === 1 ? "" : "s"}`;
}

// "A", "A and B", "A, B and C".
function listed(names) {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}
