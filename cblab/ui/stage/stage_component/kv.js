// The KV pool at any step, rebuilt in the browser from the frames' `kv.ops`
// (engine/analysis/kv_frames.py has their format). No DOM here.
// Moving forward applies the ops since the last step shown; moving back restores the
// checkpoint saved every CHECKPOINT_OPS op entries and applies forward from there, so a
// jump anywhere costs at most that many entries.
// With prefix caching a block may be in several tables: `refs` counts them, and `cached` marks
// the blocks that hold a full block's tokens under their identity (a free one can still be hit).

import { bisectRight } from "./frames.js";

const CHECKPOINT_OPS = 64;

export class KVPool {
  constructor(kv) {
    this.blocks = kv.blocks;
    this.used = kv.used ?? kv.blocks;  // 1 + the highest block id the run takes
    this.mostRefs = kv.most_refs ?? null;  // the most rows that ever hold one block at once (null: not sent)
    this.blockSize = kv.block_size;
    this.policy = kv.policy;
    this.prefixCaching = Boolean(kv.prefix_caching);
    this.ops = kv.ops;
    this.owner = new Int32Array(kv.blocks).fill(-1);  // block -> request holding it, -1 free (prefix caching: the last to take it)
    this.refs = new Int32Array(kv.blocks);  // block -> tables holding it
    this.cached = new Uint8Array(kv.blocks);  // block -> 1 while it caches its tokens (prefix caching)
    this.tables = new Map();  // request -> its block table (physical ids, logical order)
    this.next = 0;  // the first ops entry not applied
    this.hint = 0;  // no block below this id is free
    this.checkpoints = [];  // [i]: the pool before ops entry i * CHECKPOINT_OPS
  }

  // Move the pool to `step` (as the step leaves it: after its evictions).
  at(step) {
    const target = bisectRight(this.ops, step, (entry) => entry[0]);
    if (target < this.next) this.restore(Math.floor(target / CHECKPOINT_OPS));
    while (this.next < target) {
      if (this.next % CHECKPOINT_OPS === 0 && !this.checkpoints[this.next / CHECKPOINT_OPS]) this.save();
      this.apply(this.ops[this.next++]);
    }
    return this;
  }

  // The blocks whose cached tokens were dropped at exactly `step` (taken for a new use).
  evictedAt(step) {
    const i = bisectRight(this.ops, step, (entry) => entry[0]) - 1;
    const out = [];
    if (i < 0 || this.ops[i][0] !== step) return out;
    for (const op of this.ops[i]) if (Array.isArray(op) && op[0] === "e") out.push(...op.slice(1));
    return out;
  }

  apply(entry) {
    for (let i = 1; i < entry.length; i++) {
      const op = entry[i];
      if (typeof op === "number") {
        if (op < 0) this.free(~op); else this.take(op, this.lowest());
      } else if (op[0] === "h") {
        for (let n = 2; n < op.length; n++) this.take(op[1], op[n]);
      } else if (op[0] === "c" || op[0] === "e") {
        for (let n = 1; n < op.length; n++) if (op[n] >= 0 && op[n] < this.blocks) this.cached[op[n]] = op[0] === "c" ? 1 : 0;
      } else if (op.length === 2) {
        for (let n = 0; n < op[1]; n++) this.take(op[0], this.lowest());
      } else {  // [r, n, b]: blocks b .. b+n-1; n < 0: b, b-1 .. b+n+1
        const step = Math.sign(op[1]);
        for (let n = 0; n < Math.abs(op[1]); n++) this.take(op[0], op[2] + step * n);
      }
    }
  }

  lowest() {
    while (this.hint < this.blocks && this.owner[this.hint] !== -1) this.hint++;
    return this.hint < this.blocks ? this.hint : -1;
  }

  take(request, block) {
    if (block < 0 || block >= this.blocks) return;
    this.owner[block] = request;
    this.refs[block] = this.prefixCaching ? this.refs[block] + 1 : 1;
    if (!this.tables.has(request)) this.tables.set(request, []);
    this.tables.get(request).push(block);
  }

  free(request) {
    for (const block of this.tables.get(request) || []) {
      if (this.prefixCaching) {
        this.refs[block] = Math.max(0, this.refs[block] - 1);
        if (!this.refs[block]) this.owner[block] = -1;
        continue;
      }
      if (this.owner[block] !== request) continue;  // (taken by another since: a hand-made log)
      this.owner[block] = -1;
      this.refs[block] = 0;
      this.hint = Math.min(this.hint, block);
    }
    this.tables.delete(request);
  }

  save() {
    const tables = [...this.tables].map(([request, table]) => [request, table.slice()]);
    this.checkpoints[this.next / CHECKPOINT_OPS] = {
      owner: this.owner.slice(), refs: this.refs.slice(), cached: this.cached.slice(), tables,
    };
  }

  restore(index) {
    const saved = this.checkpoints[index];
    this.owner.set(saved.owner);
    this.refs.set(saved.refs);
    this.cached.set(saved.cached);
    this.tables = new Map(saved.tables.map(([request, table]) => [request, table.slice()]));
    this.next = index * CHECKPOINT_OPS;
    this.hint = 0;
  }
}
