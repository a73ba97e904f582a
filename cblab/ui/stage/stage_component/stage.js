// The stage: plays a run (or two, side by side on one clock) in the browser, at any speed.
// Python sends the frames once (compressed: wire.js); play, pause, step, scrub, speed and the keys
// ←/→/space/Home/End run here, and the step is reported back (setStateValue("step")) when
// playback pauses, so the URL, the batch view and the other tabs follow.

import { readStageData, inflateFrames } from "./wire.js";
import { Frames } from "./frames.js";
import { PoolView, counted } from "./pool.js";
import "./kv.js";  // (frames.js and prefix.js import these: named here too, every file is fetched at once)
import "./prefix.js";

const KEEP_RUNS = 4;  // runs whose frames the page keeps (Python sends each run's frames once)
const FRAMES = new Map();  // run id -> [Frames]: outlives a stage, so a remounted stage needs no resend
const INFLATING = new Map();  // run id -> the promise of its frames, while they are inflated
const LIVE = new Set();  // the stages on the page
const DENSE_SLOTS = 24;  // above this many slots, cells show colour only (details on hover)
const REPORT_AFTER_MS = 250;  // a pause in stepping this long reports the step to Python
const ANIMATE_UP_TO = 4;  // steps per second up to which admitted chips fly into their slots
const SVG = "http://www.w3.org/2000/svg";
const MAX_CELL_CHARS = 12;  // a longer id or token is cut with an ellipsis (the hover has it whole)
const SHOWN_CHIPS = 60;  // the waiting queue's chips drawn; the rest are counted
const PROJECTED_CHIPS = 16;  // the same in presentation mode, where each chip is 24 px text
const NARROW = 640;  // px: below this the queue and the narration go under the grid (a phone)
const SHOWN = "cblab-stage-shown";  // a window event (and flag) once a stage first shows a run: page.js waits for it

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// The most characters a cell's id and its token show (a run's texts, worked out once).
function widestTexts(frames) {
  if (!frames.widest) {
    let id = 1, token = 1;
    for (const request of frames.requests) {
      id = Math.max(id, String(request.id).length);
      for (const t of request.tokens) token = Math.max(token, frames.tokenText(t).length);
    }
    frames.widest = [Math.min(id, MAX_CELL_CHARS), Math.min(token, MAX_CELL_CHARS)];
  }
  return frames.widest;
}

class RunView {
  // One run's grid and, for a run with a KV pool, the pool under it.
  constructor(frames, label, parent) {
    this.frames = frames;
    this.root = el("div", "run");
    if (label) this.root.appendChild(el("h4", "", label));
    this.grid = el("div", "grid");
    this.root.appendChild(this.grid);
    parent.appendChild(this.root);
    this.first = -1;  // the first display column on the page
    this.shown = -1;  // the column drawn as "now"
    this.selected = null;  // the request whose block table the pool panel shows (a click picks it)
    this.poolView = frames.kv ? new PoolView(frames, this.root, (request) => this.select(request)) : null;
    this.grid.onclick = (event) => {
      const cell = event.target.closest(".cell");
      if (cell && cell.dataset.request !== undefined) this.select(Number(cell.dataset.request));
    };
  }

  select(request) {
    this.selected = request;
    if (this.poolView) this.poolView.render(this.at, request);
  }

  // Rows tall enough for their text: two lines (id over token; three for "prefill x/y", four with
  // "(n cached)" under it), or one line (id and token side by side) when two do not fit the
  // screen's height, never less: a grid taller than the screen scrolls with the page rather
  // than clip its cells. Columns are as wide as the longest id and token shown.
  layout(projector, availableHeight) {
    const slots = this.frames.slots;
    this.dense = slots > DENSE_SLOTS;
    const unit = projector ? 24 : 14;
    const lines = this.frames.chunked ? (this.frames.prefillHits ? 4 : 3) : 2;
    const full = unit * 1.15 * lines + 8, one = unit * 1.2 + 8;
    const fit = availableHeight / slots - 2;
    const oneLine = !this.dense && fit < full;
    const row = this.dense ? Math.max(4, Math.min(14, fit)) : oneLine ? Math.max(one, fit) : full;
    this.grid.style.setProperty("--row", `${row}px`);
    this.grid.classList.toggle("dense", this.dense);  // colour only: narrow columns, a step number every 5th
    this.grid.classList.toggle("oneline", oneLine);
    const [id, token] = widestTexts(this.frames);
    const chars = oneLine ? id + 1 + token : Math.max(id, token, this.frames.chunked ? this.frames.prefillChars : 0);
    const cell = this.dense ? (projector ? 22 : 18) : Math.max(projector ? 96 : 58, Math.ceil(chars * unit * 0.62) + 12);
    this.grid.style.setProperty("--cell", `${cell}px`);
    const width = this.root.clientWidth || 800;
    this.perPage = Math.max(4, Math.floor((width - 5 * unit) / (cell + 2)));
    this.grid.style.gridTemplateColumns = `max-content repeat(${this.perPage}, var(--cell))`;
    this.first = -1;
  }

  // The page shown: perPage columns starting at a multiple of half a page, so that at
  // least half a page of history stays in view and the grid redraws whole only every
  // half page.
  pageOf(column) {
    const half = Math.max(1, Math.floor(this.perPage / 2));
    return Math.max(0, (Math.floor(column / half) - 1) * half);
  }

  render(step, force) {
    const f = this.frames;
    this.at = Math.min(step, f.steps - 1);
    if (this.poolView) this.poolView.render(this.at, this.selected);
    const column = f.columnOf(this.at);
    const first = this.pageOf(column);
    if (force || first !== this.first) {
      this.first = first;
      this.build();
      this.fill(first, column, column);
    } else if (column !== this.shown) {
      const crossed = this.crossesChange(this.shown, column);
      const from = crossed ? first : Math.min(this.shown, column);
      this.fill(from, Math.max(this.shown, column), column);
    }
    this.shown = column;
  }

  crossesChange(a, b) {
    const f = this.frames;
    const lo = f.columns[Math.min(a, b)].first, hi = f.columns[Math.max(a, b)].last;
    for (const step of f.changesAt) if (step >= lo && step <= hi) return true;
    return false;
  }

  build() {
    const f = this.frames;
    this.grid.replaceChildren();
    this.heads = [];
    this.cells = Array.from({ length: f.slots }, () => []);
    this.grid.appendChild(el("div", "slotname", "step"));
    for (let c = 0; c < this.perPage; c++) this.heads.push(this.grid.appendChild(el("div", "head")));
    for (let s = 0; s < f.slots; s++) {
      this.grid.appendChild(el("div", "slotname", this.dense && s % 8 ? "" : `slot ${s}`));
      for (let c = 0; c < this.perPage; c++) {
        const cell = el("div", "cell future");
        cell.append(el("span", "rid"), el("span", "tok"));
        this.cells[s].push(cell);
        this.grid.appendChild(cell);
      }
    }
    if (this.dense) {  // one outline around the "now" column instead of one per cell: cheaper to paint
      this.cursor = this.grid.appendChild(el("div", "cursor"));
      this.cursor.style.gridRow = `2 / span ${f.slots}`;
    }
  }

  // Redraw page columns from..to (display column numbers), `now` being the current one.
  fill(from, to, now) {
    const f = this.frames;
    const first = this.first;
    const nowStep = f.columns[now].first;
    if (this.dense) this.cursor.style.gridColumn = `${now - first + 2} / span 1`;  // (an abspos item: no end line would mean the grid's edge)
    for (let c = Math.max(from, first); c <= Math.min(to, first + this.perPage - 1); c++) {
      const i = c - first;
      const column = f.columns[c];
      const head = this.heads[i];
      if (!column) {
        head.replaceChildren();
        for (let s = 0; s < f.slots; s++) this.blank(this.cells[s][i], "cell future");
        continue;
      }
      head.className = "head" + (c === now ? " now" : "") + (f.faults.has(column.first) ? " fault" : "");
      const named = !this.dense || column.idle || column.first % 5 === 0;  // (dense: the bar says the step)
      head.replaceChildren(!named ? "" : column.idle ? "idle" : String(column.first));
      if (column.idle) head.appendChild(el("small", "", `until ${(column.last + 1).toLocaleString("en")}`));
      head.title = column.idle ? `idle: steps ${column.first}-${column.last}` : f.faults.has(column.first)
        ? "the model call failed here and the step was retried" : `step ${column.first}`;
      for (let s = 0; s < f.slots; s++) this.draw(this.cells[s][i], s, column, c, now, nowStep);
    }
  }

  blank(cell, className, title) {
    cell.className = className;
    delete cell.dataset.request;
    cell.firstChild.textContent = "";
    cell.lastChild.textContent = "";
    cell.title = title || "";
  }

  draw(cell, slot, column, c, now, nowStep) {
    const f = this.frames;
    if (c > now) return this.blank(cell, "cell future");
    if (column.idle) {
      return this.blank(cell, "cell idle" + (c === now ? " now" : ""), `idle until step ${column.last + 1}`);
    }
    const step = column.first;
    const info = f.cell(slot, step, nowStep);
    const here = c === now ? " now" : "";
    if (info.free) {
      return this.blank(cell, `cell${info.pad ? " pad" : ""}${here}`,
        info.pad ? `slot ${slot} · step ${step}: padded row (mask 0), its output ignored` : `slot ${slot} · step ${step}: free`);
    }
    const classes = ["cell", `k${f.colour(info.request)}`];
    if (info.admitted) classes.push("admit");
    if (info.evicted) classes.push("evict");
    if (info.preempted) classes.push("preempt");
    if (info.stop) classes.push("stop");
    if (info.partial && !info.stop) classes.push("partial");
    if (f.faults.has(step)) classes.push("fault");
    if (info.token === null) classes.push("prefill");
    cell.className = classes.join(" ") + here;
    cell.dataset.request = String(info.request);
    const id = f.label(info.request), prefill = info.prefill;
    // "prefill 32/544 (512 cached)": the tokens its prefill has computed so far of the row's whole target; the
    // ones it found in the prefix cache are said apart (on a line of their own), since it never computes them
    const cached = prefill && info.hit ? ` (${info.hit.toLocaleString("en")}\u00a0cached)` : "";
    const done = prefill && (prefill.computed - (info.hit || 0)).toLocaleString("en");
    const progress = prefill && `prefill ${done}/${info.target.toLocaleString("en")}${cached}`;
    cell.firstChild.textContent = this.dense ? "" : id;
    cell.lastChild.textContent = this.dense ? "" : info.token !== null ? f.tokenText(info.token) : progress || "…";
    const computed = prefill && `${progress}: ${prefill.tokens.toLocaleString("en")} tokens computed at this step`;
    const what = (info.token === null ? `no token at this step (${computed || "prefill under way"})`
      : `token ${info.token}${f.words[String(info.token)] ? ` (${f.words[String(info.token)]})` : ""}, position ${info.generated - 1}`)
      + (info.token !== null && prefill ? ` · ${computed}` : "");
    const marks = [info.admitted && "admitted", info.evicted && "evicted", info.preempted && "preempted next step",
      info.stop && "stop matched", info.partial && !info.stop && "a stop sequence part-way matched"].filter(Boolean);
    cell.title = `slot ${slot} · step ${step}: request ${id} · ${what}${marks.length ? ` · ${marks.join(", ")}` : ""}`;
  }
}

// A run's setup, told while a prediction hides the whole run (its configuration, which the lesson
// gives, and nothing a prediction may ask): "4 slots · a KV pool of 400 blocks of 16 tokens (paged, prefix caching)".
function setupOf(frames) {
  const kv = frames.kv;
  const pool = kv ? ` · a KV pool of ${counted(kv.blocks, "block")} of ${counted(kv.blockSize, "token")} (${kv.policy}`
    + `${kv.prefixCaching ? ", prefix caching" : ""})` : "";
  return `${counted(frames.slots, "slot")}${pool}`;
}

// Where `node` sits below the top of the page (Streamlit's main area, not the window, scrolls).
function pageTop(node) {
  const main = document.querySelector("[data-testid='stMain']");
  return node.getBoundingClientRect().top + (main ? main.scrollTop : window.scrollY);
}

// Whether keys pressed in `node` are its own: text fields, menus, radios (arrows pick an option), sliders.
function typing(node) {
  if (node.isContentEditable || ["TEXTAREA", "SELECT"].includes(node.tagName)) return true;
  return node.tagName === "INPUT" && !["checkbox", "button", "submit"].includes(node.type);
}

class Stage {
  constructor(parent) {
    LIVE.add(this);
    this.root = el("div", "stage");
    this.root.tabIndex = -1;  // focusable, so that presentation mode can give it the keys
    parent.appendChild(this.root);
    this.bar = el("div", "bar");
    this.buttons = {};
    for (const [action, text, hint] of [["home", "|◀", "first step (Home)"], ["prev", "◀", "previous step (←)"],
      ["play", "", "play or pause (space)"], ["next", "▶", "next step (→)"], ["end", "▶|", "last step (End)"]]) {
      const button = el("button", "", text);
      button.dataset.action = action;
      button.title = hint;
      button.onclick = () => this.act(action);
      this.buttons[action] = button;
      this.bar.appendChild(button);
    }
    this.speed = el("select");
    this.speed.dataset.action = "speed";
    this.speed.onchange = () => this.report && this.report("speed", Number(this.speed.value));
    this.slider = el("input");
    this.slider.type = "range";
    this.slider.min = "0";
    this.slider.oninput = () => this.go(Number(this.slider.value), true);
    this.where = el("span", "where");
    this.bar.append(this.speed, this.slider, this.where);
    this.body = el("div", "body");
    this.pane = el("div", "pane");
    this.runsBox = el("div", "runs");
    this.legend = el("div", "legend");
    for (const [cls, text] of [["l-admit", "admitted"], ["l-evict", "evicted"], ["l-preempt", "preempted"],
      ["l-stop", "stop matched"], ["l-partial", "stop part-way"]]) this.legend.appendChild(el("span", cls, text));
    this.setup = el("div", "setup");  // while a prediction hides the whole run: what it is run on
    this.pane.append(this.setup, this.runsBox, this.legend);
    this.side = el("div", "side");
    this.body.append(this.pane, this.side);
    this.root.append(this.bar, this.body);
    this.playing = false;
    this.playLabel();
    this.onKey = (event) => this.key(event);
    document.addEventListener("keydown", this.onKey);
    this.onResize = () => this.relayout();
    window.addEventListener("resize", this.onResize);
  }

  // The data as sent (wire.js): a header, and the frames of a run shown for the first time, which are
  // inflated before the header is applied. A header that arrives meanwhile waits for them.
  receive(bytes, report, trigger) {
    const { header, runs } = readStageData(bytes);
    this.latest = { header, report, trigger };
    if (runs.length) {
      const id = header.id;
      const inflating = Promise.all(runs.map(inflateFrames));
      INFLATING.set(id, inflating);
      inflating.then((raw) => {
        if (INFLATING.get(id) !== inflating) return;
        INFLATING.delete(id);
        FRAMES.delete(id);
        FRAMES.set(id, raw.map((frames) => new Frames(frames)));
        while (FRAMES.size > KEEP_RUNS) FRAMES.delete(FRAMES.keys().next().value);
        for (const stage of LIVE) {  // (this one, or the one that replaced it meanwhile)
          const latest = stage.latest;
          if (latest?.header.id === id) stage.update(latest.header, latest.report, latest.trigger);
        }
      }, () => {
        INFLATING.delete(id);
        trigger("missing", id);  // unreadable: Python sends them again
      });
    } else if (!INFLATING.has(header.id) || FRAMES.has(header.id)) {
      this.update(header, report, trigger);
    }
  }

  update(data, report, trigger) {
    this.report = report;
    const projector = Boolean(data.projector);
    const switched = projector !== this.root.classList.contains("projector");
    if (switched) {
      this.root.classList.toggle("projector", projector);
      if (data.id === this.id) this.relayout();
    }
    if (data.id !== this.id && !this.load(data, trigger)) return;  // (the same run: keep playing where we are)
    this.hold(data.limit ?? null, data.goto ?? null);
    if (!window[SHOWN]) {
      window[SHOWN] = true;
      window.dispatchEvent(new Event(SHOWN));
    }
    if (projector && (switched || !this.root.contains(document.activeElement))) this.takeKeys();
  }

  // A new run: its frames (just inflated, or kept from before), its views and its clock. False if
  // the browser no longer has its frames (Python sends them again on the next run).
  load(data, trigger) {
    if (!FRAMES.has(data.id)) {
      trigger("missing", data.id);
      return false;
    }
    this.pause(false);
    this.id = data.id;
    this.views = [];
    this.runsBox.replaceChildren();
    this.runs = FRAMES.get(data.id);
    this.speeds = data.speeds;
    this.speed.replaceChildren(...data.speeds.map((speed) => new Option(`${speed} steps/s`, String(speed))));
    this.runs.forEach((frames, i) => this.views.push(new RunView(frames, data.labels?.[i], this.runsBox)));
    this.setup.replaceChildren(el("p", "", "The run stays hidden until you answer the prediction above."),
      ...this.runs.map((frames, i) => el("p", "", (data.labels?.[i] ? `${data.labels[i]}: ` : "") + setupOf(frames))));
    // The clock: one position per display column (side by side: one per step of the longer run).
    const from = Math.min(...this.runs.map((f) => f.first));  // (a long run's window: its first step)
    this.clock = this.runs.length === 1 ? this.runs[0].columns.map((c) => c.first)
      : Array.from({ length: Math.max(...this.runs.map((f) => f.steps)) - from }, (_, i) => from + i);
    this.slider.max = String(this.clock.length - 1);
    this.speed.value = String(data.speed);
    this.position = Math.max(0, this.clock.findLastIndex((step) => step <= (data.start || 0)));
    this.limit = null;
    this.goto = data.goto ?? null;  // a new run starts at `start`, not at an old reveal
    this.relayout();
    if (this.step !== data.start) this.reportNow();  // inside an idle stretch: its column's first step
    return true;
  }

  // Predict, then reveal: while a prediction is open the stage shows no step at or after
  // `limit` (null: nothing is hidden; 0: no step at all), whatever plays, steps or scrubs. A
  // new `goto` ([the prediction's key, its step], once the learner has answered it) moves the
  // stage to that step.
  hold(limit, goto) {
    this.limit = limit;
    const unveiled = this.root.classList.contains("veiled") && limit !== 0;
    this.root.classList.toggle("veiled", limit === 0);  // (the grid is collapsed: laid out again once shown)
    if (unveiled) this.relayout();
    this.slider.max = String(this.lastPosition());
    if (goto !== null && goto[0] !== this.goto?.[0]) {
      this.goto = goto;
      this.pause(false);
      this.go(Math.max(0, this.clock.findLastIndex((step) => step <= goto[1])), false);
      // Reported at once, not after the usual pause: a report sent later could reach Python after
      // the learner's next click (Next lesson) and carry the page's widgets as they were before it.
      this.reportNow();
    } else if (this.position > this.lastPosition()) {
      this.pause(false);
      this.go(this.lastPosition(), true);
    }
    this.show(true);
  }

  lastPosition() {
    const last = this.clock.length - 1;
    return this.limit === null ? last : Math.max(0, this.clock.findLastIndex((step) => step < this.limit));
  }

  // The grid fits the window's height below the stage's top when the stage starts in the
  // window's upper part (a projector's screen shows it whole), else the window's height (the
  // page scrolls to it: a phone, a long lesson text); cells never shrink below one line of text.
  relayout() {
    if (!this.views) return;
    const projector = this.root.classList.contains("projector");
    this.root.classList.toggle("narrow", (this.root.clientWidth || 800) < NARROW);
    const unit = projector ? 24 : 14, height = window.innerHeight || 900;
    const top = pageTop(this.runsBox);
    const above = top > 0 && top < height * 0.6 ? top : this.bar.offsetHeight;
    // a projector's screen shows the pool too: the grid leaves it room (its rows go to one line first)
    if (projector) for (const view of this.views) view.poolView?.render(Math.min(this.step, view.frames.steps - 1), view.selected);
    const pool = projector ? Math.max(0, ...this.views.map((view) => view.poolView?.root.offsetHeight || 0)) : 0;
    const available = Math.max(160, height - above - this.legend.offsetHeight - 3 * unit - pool);
    for (const view of this.views) view.layout(projector, available);
    this.root.classList.toggle("dense", this.views.every((v) => v.dense));
    this.show(true);
  }

  get step() {
    return this.clock[this.position];
  }

  show(force) {
    const step = this.step;
    const animate = !force && Number(this.speed.value) <= ANIMATE_UP_TO;
    const before = animate ? this.queueRects() : null;  // (reading positions costs a layout: only when needed)
    for (const view of this.views) view.render(step, force);
    this.root.dataset.stageStep = String(step);
    this.slider.value = String(this.position);
    const last = this.clock[this.clock.length - 1];
    const column = this.runs[0].columns[this.runs[0].columnOf(step)];
    // Steps are numbered from 0, as in the log; while a prediction is open the run's length stays
    // hidden (a question may ask it).
    const n = (value) => value.toLocaleString("en");
    this.where.textContent = `Step ${n(step)}`
      + (this.runs.length === 1 && column.idle ? ` · idle until step ${n(column.last + 1)}` : "")
      + (this.limit === 0 ? " · answer the prediction to see the run"
        : this.limit !== null ? ` · answer the prediction to see step ${n(this.limit)}` : ` · steps ${n(this.clock[0])}–${n(last)}`)
      + (this.limit === null && this.runs[0].total > this.runs[0].steps - this.runs[0].first
        ? ` of the run's 0–${n(this.runs[0].total - 1)}` : "");
    this.playLabel();
    this.renderSide(step);
    if (animate) this.fly(before, step);
  }

  renderSide(step) {
    this.side.replaceChildren();
    this.runs.forEach((frames, i) => {
      const at = Math.min(step, frames.steps - 1);
      const waiting = frames.waiting(at);
      const head = el("div", "narration");
      head.appendChild(el("h4", "", `${this.runs.length > 1 ? `${this.views[i].root.firstChild.textContent}: ` : ""}`
        + `waiting queue at step ${at} (${waiting.length})`));
      const queue = el("div", "queue");
      const shown = this.root.classList.contains("projector") ? PROJECTED_CHIPS : SHOWN_CHIPS;
      for (const request of waiting.slice(0, shown)) {
        const chip = el("span", `chip k${frames.colour(request)}`, frames.label(request));
        chip.dataset.request = String(request);
        if (frames.kv) chip.onclick = () => this.views[i].select(request);
        queue.appendChild(chip);
      }
      if (waiting.length > shown) queue.appendChild(el("span", "", `and ${(waiting.length - shown).toLocaleString("en")} more`));
      const story = el("div", "narration");
      story.appendChild(el("h4", "", `Step ${at}`));
      const list = el("ul");
      for (const sentence of frames.narration(at)) list.appendChild(el("li", "", sentence));
      story.appendChild(list);
      this.side.append(head, queue, story);
    });
  }

  queueRects() {
    const rects = new Map();
    for (const chip of this.side.querySelectorAll(".chip")) rects.set(chip.dataset.request, chip.getBoundingClientRect());
    return rects;
  }

  // Admitted requests' chips fly from the queue into their slot (first run only).
  fly(before, step) {
    const frames = this.runs[0], view = this.views[0];
    const origin = this.root.getBoundingClientRect();
    const column = frames.columnOf(step) - view.first;
    for (const { request, slot } of frames.admittedAt(step)) {
      const from = before.get(String(request));
      const target = view.cells[slot]?.[column];
      if (!from || !target) continue;
      const to = target.getBoundingClientRect();
      const chip = el("span", `chip flying k${frames.colour(request)}`, frames.label(request));
      chip.style.left = `${from.left - origin.left}px`;
      chip.style.top = `${from.top - origin.top}px`;
      this.root.appendChild(chip);
      requestAnimationFrame(() => {
        chip.style.transform = `translate(${to.left - from.left}px, ${to.top - from.top}px)`;
        chip.style.opacity = "0.2";
      });
      setTimeout(() => chip.remove(), 500);
    }
  }

  go(position, fromUser) {
    const clamped = Math.max(0, Math.min(position, this.lastPosition()));
    if (clamped === this.position && !fromUser) return;
    this.position = clamped;
    this.show(false);
    if (fromUser) this.reportSoon();
  }

  act(action) {
    if (action === "play") return this.playing ? this.pause() : this.play();
    this.pause(false);
    const moves = { home: -Infinity, prev: -1, next: 1, end: Infinity };
    const target = action === "home" ? 0 : action === "end" ? this.lastPosition() : this.position + moves[action];
    this.go(target, true);
  }

  play() {
    if (this.position >= this.lastPosition()) this.go(0, false);  // Play at the end starts over
    this.playing = true;
    this.last = performance.now();
    this.credit = 0;
    this.show(false);
    const tick = (now) => {
      if (!this.playing) return;
      this.credit += ((now - this.last) / 1000) * Number(this.speed.value);
      this.last = now;
      if (this.credit >= 1) {
        const steps = Math.floor(this.credit);
        this.credit -= steps;
        this.go(this.position + steps, false);
        if (this.position >= this.lastPosition()) return this.pause();
      }
      this.frame = requestAnimationFrame(tick);
    };
    this.frame = requestAnimationFrame(tick);
  }

  pause(report = true) {
    const was = this.playing;
    this.playing = false;
    cancelAnimationFrame(this.frame);
    this.playLabel();
    if (was && report) this.reportNow();
  }

  // ▶ Play or ❚❚ Pause, drawn as inline SVG: not every font has a pause glyph.
  playLabel() {
    const button = this.buttons.play;
    if (button.dataset.playing === String(this.playing)) return;
    button.dataset.playing = String(this.playing);
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 10 10");
    svg.setAttribute("class", "icon");
    svg.setAttribute("aria-hidden", "true");
    const shapes = this.playing ? [[1.5, 1, 2.5, 8], [6, 1, 2.5, 8]] : null;
    if (shapes) {
      for (const [x, y, w, h] of shapes) {
        const bar = svg.appendChild(document.createElementNS(SVG, "rect"));
        Object.entries({ x, y, width: w, height: h }).forEach(([k, v]) => bar.setAttribute(k, String(v)));
      }
    } else {
      svg.appendChild(document.createElementNS(SVG, "path")).setAttribute("d", "M2 1 L9 5 L2 9 Z");
    }
    button.replaceChildren(svg, this.playing ? " Pause" : " Play");
  }

  reportSoon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reportNow(), REPORT_AFTER_MS);
  }

  reportNow() {
    clearTimeout(this.timer);
    if (this.report) this.report("step", this.step);
  }

  // In presentation mode the stage takes the keys from the start: focus moves to it, unless the
  // teacher is typing in a field (the Presentation switch itself keeps no focus).
  takeKeys() {
    let active = document.activeElement;
    while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
    if (active && active !== document.body && typing(active)) return;
    this.root.focus({ preventScroll: true });
  }

  key(event) {
    const target = event.composedPath()[0];
    if (!this.root.isConnected || !this.root.offsetParent) return;  // not on screen (another tab)
    if (target && target !== this.slider && typing(target)) return;
    const action = { ArrowLeft: "prev", ArrowRight: "next", " ": "play", Home: "home", End: "end" }[event.key];
    if (!action) return;
    const outside = target && !this.root.contains(target);  // a focused control of the page's own, not the stage's
    if (action === "play" && outside && ["BUTTON", "INPUT"].includes(target.tagName)) return;  // (space clicks it)
    event.preventDefault();
    this.act(action);
  }

  destroy() {
    LIVE.delete(this);
    this.pause(false);
    document.removeEventListener("keydown", this.onKey);
    window.removeEventListener("resize", this.onResize);
  }
}

const STAGES = new WeakMap();  // parentElement -> Stage: the component function runs again on every rerun

export default function (component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  let stage = STAGES.get(parentElement);
  if (!stage) {
    stage = new Stage(parentElement);
    STAGES.set(parentElement, stage);
  }
  stage.receive(data, setStateValue, setTriggerValue);
  return () => {
    setTimeout(() => {  // only when the element really left the page, not on a mere re-render
      if (!parentElement.isConnected && STAGES.get(parentElement) === stage) {
        stage.destroy();
        STAGES.delete(parentElement);
      }
    }, 0);
  };
}
