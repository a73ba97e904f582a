// A run's frames (engine/analysis/frames.py), decoded into lookups the stage asks every frame.
// No DOM here: `Frames` answers "what is in slot s at step k", "who waits", "what happened".

import { KVPool } from "./kv.js";

export function bisectRight(sorted, value, key) {
  let lo = 0, hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(sorted[mid]) <= value) lo = mid + 1; else hi = mid;
  }
  return lo;
}

export class Frames {
  constructor(raw) {
    this.raw = raw;
    this.slots = raw.slots;
    this.steps = raw.steps;
    this.requests = raw.requests;
    this.words = raw.words || {};
    this.bySlot = Array.from({ length: raw.slots }, () => []);
    for (const [slot, request, first, last, how] of raw.occupancy) this.bySlot[slot].push({ request, first, last, how });
    this.bySlot.forEach((held) => held.sort((a, b) => a.first - b.first));
    this.emitRuns = raw.requests.map(() => []);
    for (const [request, first, count] of raw.emits) this.emitRuns[request].push({ first, count });
    for (const runs of this.emitRuns) {
      let offset = 0;
      for (const run of runs) { run.offset = offset; offset += run.count; }
    }
    this.preempted = new Set(raw.preempted.map(([request, step]) => `${request}:${step}`));
    this.partial = new Set(raw.partial.map(([request, step]) => `${request}:${step}`));
    this.faults = new Set(raw.faults);
    this.calls = new Map(raw.calls.map(([step, rows, padded]) => [step, { rows, padded }]));
    this.stopAt = new Map();  // "request:step" of a matched tail cell -> the step its stop completes
    this.changesAt = new Set();  // steps at which an earlier cell changes (an outline, a late ×)
    for (const [request, step, length] of raw.stops) {
      this.changesAt.add(step);
      for (const cellStep of this.lastEmits(request, step, length)) this.stopAt.set(`${request}:${cellStep}`, step);
    }
    for (const held of this.bySlot) for (const o of held) if (o.how === 2) this.changesAt.add(o.last + 1);
    this.prefillAt = new Map();  // "request:step" -> { tokens, computed }: a run with a pool or a budget
    this.prefillsOf = raw.requests.map(() => []);
    for (const [request, step, tokens, computed] of raw.prefills || []) {
      this.prefillAt.set(`${request}:${step}`, { tokens, computed });
      this.prefillsOf[request].push({ step, computed });
    }
    this.kv = raw.kv ? new KVPool(raw.kv) : null;
    this.hitsOf = raw.requests.map(() => []);  // prefix caching: per request, [step, blocks hit] per admission
    for (const [request, step, , hits] of raw.kv?.admissions || []) this.hitsOf[request]?.push([step, hits]);
    // Chunked prefill: some cell reads "prefill 1,527/4,000" (it gets no token): the grid is wider.
    this.chunked = (raw.prefills || []).some(([request, step]) => this.tokenAt(request, step) === null);
    const mostHit = (raw.kv?.admissions || []).reduce((most, a) => Math.max(most, a[3]), 0) * (raw.kv?.block_size || 0);
    this.prefillHits = mostHit > 0;  // a prefill cell may read "(512 cached)" on a line of its own
    this.prefillChars = Math.max(13, mostHit ? `(${mostHit.toLocaleString("en")} cached)`.length : 0);  // its widest line
    this.busy = raw.busy;
    this.first = raw.first || 0;  // a long run's window starts here (engine/analysis/window_frames.py)
    this.total = raw.total ?? raw.steps;  // the whole run's steps (a window's `steps` ends at its last step + 1)
    this.columns = this.displayColumns();
  }

  // Busy steps one column each; a stretch of idle steps (the clock jumped over them) is one column.
  displayColumns() {
    const columns = [];
    let next = this.first;
    for (const step of this.busy) {
      if (step > next) columns.push({ first: next, last: step - 1, idle: true });
      columns.push({ first: step, last: step, idle: false });
      next = step + 1;
    }
    if (next < this.steps) columns.push({ first: next, last: this.steps - 1, idle: true });
    return columns;
  }

  columnOf(step) {
    return Math.max(0, bisectRight(this.columns, step, (c) => c.first) - 1);
  }

  colour(request) {
    return this.raw.colours[request];
  }

  label(request) {
    return this.requests[request].id;
  }

  tokenText(token) {
    return token === null || token === undefined ? "" : (this.words[String(token)] ?? String(token));
  }

  // The tokens a request emitted, by step: the steps of its last `count` emits up to `step`.
  lastEmits(request, step, count) {
    const out = [];
    const runs = this.emitRuns[request];
    for (let i = runs.length - 1; i >= 0 && out.length < count; i--) {
      const run = runs[i];
      for (let s = Math.min(step, run.first + run.count - 1); s >= run.first && out.length < count; s--) out.push(s);
    }
    return out;
  }

  tokenAt(request, step) {
    const runs = this.emitRuns[request];
    const i = bisectRight(runs, step, (r) => r.first) - 1;
    if (i < 0 || step >= runs[i].first + runs[i].count) return null;
    return this.requests[request].tokens[runs[i].offset + step - runs[i].first];
  }

  generatedBy(request, step) {
    const runs = this.emitRuns[request];
    const i = bisectRight(runs, step, (r) => r.first) - 1;
    if (i < 0) return 0;
    return runs[i].offset + Math.min(step - runs[i].first + 1, runs[i].count);
  }

  // Tokens of the request in the KV cache after `step`: its last prefill's total, plus one a
  // step it emitted at since (each step writes the token sampled the step before).
  cached(request, step) {
    const prefills = this.prefillsOf[request];
    const i = bisectRight(prefills, step, (p) => p.step) - 1;
    if (i < 0) return 0;
    return prefills[i].computed + this.generatedBy(request, step) - this.generatedBy(request, prefills[i].step);
  }

  // Prefix caching: the tokens the request found in the cache at its latest admission up to `step`.
  hitTokens(request, step) {
    const admissions = this.hitsOf[request];
    const i = bisectRight(admissions, step, (a) => a[0]) - 1;
    return i < 0 ? 0 : admissions[i][1] * this.kv.blockSize;
  }

  // What slot `slot` shows at `step`, seen from `now` (markers of later events stay hidden).
  cell(slot, step, now) {
    const held = this.bySlot[slot];
    const i = bisectRight(held, step, (o) => o.first) - 1;
    const o = i >= 0 ? held[i] : null;
    if (!o || step > o.last) {
      const call = this.calls.get(step);
      return { free: true, pad: this.raw.padded && call !== undefined && call.padded > 0 };
    }
    const key = `${o.request}:${step}`;
    const stopStep = this.stopAt.get(key);
    const leftEarly = o.how === 2 && step === o.last && now > step;
    const token = this.tokenAt(o.request, step), generated = this.generatedBy(o.request, step);
    return {
      request: o.request,
      token,
      admitted: step === o.first,
      evicted: (o.how === 1 && step === o.last) || (leftEarly && !this.preempted.has(`${o.request}:${step + 1}`)),
      preempted: leftEarly && this.preempted.has(`${o.request}:${step + 1}`),
      stop: stopStep !== undefined && now >= stopStep,
      partial: this.partial.has(key),
      generated,
      prefill: this.prefillAt.get(key),  // with the tokens it is to hold: prompt and generated so far
      hit: this.kv?.prefixCaching ? this.hitTokens(o.request, step) : 0,  // of them, found in the prefix cache
      target: this.requests[o.request].prompt + generated - (token === null ? 0 : 1),
    };
  }

  waiting(step) {
    return this.raw.waits
      .filter(([, from, until]) => from <= step && step < until)
      .sort((a, b) => a[3] - b[3])
      .map(([request]) => request);
  }

  admittedAt(step) {
    const out = [];
    this.bySlot.forEach((held, slot) => {
      for (const o of held) if (o.first === step) out.push({ request: o.request, slot });
    });
    return out;
  }

  narration(step) {
    const said = this.raw.narration[String(step)]; // indices into raw.sentences (each sentence sent once)
    if (said) return said.map((i) => this.raw.sentences[i]);
    const next = this.busy[bisectRight(this.busy, step, (s) => s)] ?? this.raw.next_busy ?? undefined;
    if (next === undefined) return ["Nothing happens at this step."];
    return [`Idle: nothing runs or waits until step ${next.toLocaleString("en")}, when the next request arrives.`];
  }
}
