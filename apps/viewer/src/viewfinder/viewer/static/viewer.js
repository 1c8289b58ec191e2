// viewfinder view: the server gives JSON, this page renders it. No build step, no
// network beyond this server. Deep links: ?a=<artifact>#step-12, ?live=:1.

import { authHeaders, media, takeToken } from "./auth.js";
import { drawAction, keyChips } from "./overlay.js";
import { openLive } from "./live.js";
import { PAGE_SIZE, Steps, Timeline } from "./timeline.js";

const main = document.getElementById("main");
const banners = document.getElementById("banners");
const crumbs = document.getElementById("crumbs");
const state = { info: null, view: null, steps: null, timeline: null, index: -1, selecting: 0, zoom: false, closeLive: null };
// Bidirectional controls (U+202A-U+202E, U+2066-U+2069) in a name would reorder the
// text around them (a title read backwards): shown as the replacement character.
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

function plain(text) {
  return String(text).replace(BIDI_CONTROLS, "\uFFFD");
}

function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

function banner(message, level = "error") {
  banners.append(h("div", { class: `banner ${level}`, role: level === "error" ? "alert" : "status", text: message }));
}

async function getJSON(url) {
  let response;
  try {
    response = await fetch(url, { credentials: "omit", headers: authHeaders() });
  } catch (error) {
    throw new Error(`the viewer did not answer (${error.message}); is it still running?`);
  }
  const text = await response.text();
  let data = null;
  try { data = JSON.parse(text); } catch { data = null; }
  if (!response.ok) throw new Error((data && data.detail) || `${response.status} ${response.statusText}`);
  return data;
}

function seconds(value) {
  if (value === null || value === undefined) return "";
  return value < 60 ? `${value.toFixed(value < 10 ? 2 : 1)} s` : `${Math.floor(value / 60)} min ${(value % 60).toFixed(0)} s`;
}

function artifactHref(id) {
  return `/?a=${encodeURIComponent(id)}`;
}

// -- the list page -----------------------------------------------------------------------

function showList(items, root) {
  document.title = `viewfinder view · ${plain(root)}`;
  const table = h("table", { class: "list" },
    h("thead", {}, h("tr", {}, h("th", { text: "Artifact" }), h("th", { text: "Kind" }))));
  const body = h("tbody");
  for (const item of items) {
    body.append(h("tr", {}, h("td", {}, h("a", { href: artifactHref(item.id), text: plain(item.title) })),
      h("td", {}, h("span", { class: `kind kind-${item.kind}`, text: item.kind }))));
  }
  table.append(body);
  main.replaceChildren(h("section", { class: "listing" },
    h("h1", { text: plain(root) }), items.length ? table : h("p", { text: "Nothing here to show." })));
  if (!items.length) {
    banner(`${root} holds no recording, desktop run, cache file, Trajectory JSON, exec run or browser shots (looked ${3} folders deep)`);
  }
}

// -- an artifact ---------------------------------------------------------------------------

async function showArtifact(id) {
  let view;
  const wanted = stepFromHash();
  // the page of steps holding the step asked for (the first page otherwise)
  const first = Math.floor((wanted || 0) / PAGE_SIZE) * PAGE_SIZE;
  try {
    view = await getJSON(`/api/artifact?id=${encodeURIComponent(id)}&offset=${first}&limit=${PAGE_SIZE}`);
  } catch (error) {
    banner(`cannot show ${id}: ${error.message}`);
    main.replaceChildren(h("p", { class: "empty", text: "Nothing could be read." }));
    return;
  }
  state.view = view;
  state.steps = new Steps(id, view.step_count, getJSON);
  state.steps.add(view.steps_offset, view.steps);
  state.steps.pages.set(Math.floor(view.steps_offset / PAGE_SIZE), Promise.resolve());
  document.title = `viewfinder view · ${plain(view.title)}`;
  for (const problem of view.problems) banner(problem.message, problem.level);
  const facts = h("dl", { class: "facts" });
  for (const [key, value] of Object.entries(view.facts)) facts.append(h("dt", { text: key }), h("dd", { text: value }));
  const head = h("header", { class: "artifact-head" },
    h("h1", {}, h("span", { class: `kind kind-${view.kind}`, text: view.kind }), ` ${plain(view.title)}`),
    h("p", { class: "path", text: plain(view.path) }), facts,
    view.live ? h("a", { class: "live-link", href: `/?live=${encodeURIComponent(view.live)}`, text: `watch ${view.live} live` }) : null);
  const timeline = h("ol", { class: "steps", id: "steps" });
  const stage = h("section", { class: "stage", id: "stage", "aria-label": "The selected step" });
  const nav = h("nav", { class: "timeline", "aria-label": `${view.step_count} steps` }, timeline);
  const layout = h("div", { class: "layout" }, nav, stage);
  main.replaceChildren(head, layout);
  state.timeline = new Timeline(nav, timeline, state.steps, stepRow);
  if (Object.keys(view.texts).length) main.append(texts(view.texts));
  if (!view.step_count) {
    stage.append(h("p", { class: "empty", text: "No steps to show." }));
    if (view.videos.length) stage.append(videos(view));
    return;
  }
  await select(wanted !== null ? wanted : 0, { scroll: true });
}

function checkText(check) {
  if (!check || check.distance === null || check.distance === undefined) return null;
  return `distance ${check.distance} ${check.distance <= check.threshold ? "≤" : ">"} ${check.threshold}`;
}

// One row of the timeline (``previous``: the step before it, when known).
function stepRow(step, index, previous) {
  const state = step.check ? step.check.state.replace(" ", "-") : "";
  const thumb = step.thumb ? media(h("img", { class: "thumb", alt: "", width: 96, height: 60 }), step.thumb)
                           : h("span", { class: "thumb none", text: step.problem ? "no frame" : "" });
  const starts = step.group && (!previous || previous.group !== step.group);
  const link = h("a", { href: `#step-${index}`, class: `step ${state ? "check-" + state : ""} ${step.problem ? "has-problem" : ""}`,
                        id: `step-item-${index}`, "data-index": index },
    thumb,
    starts ? h("span", { class: "group", text: plain(step.group) }) : null,
    h("span", { class: "num", text: `${index}` }),
    h("span", { class: "label", text: step.label }),
    h("span", { class: "when", text: step.t !== null && step.t !== undefined ? `+${seconds(step.t)}` : "" }),
    checkText(step.check) ? h("span", { class: "distance", text: checkText(step.check) }) : null);
  return h("li", {}, link);
}

function stepFromHash() {
  const match = /^#step-(\d+)$/.exec(location.hash);
  return match ? Number(match[1]) : null;
}

async function select(index, { scroll = false } = {}) {
  const view = state.view;
  if (!view || !state.steps.count) return;
  index = Math.max(0, Math.min(state.steps.count - 1, index));
  const ticket = ++state.selecting;  // a later selection wins over one still fetching
  state.index = index;
  let step;
  try {
    step = await state.steps.at(index);
  } catch (error) {
    banner(`step ${index} cannot be read: ${error.message}`);
    return;
  }
  if (ticket !== state.selecting) return;
  state.timeline.show(index, { centre: scroll });
  if (location.hash !== `#step-${index}`) history.replaceState(null, "", `${location.search}#step-${index}`);
  renderStage(step, view);
}

function renderStage(step, view) {
  const stage = document.getElementById("stage");
  const last = state.steps.count - 1;
  const zoom = h("button", { type: "button", class: "zoom", "aria-pressed": state.zoom ? "true" : "false", text: "Zoom (Z)" });
  zoom.addEventListener("click", () => toggleZoom());
  const prev = h("button", { type: "button", text: "← Previous", disabled: step.index === 0 });
  prev.addEventListener("click", () => select(step.index - 1));
  const next = h("button", { type: "button", text: "Next →", disabled: step.index === last });
  next.addEventListener("click", () => select(step.index + 1));
  const tools = h("div", { class: "tools" }, prev, next, zoom,
    step.frame ? media(h("a", { class: "download", download: `step-${step.index}.${step.frame_type || "png"}`, text: "Download frame" }), step.frame, "href") : null);
  const title = h("h2", { id: "step-title" }, `Step ${step.index} of ${last}: `, h("span", { class: "action", text: step.label }));
  const frames = h("div", { class: `frames ${state.zoom ? "zoomed" : ""}` },
    figure(step, view, "frame", step.check ? "Screen (with the step's region)" : "Before: the frame the action was taken on"),
    step.after ? figure(step, view, "after", "After: the next frame (the result)") : null);
  stage.replaceChildren(h("div", { class: "step-head" }, title, tools), details(step), frames);
  if (step.check) stage.append(checkPanel(step));
  if (view.videos.length) stage.append(videos(view, step));
}

function figure(step, view, which, caption) {
  const url = which === "frame" ? step.frame : step.after;
  const box = h("div", { class: "frame-box" });
  const fig = h("figure", { class: `frame ${which}` }, h("figcaption", { text: caption }), box);
  if (!url) {
    const note = step.problem || (step.check
      ? "a cache file holds no frames: start the viewer with --screen :N (or a screenshot) to see the screen"
      : "no frame");
    box.append(h("p", { class: `no-frame ${step.problem ? "" : "neutral"}`, text: note }));
    return fig;
  }
  const image = media(h("img", { alt: `${caption} of step ${step.index}`, id: which === "frame" ? "frame" : "after-frame" }), url);
  box.append(image);
  if (which === "frame") {
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("class", "overlay");
    svg.setAttribute("preserveAspectRatio", "none");
    svg.setAttribute("aria-hidden", "true");
    box.append(svg);
    const draw = () => drawAction(svg, step, image.naturalWidth, image.naturalHeight);
    if (image.complete && image.naturalWidth) draw(); else image.addEventListener("load", draw, { once: true });
    image.addEventListener("error", () => box.replaceChildren(h("p", { class: "no-frame", text: "the frame could not be loaded" })), { once: true });
  }
  image.addEventListener("click", () => toggleZoom());
  return fig;
}

function details(step) {
  const list = h("dl", { class: "step-facts" });
  const add = (name, value) => { if (value !== null && value !== undefined && value !== "") list.append(h("dt", { text: name }), h("dd", {}, value)); };
  const event = step.event || {};
  add("action", step.kind.replaceAll("_", " "));
  if (event.keys) add("keys", keyChips(event.keys));
  if (event.text) add("typed", h("q", { class: "typed", text: event.text }));
  if (event.position) add("at", `(${event.position.x}, ${event.position.y})`);
  if (event.start_position) add("from", `(${event.start_position.x}, ${event.start_position.y})`);
  if (event.button && event.button !== "left") add("button", event.button);
  if (event.modifiers && event.modifiers.length) add("held", keyChips(event.modifiers));
  if (event.scroll_dy || event.scroll_dx) add("wheel", `${event.scroll_dy || 0} down, ${event.scroll_dx || 0} right`);
  if (step.t !== null && step.t !== undefined) add("time", `+${seconds(step.t)}`);
  if (step.duration_s !== null && step.duration_s !== undefined) add("until next", seconds(step.duration_s));
  if (step.timestamp) add("timestamp", new Date(step.timestamp).toISOString());
  if (step.group) add("call", step.group);
  if (step.problem) add("problem", h("span", { class: "problem", text: step.problem }));
  return list;
}

function checkPanel(step) {
  const check = step.check;
  const state = check.state.replace(" ", "-");
  const words = {
    passed: "the screen matches", failed: "the screen does not match: a replay stops here",
    later: "differs now, as a later step should", unchecked: "not checked (start the viewer with --screen)",
    "not-hashed": "this step is not checked",
  }[state];
  const panel = h("section", { class: `check check-${state}`, "aria-label": "Visual check" },
    h("h3", {}, `Visual check: ${words}`, checkText(check) ? h("span", { class: "distance", text: ` — ${checkText(check)}` }) : null));
  const pictures = h("div", { class: "regions" });
  pictures.append(h("figure", {}, h("figcaption", { text: "Recorded region" }),
    check.recorded ? media(h("img", { alt: "the recorded region" }), check.recorded) : h("p", { class: "no-frame", text: "not stored (built with --no-thumbnails)" })));
  pictures.append(h("figure", {}, h("figcaption", { text: "Screen's region" }),
    check.live ? media(h("img", { alt: "the screen's region" }), check.live) : h("p", { class: "no-frame", text: "no screen given" })));
  panel.append(pictures);
  const facts = h("dl", { class: "step-facts" });
  const add = (name, value) => { if (value !== null && value !== undefined) facts.append(h("dt", { text: name }), h("dd", { text: String(value) })); };
  add("stored hash", check.hash); add("screen's hash", check.live_hash);
  if (check.colour_distance !== null && check.colour_distance !== undefined) add("colour difference", `${check.colour_distance} (at most ${check.colour_tolerance})`);
  if (check.region) add("region", check.region.join(", "));
  add("failed replays here", check.failures);
  if (check.stopped_here) add("the last replay stopped here", check.stopped_here);
  add("recorded on", check.element);
  for (const heal of check.healed || []) add("healed in a replay", heal);
  panel.append(facts);
  return panel;
}

function videos(view, step = null) {
  const section = h("section", { class: "videos", "aria-label": "Videos" }, h("h3", { text: "Video" }));
  for (const video of view.videos) {
    const player = media(h("video", { controls: true, preload: "metadata", muted: true }), video.url);
    const note = h("p", { class: "seek-note" });
    const fig = h("figure", { class: "video" }, player, h("figcaption", { text: video.label }), note);
    section.append(fig);
    if (step && step.timestamp && video.started_at) {
      const at = (Date.parse(step.timestamp) - Date.parse(video.started_at)) / 1000;
      if (at >= 0 && (video.duration_s === null || at <= video.duration_s + 0.5)) {
        note.textContent = `at ${seconds(at)}: this step's moment`;
        const seek = () => { player.currentTime = at; };
        if (player.readyState >= 1) seek(); else player.addEventListener("loadedmetadata", seek, { once: true });
        player.dataset.seekTo = at.toFixed(3);
      } else {
        note.textContent = "this step happened outside this video";
      }
    }
  }
  return section;
}

function texts(all) {
  const section = h("section", { class: "texts" });
  for (const [name, text] of Object.entries(all)) {
    section.append(h("details", { open: text ? true : null }, h("summary", { text: `${name} (${text.length} characters)` }),
      h("pre", { text: text || "(empty)" })));
  }
  return section;
}

function toggleZoom() {
  state.zoom = !state.zoom;
  const frames = document.querySelector(".frames");
  if (frames) frames.classList.toggle("zoomed", state.zoom);
  const button = document.querySelector("button.zoom");
  if (button) button.setAttribute("aria-pressed", String(state.zoom));
}

document.addEventListener("keydown", (event) => {
  if (!state.view || event.altKey || event.ctrlKey || event.metaKey) return;
  const target = event.target;
  if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement ||
      target instanceof HTMLVideoElement || target instanceof HTMLCanvasElement) return;
  const moves = { ArrowRight: state.index + 1, ArrowLeft: state.index - 1, Home: 0, End: state.steps.count - 1 };
  if (event.key in moves) {
    event.preventDefault();
    select(moves[event.key]);
  } else if (event.key === "z" || event.key === "Z") {
    toggleZoom();
  }
});

window.addEventListener("hashchange", () => {
  const index = stepFromHash();
  if (index !== null && index !== state.index) select(index);
});

// -- start ------------------------------------------------------------------------------------

function liveLinks(displays) {
  const nav = document.getElementById("live-links");
  nav.replaceChildren(...displays.filter((d) => d.alive).map((d) =>
    h("a", { href: `/?live=${encodeURIComponent(d.name)}`, class: "live-link", text: `live ${d.name}` })));
}

async function start() {
  takeToken();
  const params = new URLSearchParams(location.search);
  try {
    state.info = await getJSON("/api/info");
  } catch (error) {
    banner(error.message);
    main.replaceChildren();
    return;
  }
  const info = state.info;
  liveLinks(info.live);
  window.viewfinderView = state;
  const live = params.get("live");
  if (live || !info.root) document.querySelector("footer.keys").hidden = true;
  if (live) {
    crumbs.replaceChildren(h("a", { href: "/", text: "home" }));
    state.closeLive = openLive(main, live);
    return;
  }
  const id = params.get("a");
  if (id !== null) {
    if (info.top && info.top.kind === "list") crumbs.replaceChildren(h("a", { href: "/", text: plain(info.root) }));
    await showArtifact(id);
    return;
  }
  const top = info.top;
  if (!top) {
    if (info.live.length) { state.closeLive = openLive(main, info.live[0].name); return; }
    banner("nothing to show: give a PATH or --live :N");
    return;
  }
  if (top.kind === "missing") { banner(top.message); main.replaceChildren(); return; }
  if (top.kind === "list") { showList(top.items, info.root); return; }
  await showArtifact(top.id);
}

start().finally(() => document.body.setAttribute("data-ready", "true"));
