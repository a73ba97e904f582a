// A long run's overview (cblab/ui/stage/overview_chart.py sends its buckets): one panel per series over simulated
// time, drawn as SVG at the panel's real width (panels.js), the window the stage plays shaded. A click centres
// the window there, a drag picks the steps under it: either is sent to Python as the trigger "pick"
// ({center} or {first, last}, in steps). Hovering reads a bucket's figures out. No library: it draws at once.

import { drawPanel, node, number } from "./panels.js";

const LEFT = 44, PROJECTOR_LEFT = 64;  // px for a panel's y labels
const CLICK_PX = 4;  // a drag shorter than this is a click

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
    d.panels.forEach((panel, i) => this.listen(drawPanel(this, panel, i === d.panels.length - 1)));
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
