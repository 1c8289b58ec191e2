// The live view: frames of a display over a WebSocket, drawn on a canvas in order; with
// --control, clicks, wheel and keys on the canvas go back to the display.

import { socketProtocols } from "./auth.js";

const KEYSYMS = {
  Enter: "Return", Backspace: "BackSpace", Tab: "Tab", Escape: "Escape", Delete: "Delete",
  ArrowLeft: "Left", ArrowRight: "Right", ArrowUp: "Up", ArrowDown: "Down", Home: "Home",
  End: "End", PageUp: "Page_Up", PageDown: "Page_Down", Insert: "Insert", " ": "space",
};
const MODIFIER_KEYS = new Set(["Control", "Shift", "Alt", "Meta", "AltGraph", "CapsLock"]);

function header(buffer) {
  const view = new DataView(buffer);
  const length = view.getUint32(0);
  const head = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length)));
  return [head, new Uint8Array(buffer, 4 + length)];
}

export function openLive(container, display) {
  container.replaceChildren();
  const section = document.createElement("section");
  section.className = "live";
  section.innerHTML = `
    <h1>Display <span class="display-name"></span> <span class="badge live-badge">live</span>
      <span class="badge mode">connecting…</span></h1>
    <p class="live-status" aria-live="off">waiting for the first frame…</p>
    <div class="live-box"><canvas class="live-canvas" tabindex="0"></canvas></div>`;
  section.querySelector(".display-name").textContent = display;
  container.append(section);
  const canvas = section.querySelector("canvas");
  canvas.setAttribute("aria-label", `Live view of display ${display}`);
  const context = canvas.getContext("2d", { willReadFrequently: true });
  const status = section.querySelector(".live-status");
  const mode = section.querySelector(".mode");
  const stats = { frames: 0, bytes: 0, lastDrawnAt: 0, latencies: [], control: false, error: null };
  // for tests and benchmarks: resolve when the pixel at (x, y) is near `rgb`
  let watcher = null;
  stats.watch = (x, y, rgb, tolerance = 40) => {
    watcher = { x, y, rgb, tolerance, seenAt: null };
    stats.watched = watcher;
    check();
    return watcher;
  };
  stats.pixel = (x, y) => Array.from(context.getImageData(x, y, 1, 1).data.slice(0, 3));
  window.viewfinderLive = stats;

  function check() {
    if (!watcher || watcher.seenAt !== null || !canvas.width) return;
    const seen = stats.pixel(watcher.x, watcher.y);
    if (seen.every((value, i) => Math.abs(value - watcher.rgb[i]) <= watcher.tolerance)) {
      watcher.seenAt = performance.timeOrigin + performance.now();
    }
  }

  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/api/live?display=${encodeURIComponent(display)}`, socketProtocols());
  socket.binaryType = "arraybuffer";
  let chain = Promise.resolve();
  let ended = false;
  let shownAt = performance.now();

  socket.addEventListener("message", (message) => {
    if (typeof message.data === "string") {
      const data = JSON.parse(message.data);
      if (data.type === "hello") {
        canvas.width = data.width;
        canvas.height = data.height;
        stats.control = data.control;
        mode.textContent = data.control ? "control: clicks and keys reach the display" : "read-only";
        mode.classList.toggle("control", data.control);
        if (data.control) enableControl(canvas, socket);
      } else if (data.type === "error") {
        showError(data.message);
      }
      return;
    }
    const [head, bytes] = header(message.data);
    if (head.error) {
      ended = true;
      mode.textContent = "ended";
      showError(`the live view ended: ${head.error}`);
      return;
    }
    const blob = new Blob([bytes], { type: `image/${head.format}` });
    // tiles must land in the order they were sent: decode in turn
    chain = chain.then(() => createImageBitmap(blob)).then((bitmap) => {
      context.drawImage(bitmap, head.x, head.y);
      bitmap.close();
      stats.frames += 1;
      stats.bytes += bytes.length;
      stats.lastDrawnAt = performance.timeOrigin + performance.now();
      stats.latencies.push(stats.lastDrawnAt - head.grabbed_at);
      if (stats.latencies.length > 50) stats.latencies.shift();
      check();
      if (performance.now() - shownAt > 500) {
        shownAt = performance.now();
        const sorted = [...stats.latencies].sort((a, b) => a - b);
        const median = sorted[Math.floor(sorted.length / 2)] || 0;
        status.textContent = `${stats.frames} frames · grab to screen ${median.toFixed(0)} ms (median)` +
          ` · ${(stats.bytes / 1024).toFixed(0)} KiB`;
      }
    }).catch((error) => { status.textContent = `a frame could not be shown: ${error}`; });
  });
  // what the server said is shown as it said it; a close only adds what it does not know
  function showError(text) {
    stats.error = text;
    status.textContent = text;
    status.classList.add("error");
  }
  socket.addEventListener("close", (event) => {
    if (!ended) mode.textContent = "disconnected";
    if (stats.error !== null) return;
    if (event.code === 1008) {
      showError(event.reason || "the viewer refused this display");
    } else if (event.code === 1011) {
      showError(event.reason || "the live view ended: the viewer could not show this display");
    } else if (!event.wasClean) {
      showError("the connection to the viewer was lost: reload the page to try again");
    }
  });
  return () => socket.close();
}

function enableControl(canvas, socket) {
  const send = (action) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(action));
  };
  // the display's pixels fill the canvas's content box: its border and padding are not
  // part of the picture, so a position is measured from the content box's corner
  const at = (event) => {
    const box = canvas.getBoundingClientRect();
    const style = getComputedStyle(canvas);
    const px = (name) => parseFloat(style[name]) || 0;
    const left = box.left + px("borderLeftWidth") + px("paddingLeft");
    const top = box.top + px("borderTopWidth") + px("paddingTop");
    const width = canvas.clientWidth - px("paddingLeft") - px("paddingRight");
    const height = canvas.clientHeight - px("paddingTop") - px("paddingBottom");
    const clamp = (value, size) => Math.max(0, Math.min(size - 1, Math.floor(value)));
    return {
      x: clamp((event.clientX - left) * canvas.width / width, canvas.width),
      y: clamp((event.clientY - top) * canvas.height / height, canvas.height),
    };
  };
  canvas.classList.add("controlled");
  canvas.addEventListener("click", (event) => {
    canvas.focus();
    send({ kind: "click", position: at(event), button: "left" });
  });
  canvas.addEventListener("contextmenu", (event) => {
    event.preventDefault();
    send({ kind: "right_click", position: at(event) });
  });
  canvas.addEventListener("auxclick", (event) => {
    if (event.button === 1) send({ kind: "middle_click", position: at(event) });
  });
  let wheel = 0;
  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    wheel += event.deltaY;
    const clicks = Math.trunc(wheel / 60);
    if (clicks) {
      wheel -= clicks * 60;
      send({ kind: "scroll", position: at(event), scroll_dy: clicks });
    }
  }, { passive: false });
  canvas.addEventListener("keydown", (event) => {
    if (MODIFIER_KEYS.has(event.key)) return;
    event.preventDefault();
    const held = [];
    if (event.ctrlKey) held.push("ctrl");
    if (event.altKey) held.push("alt");
    if (event.metaKey) held.push("super");
    if (event.key.length === 1 && !held.length && event.key !== " ") {
      send({ kind: "type", text: event.key });
      return;
    }
    const name = KEYSYMS[event.key] || (event.key.length === 1 ? event.key.toLowerCase() : event.key);
    if (event.shiftKey && event.key.length !== 1) held.push("shift");
    send({ kind: "key", keys: [...held, name] });
  });
}
