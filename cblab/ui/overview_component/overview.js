// A long run's overview (cblab/ui/overview_chart.py sends its buckets): one panel per series over simulated
// time, drawn as SVG at the panel's real width, the window the stage plays shaded. A click centres the
// window there, a drag picks the steps under it: either is sent to Python as the trigger "pick"
// ({center} or {first, last}, in steps). Hovering reads a bucket's figures out. No library: it draws at once.

const SVGNS = "http://www.w3.org/2000/svg";
const LEFT = 44, PROJECTOR_LEFT = 64;  // px for a panel's y labels
const CLICK_PX = 4;  // a drag shorter than this is a click

function node(tag, attrs, parent, text) {
  const made = tag === "div" || tag === "span" ? document.createElement(tag) : document.createElementNS(SVGNS, tag);
  for (const [key, value] of Object.entries(attrs || {})) made.setAttribute(key, String(value));
  if (text !== undefined) made.textContent = text;
  if (parent) parent.appendChild(made);
  return made;
}

// Ticks at 1, 2 or 5 times a power of ten, about `count` of them, from 0 to `top`.
function ticks(top, count) {
  if (!(top > 0)) return [0];
  const raw = top / count, power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const out = [];
  for (let t = 0; t <= top + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}

const number = (value) => value.toLocaleString("en", { maximumFractionDigits: 1 });

class Overview {
  constructor(parent) {
    this.root = node("div", { class: "overview" }, parent);
    this.readout = node("div", { class: "readout" }, this.root, " ");
    this.box = node("div", { class: "panels" }, this.root);
    // Redrawn when its width changes (a window resized, the sidebar hidden by presentation mode).
    this.drawnWidth = 0;
    this.resized = new ResizeObserver(() => {
      if ((this.root.clientWidth || 0) !== this.drawnWidth) this.draw();
    });
    this.resized.observe(this.root);
  }

  update(data, trigger) {
    this.data = data;
    this.trigger = trigger;
    this.draw();
  }

  // x in px of a simulated time, and the bucket under a px.
  xOf(seconds) {
    return this.left + (seconds / this.span) * this.width;
  }

  bucketAt(px) {
    const seconds = ((px - this.left) / this.width) * this.span, x = this.data.x;
    let lo = 0, hi = x.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (x[mid] < seconds) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  draw() {
    const d = this.data;
    if (!d) return;
    this.root.classList.toggle("projector", Boolean(d.projector));
    this.drawnWidth = this.root.clientWidth || 0;
    this.left = d.projector ? PROJECTOR_LEFT : LEFT;
    this.width = Math.max(60, (this.root.clientWidth || 800) - this.left - 8);
    this.span = Math.max(d.x[d.x.length - 1] || 0, 1e-9);
    this.box.replaceChildren();
    d.panels.forEach((panel, i) => this.panel(panel, i === d.panels.length - 1));
  }

  panel(panel, last) {
    const d = this.data, height = d.projector ? 70 : 80, axis = last ? (d.projector ? 50 : 36) : 4;
    node("div", { class: "title" }, this.box, panel.title);
    const svg = node("svg", { width: this.width + this.left + 8, height: height + axis, "data-series": panel.name }, this.box);
    const top = Math.max(panel.top, 1e-9), y = (v) => 4 + (1 - v / top) * (height - 8);
    const [x0, x1] = d.window.map((s) => this.xOf(s));
    node("rect", { class: "window", x: x0, y: 0, width: Math.max(x1 - x0, 2), height }, svg);
    for (const t of ticks(top, 2)) {
      node("line", { class: "grid", x1: this.left, x2: this.left + this.width, y1: y(t), y2: y(t) }, svg);
      node("text", { class: "label", x: this.left - 6, y: y(t) + 5, "text-anchor": "end" }, svg, number(t));
    }
    const xs = d.x.map((s) => this.xOf(s).toFixed(1));
    if (panel.low) {  // the band from each bucket's smallest to its largest value
      const up = panel.high.map((v, i) => `${xs[i]},${y(v).toFixed(1)}`);
      const down = panel.low.map((v, i) => `${xs[i]},${y(v).toFixed(1)}`).reverse();
      node("polygon", { class: "band", points: [...up, ...down].join(" "), fill: panel.colour }, svg);
    }
    let path = "", pen = "M";
    panel.high.forEach((v, i) => {
      if (v === null) { pen = "M"; return; }  // (a bucket without a value: a gap)
      path += `${pen}${xs[i]},${y(v).toFixed(1)}`;
      pen = "L";
    });
    node("path", { class: "line", d: path, stroke: panel.colour }, svg);
    if (last) {
      for (const t of ticks(this.span, Math.max(2, Math.floor(this.width / 90)))) {
        node("text", { class: "label", x: this.xOf(t), y: height + (d.projector ? 22 : 16), "text-anchor": "middle" }, svg, number(t));
      }
      node("text", { class: "label", x: this.left + this.width / 2, y: height + axis - 3, "text-anchor": "middle" }, svg, "simulated time (s)");
    }
    this.listen(svg);
  }

  listen(svg) {
    svg.onpointermove = (event) => {
      const px = this.px(event, svg);
      if (this.dragFrom !== undefined) this.showDrag(this.dragFrom, px);
      this.read(this.bucketAt(px));
    };
    svg.onpointerdown = (event) => {
      this.dragFrom = this.px(event, svg);
      svg.setPointerCapture?.(event.pointerId);
    };
    svg.onpointerup = (event) => {
      const from = this.dragFrom, to = this.px(event, svg);
      this.dragFrom = undefined;
      if (from === undefined || !this.trigger) return;
      const d = this.data, a = this.bucketAt(Math.min(from, to)), b = this.bucketAt(Math.max(from, to));
      this.trigger("pick", Math.abs(to - from) < CLICK_PX ? { center: d.first_step[a] }
        : { first: d.first_step[a], last: d.last_step[b] });
    };
  }

  px(event, svg) {
    return event.clientX - svg.getBoundingClientRect().left;
  }

  showDrag(from, to) {
    for (const svg of this.box.querySelectorAll("svg")) {
      const rect = svg.querySelector("rect.drag") || node("rect", { class: "drag", y: 0, height: svg.getAttribute("height") }, svg);
      rect.setAttribute("x", Math.min(from, to));
      rect.setAttribute("width", Math.abs(to - from));
    }
  }

  read(i) {
    const d = this.data, steps = d.first_step[i] === d.last_step[i] ? `step ${number(d.first_step[i])}`
      : `steps ${number(d.first_step[i])}–${number(d.last_step[i])}`;
    const figures = d.panels.map((p) => {
      const high = p.high[i], low = p.low ? p.low[i] : high;
      if (high === null) return `${p.short}: –`;
      return `${p.short} ${low === high ? number(high) : `${number(low)}–${number(high)}`}${p.unit}`;
    });
    this.readout.textContent = `${number(d.x[i])} s · ${steps} · ${figures.join(" · ")}`;
  }

  destroy() {
    this.resized.disconnect();
  }
}

const VIEWS = new WeakMap();  // parentElement -> Overview (the component function runs on every rerun)

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let view = VIEWS.get(parentElement);
  if (!view) {
    view = new Overview(parentElement);
    VIEWS.set(parentElement, view);
  }
  view.update(data, setTriggerValue);
  return () => {
    setTimeout(() => {
      if (!parentElement.isConnected && VIEWS.get(parentElement) === view) {
        view.destroy();
        VIEWS.delete(parentElement);
      }
    }, 0);
  };
}
