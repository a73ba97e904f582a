// The overview's drawing (overview.js draws with it and handles the pointer): SVG nodes, ticks, one panel.

const SVGNS = "http://www.w3.org/2000/svg";

export function node(tag, attrs, parent, text) {
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

export const number = (value) => value.toLocaleString("en", { maximumFractionDigits: 1 });

// One panel of `view` (an Overview: its box, data, left margin, width, span and xOf): its title above it, the
// window shaded, its y ticks, the band from each bucket's smallest to its largest value and the line of the
// largest, and under the last panel the time axis. Returns its svg.
export function drawPanel(view, panel, last) {
  const d = view.data, left = view.left, width = view.width;
  const height = d.projector ? 70 : 80, axis = last ? (d.projector ? 50 : 36) : 4;
  node("div", { class: "title" }, view.box, panel.title);
  const svg = node("svg", { width: width + left + 8, height: height + axis, "data-series": panel.name }, view.box);
  const top = Math.max(panel.top, 1e-9), y = (v) => (4 + (1 - v / top) * (height - 8)).toFixed(1);
  const [x0, x1] = d.window.map((s) => view.xOf(s));
  node("rect", { class: "window", x: x0, y: 0, width: Math.max(x1 - x0, 2), height }, svg);
  for (const t of ticks(top, 2)) {
    node("line", { class: "grid", x1: left, x2: left + width, y1: y(t), y2: y(t) }, svg);
    node("text", { class: "label", x: left - 6, y: Number(y(t)) + 5, "text-anchor": "end" }, svg, number(t));
  }
  const xs = d.x.map((s) => view.xOf(s).toFixed(1));
  if (panel.low) {
    const up = panel.high.map((v, i) => `${xs[i]},${y(v)}`);
    const down = panel.low.map((v, i) => `${xs[i]},${y(v)}`).reverse();
    node("polygon", { class: "band", points: [...up, ...down].join(" "), fill: panel.colour }, svg);
  }
  let path = "", pen = "M";
  panel.high.forEach((v, i) => {
    if (v === null) { pen = "M"; return; }  // (a bucket without a value: a gap)
    path += `${pen}${xs[i]},${y(v)}`;
    pen = "L";
  });
  node("path", { class: "line", d: path, stroke: panel.colour }, svg);
  if (last) {
    const below = { class: "label", "text-anchor": "middle" };
    for (const t of ticks(view.span, Math.max(2, Math.floor(width / 90)))) {
      node("text", { ...below, x: view.xOf(t), y: height + (d.projector ? 22 : 16) }, svg, number(t));
    }
    node("text", { ...below, x: left + width / 2, y: height + axis - 3 }, svg, "simulated time (s)");
  }
  return svg;
}
