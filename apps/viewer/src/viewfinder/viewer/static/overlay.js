// Drawing a step's action on its frame: an SVG laid exactly over the image, in screen
// pixels (its viewBox is the frame's size), so a click marker sits on the clicked pixel
// whatever the zoom.

const SVG = "http://www.w3.org/2000/svg";

function el(name, attributes = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function label(parent, x, y, text, size, cls = "label") {
  const group = el("g", { class: cls }, parent);
  const node = el("text", { x, y, "font-size": size }, group);
  node.textContent = text;
  return group;
}

function chips(parent, x, y, keys, size) {
  // keys drawn as keyboard chips, left to right
  let left = x;
  const group = el("g", { class: "chips" }, parent);
  for (const key of keys) {
    const width = Math.max(size * 1.6, size * 0.62 * key.length + size * 0.8);
    el("rect", { x: left, y, width, height: size * 1.5, rx: size * 0.25 }, group);
    const text = el("text", { x: left + width / 2, y: y + size * 1.08, "font-size": size,
                              "text-anchor": "middle" }, group);
    text.textContent = key;
    left += width + size * 0.4;
  }
  return group;
}

function arrowHead(parent, x1, y1, x2, y2, size, cls) {
  const angle = Math.atan2(y2 - y1, x2 - x1);
  const a = angle + Math.PI * 0.85, b = angle - Math.PI * 0.85;
  el("polygon", {
    class: cls,
    points: `${x2},${y2} ${x2 + size * Math.cos(a)},${y2 + size * Math.sin(a)} ` +
            `${x2 + size * Math.cos(b)},${y2 + size * Math.sin(b)}`,
  }, parent);
}

const CLICKS = { click: 1, double_click: 2, triple_click: 3 };

export function drawAction(svg, step, width, height) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const event = step.event;
  const unit = Math.max(width, height) / 100;  // 1% of the frame's long side
  const stroke = Math.max(2, unit * 0.45);
  svg.style.setProperty("--stroke", stroke);
  const check = step.check;
  if (check && check.region) {
    const [x, y, w, h] = check.region;
    el("rect", { class: `region state-${check.state.replace(" ", "-")}`, x, y, width: w, height: h,
                 "stroke-width": stroke }, svg);
  }
  if (!event) return;
  const kind = event.kind;
  const position = event.position;
  const modifiers = event.modifiers || [];
  if (position && (kind in CLICKS || kind === "right_click" || kind === "middle_click")) {
    const { x, y } = position;
    const button = event.button || (kind === "right_click" ? "right" : kind === "middle_click" ? "middle" : "left");
    const group = el("g", { class: `marker ${kind} button-${button}`, "data-x": x, "data-y": y }, svg);
    const rings = CLICKS[kind] || 1;
    const r = unit * 2;
    for (let ring = 0; ring < rings; ring++) {
      if (button === "right") {
        const side = r + ring * unit * 0.9;
        el("rect", { class: "ring", x: x - side, y: y - side, width: side * 2, height: side * 2,
                     "stroke-width": stroke }, group);
      } else if (button === "middle") {
        const s = (r + ring * unit * 0.9) * 1.3;
        el("polygon", { class: "ring", points: `${x},${y - s} ${x + s},${y} ${x},${y + s} ${x - s},${y}`,
                        "stroke-width": stroke }, group);
      } else {
        el("circle", { class: "ring", cx: x, cy: y, r: r + ring * unit * 0.9, "stroke-width": stroke }, group);
      }
    }
    el("line", { class: "hair", x1: x - r * 0.6, y1: y, x2: x + r * 0.6, y2: y, "stroke-width": stroke * 0.5 }, group);
    el("line", { class: "hair", x1: x, y1: y - r * 0.6, x2: x, y2: y + r * 0.6, "stroke-width": stroke * 0.5 }, group);
    el("circle", { class: "centre", cx: x, cy: y, r: Math.max(2.5, unit * 0.55) }, group);
    const name = { right: "right", middle: "middle" }[button];
    const count = rings > 1 ? `${rings}×` : "";
    const text = [count, name].filter(Boolean).join(" ");
    if (text) label(group, x + r * 1.6, y - r * 1.2, text, unit * 2.2);
    if (modifiers.length) chips(group, x + r * 1.6, y + r * 0.4, modifiers, unit * 1.6);
    return;
  }
  if (kind === "drag" && position && event.start_position) {
    const start = event.start_position;
    const points = [[start.x, start.y], ...(step.path || []).map((p) => [p[0], p[1]]), [position.x, position.y]];
    const group = el("g", { class: "marker drag", "data-x": start.x, "data-y": start.y }, svg);
    el("polyline", { class: "path", points: points.map((p) => p.join(",")).join(" "),
                     "stroke-width": stroke }, group);
    el("circle", { class: "ring", cx: start.x, cy: start.y, r: unit * 1.2, "stroke-width": stroke }, group);
    const [px, py] = points[points.length - 2];
    arrowHead(group, px, py, position.x, position.y, unit * 2.2, "head");
    label(group, position.x + unit * 1.5, position.y - unit, "drag", unit * 2);
    return;
  }
  if (kind === "scroll" && position) {
    const { x, y } = position;
    const dx = event.scroll_dx || 0, dy = event.scroll_dy || 0;
    const amount = Math.abs(dx) + Math.abs(dy);
    const length = unit * (4 + Math.min(amount, 10) * 1.2);
    const norm = Math.hypot(dx, dy) || 1;
    const x2 = x + (dx / norm) * length, y2 = y + (dy / norm) * length;
    const group = el("g", { class: "marker scroll", "data-x": x, "data-y": y }, svg);
    el("circle", { class: "centre", cx: x, cy: y, r: unit * 0.6 }, group);
    el("line", { class: "shaft", x1: x, y1: y, x2, y2, "stroke-width": stroke * 1.4 }, group);
    arrowHead(group, x, y, x2, y2, unit * 2.2, "head");
    const words = [];
    if (dy) words.push(`${dy > 0 ? "↓" : "↑"} ${Math.abs(dy)}`);
    if (dx) words.push(`${dx > 0 ? "→" : "←"} ${Math.abs(dx)}`);
    label(group, x + unit * 2, y - unit * 1.5, `scroll ${words.join(" ")}`, unit * 2.2);
    return;
  }
  if (kind === "move" && position) {
    const group = el("g", { class: "marker move", "data-x": position.x, "data-y": position.y }, svg);
    el("circle", { class: "ring", cx: position.x, cy: position.y, r: unit, "stroke-width": stroke }, group);
    return;
  }
  const focus = event.focus;  // a cache step's typing field
  const anchorX = focus ? focus.x : unit * 2;
  const anchorY = focus ? focus.y + unit * 2 : unit * 2;
  if (kind === "type" && event.text) {
    const shown = event.text.length > 60 ? event.text.slice(0, 57) + "…" : event.text;
    const group = el("g", { class: "marker type" }, svg);
    const size = unit * 2.2;
    const box = el("rect", { x: anchorX, y: anchorY, height: size * 1.8, rx: size * 0.3,
                             width: size * 0.62 * (shown.length + 4) }, group);
    box.classList.add("bubble");
    const text = el("text", { x: anchorX + size * 0.5, y: anchorY + size * 1.25, "font-size": size }, group);
    text.textContent = `⌨ ${shown}`;
    return;
  }
  if ((kind === "key" || kind === "hold_key") && event.keys) {
    const group = el("g", { class: "marker key" }, svg);
    chips(group, anchorX, anchorY, event.keys, unit * 2.2);
  }
}

export function keyChips(keys) {
  const span = document.createElement("span");
  span.className = "key-chips";
  keys.forEach((key, index) => {
    if (index) span.append("+");
    const kbd = document.createElement("kbd");
    kbd.textContent = key;
    span.append(kbd);
  });
  return span;
}
