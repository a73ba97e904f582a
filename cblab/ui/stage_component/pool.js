// The KV pool panel under a run's slot grid (only for a run with a pool): every block in its
// holder's colour (the grid's), filled as far as it holds tokens, hatched when reserved but
// empty, pale when free; a gauge of the pool's tokens; and the selected request's block table.
// The boxes are made once and only those whose state changed are touched at each step.

const MAX_DRAWN_BLOCKS = 8192;  // a bigger pool shows its gauge and block tables, not a box per block
const LABELLED_BLOCKS = 128;  // up to this many blocks, each box shows its id
const MAX_TABLE_ENTRIES = 256;  // a block table longer than this shows its first entries

class PoolView {
  constructor(frames, parent, select) {
    this.frames = frames;
    this.pool = frames.kv;
    this.root = el("div", "kv");
    this.title = el("h4");
    this.gauge = el("div", "gauge");
    this.bars = ["held", "reserved", "free"].map((name) => this.gauge.appendChild(el("span", `g-${name}`)));
    this.numbers = el("div", "gauge-text");
    this.grid = el("div", "pool");
    this.table = el("div", "blocktable");
    const key = el("div", "legend");
    for (const [cls, text] of [["l-full", "full"], ["l-part", "part-filled"], ["l-empty", "reserved, empty"],
      ["l-free", "free"]]) key.appendChild(el("span", cls, text));
    this.root.append(this.title, this.gauge, this.numbers, this.grid, key, this.table);
    parent.appendChild(this.root);
    const blocks = this.pool.blocks;
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
      if (box && box.dataset.request !== undefined) select(Number(box.dataset.request));
    };
  }

  // Per block at `step`: who holds it (-1: nobody), its logical index and its tokens.
  state(step) {
    const f = this.frames, pool = this.pool.at(step), size = pool.blockSize;
    const fill = new Int32Array(pool.blocks), logical = new Int32Array(pool.blocks);
    for (const [request, table] of pool.tables) {
      const tokens = f.cached(request, step);
      table.forEach((block, i) => {
        if (pool.owner[block] !== request) return;
        logical[block] = i;
        fill[block] = Math.max(0, Math.min(size, tokens - i * size));
      });
    }
    return { owner: pool.owner, fill, logical, size };
  }

  render(step, selected) {
    const { owner, fill, logical, size } = this.state(step);
    let held = 0, taken = 0;
    for (let b = 0; b < owner.length; b++) {
      if (owner[b] === -1) continue;
      taken += 1;
      held += fill[b];
    }
    this.boxes.forEach((box, b) => this.drawBox(box, b, owner[b], fill[b], logical[b], size, selected));
    const capacity = this.pool.blocks * size, reserved = taken * size - held, free = capacity - taken * size;
    this.title.textContent = `KV cache at step ${step.toLocaleString("en")}: ${taken.toLocaleString("en")} of `
      + `${this.pool.blocks.toLocaleString("en")} blocks held (${size} tokens each, ${this.pool.policy})`;
    [held, reserved, free].forEach((value, i) => { this.bars[i].style.flexGrow = String(value); });
    Object.assign(this.gauge.dataset, { held, reserved, free });
    this.numbers.replaceChildren(...[["g-held", held, "tokens held"], ["g-reserved", reserved, "reserved but empty"],
      ["g-free", free, "free"]].map(([cls, value, what]) => el("span", cls, `${value.toLocaleString("en")} ${what}`)),
    el("span", "", `of ${capacity.toLocaleString("en")} tokens`));
    this.renderTable(step, selected, owner, fill, size);
  }

  drawBox(box, b, request, tokens, index, size, selected) {
    const key = request === -1 ? "" : `${request}:${tokens}:${index}:${request === selected}`;
    if (key === this.drawn[b]) return;
    this.drawn[b] = key;
    if (request === -1) {
      box.className = "blk free";
      delete box.dataset.request;
      box.title = `block ${b}: free`;
      return;
    }
    const f = this.frames;
    const how = tokens === size ? "full" : tokens === 0 ? "empty" : "part";
    box.className = `blk k${f.colour(request)} ${how}${request === selected ? " sel" : ""}`;
    box.style.setProperty("--f", `${(100 * tokens) / size}%`);
    box.dataset.request = String(request);
    box.title = `block ${b}: request ${f.label(request)}, its logical block ${index}, ${tokens}/${size} tokens`
      + (tokens === 0 ? " (reserved, still empty)" : "");
  }

  renderTable(step, selected, owner, fill, size) {
    const f = this.frames;
    this.table.replaceChildren();
    delete this.table.dataset.request;
    if (selected === null || selected === undefined) {
      this.table.appendChild(el("p", "hint", "Click a cell of the grid or a block to see its request's block table."));
      return;
    }
    this.table.dataset.request = f.label(selected);
    const table = (this.pool.tables.get(selected) || []).filter((block) => owner[block] === selected);
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
      const entry = list.appendChild(el("span", `entry blk k${f.colour(selected)} ${how}`));
      entry.style.setProperty("--f", `${(100 * fill[block]) / size}%`);
      Object.assign(entry.dataset, { logical: i, block, fill: fill[block] });
      entry.append(el("b", "", `${i} → ${block}`), el("small", "", `${fill[block]}/${size}`));
    });
    if (table.length > MAX_TABLE_ENTRIES) list.appendChild(el("span", "", `and ${table.length - MAX_TABLE_ENTRIES} more`));
  }
}
