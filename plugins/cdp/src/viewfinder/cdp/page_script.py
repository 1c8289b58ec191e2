"""The script that reads a frame's elements inside the page, in an isolated world.

Run with ``Runtime.evaluate`` in the frame's own isolated world
(``Page.createIsolatedWorld``, one per frame and name, kept while its document lives):
page scripts share the DOM but not this world's JavaScript objects, so a page cannot
patch what it calls (``getBoundingClientRect``, ``getComputedStyle``, ``WeakMap``) or
read and change what it keeps. It walks the document (light DOM, open shadow roots and
the closed ones :mod:`viewfinder.cdp.page_nodes` handed it, skipping what is not
rendered: ``display: none``, ``aria-hidden``) and answers, as one JSON string, what
:func:`viewfinder.cdp.page_layout.frame_boxes` clips (each node's parent, name, border
box and padding box in CSS pixels of the frame's viewport, overflow and position;
repeated strings sent once, by index) plus each element's role, name,
value and states, computed from the DOM with the ARIA rules (explicit ``role``, else
the element's implicit role; ``aria-labelledby``, ``aria-label``, labels, ``alt``,
``title``, then the contents for roles named by their contents).

Each node's id is the node's own: a number kept in this world's ``WeakMap`` keyed by
the node object, given once and never reused while the document lives, so a node
keeps its id wherever it moves and a new node never gets an old one. ``epoch`` names
the world's document, so ids of a page navigated away from match nothing.
"""

from __future__ import annotations

import json
from typing import Any

from viewfinder.cdp.page_nodes import WORLD, open_closed_roots
from viewfinder.cdp.session import CDPSession

#: The world's state (ids of nodes, the document's epoch) and the reader, defined once.
SCRIPT = r"""
(() => {
const vf = globalThis.__viewfinder || (globalThis.__viewfinder = {
  ids: new WeakMap(), nodes: new Map(), next: 1,
  closed: new WeakMap(), checked: new WeakSet(),
  epoch: Math.random().toString(36).slice(2) + Date.now().toString(36),
});
const idOf = (node) => {
  let id = vf.ids.get(node);
  if (id === undefined) {
    id = vf.next++; vf.ids.set(node, id); vf.nodes.set(id, new WeakRef(node));
  }
  return id;
};
if (vf.nodes.size > 4096 && vf.nodes.size > 2 * (vf.kept || 0)) {
  // forget the ids of nodes the page dropped (their WeakRefs are empty)
  for (const [id, ref] of vf.nodes) if (ref.deref() === undefined) vf.nodes.delete(id);
  vf.kept = vf.nodes.size;
}
vf.idOf = idOf;
// a closed shadow root is not the element's shadowRoot in any world: those found over
// the DevTools protocol are kept here (read_frame)
const shadowOf = (el) => el.shadowRoot || vf.closed.get(el) || null;
// Built-in elements that may host a shadow root (the DOM standard's list).
const HOSTABLE = new Set(["ARTICLE", "ASIDE", "BLOCKQUOTE", "BODY", "DIV", "FOOTER", "H1",
  "H2", "H3", "H4", "H5", "H6", "HEADER", "MAIN", "NAV", "P", "SECTION", "SPAN"]);
// Whether none of an element's own children is drawn: a closed shadow root drawn in
// their place is then possible (a shadow host's unslotted children are not drawn).
function bare(el) {
  for (let child = el.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === 1 && child.getClientRects().length) return false;
    if (child.nodeType === 3 && /\S/.test(child.data)) {
      range.selectNodeContents(child);
      if (range.getClientRects().length) return false;
    }
  }
  return true;
}
const TEXTLIKE = new Set(["", "text", "email", "tel", "url", "password", "search", "number",
  "date", "datetime-local", "month", "time", "week"]);
const CONTENT_NAMED = new Set(["button", "link", "heading", "cell", "columnheader", "rowheader",
  "tab", "option", "menuitem", "menuitemcheckbox", "menuitemradio", "treeitem", "checkbox",
  "radio", "switch", "term", "tooltip", "disclosure triangle", "gridcell"]);
const LANDMARK_SCOPES = "article, aside, main, nav, section";
const TAGS = {
  BUTTON: "button", TEXTAREA: "textbox", H1: "heading", H2: "heading", H3: "heading",
  H4: "heading", H5: "heading", H6: "heading", UL: "list", OL: "list", MENU: "list",
  LI: "listitem", DL: "description list", DT: "term", DD: "definition", TABLE: "table",
  TR: "row", TD: "cell", CAPTION: "caption", ARTICLE: "article", ASIDE: "complementary",
  NAV: "navigation", MAIN: "main", FIELDSET: "group", LEGEND: "legend", DETAILS: "group",
  SUMMARY: "disclosure triangle", DIALOG: "dialog", P: "paragraph", EM: "emphasis",
  STRONG: "strong", CODE: "code", BR: "line break", HR: "separator", PROGRESS: "progressbar",
  METER: "meter", LABEL: "label text", IFRAME: "iframe", FRAME: "iframe", FIGURE: "figure",
  BLOCKQUOTE: "blockquote", OPTION: "option", MARK: "mark", TIME: "time", OUTPUT: "status",
  VIDEO: "video", AUDIO: "audio", CANVAS: "canvas", SEARCH: "search",
};
const INPUTS = { button: "button", submit: "button", reset: "button", image: "button",
  file: "button", color: "button", checkbox: "checkbox", radio: "radio", range: "slider",
  number: "spinbutton", search: "searchbox" };

function implicitRole(el, tag) {
  const known = TAGS[tag];
  if (known) {
    if (tag === "TD" && el.closest("table") === null) return "";
    return known;
  }
  switch (tag) {
    case "A": case "AREA": return el.hasAttribute("href") ? "link" : "";
    case "INPUT": {
      const type = (el.getAttribute("type") || "").toLowerCase();
      return INPUTS[type] || "textbox";
    }
    case "SELECT": return el.multiple || el.size > 1 ? "listbox" : "combobox";
    case "TH": return el.getAttribute("scope") === "row" ? "rowheader" : "columnheader";
    case "IMG": return el.getAttribute("alt") === "" && !el.hasAttribute("title") ? "" : "image";
    case "HEADER": return scoped(el) ? "" : "banner";
    case "FOOTER": return scoped(el) ? "" : "contentinfo";
    case "SECTION": return named(el) ? "region" : "";
    case "FORM": return named(el) ? "form" : "";
    case "svg": return named(el) ? "image" : "";
  }
  if (tag === "BODY" || tag === "HTML") return "";
  const up = el.parentElement;
  if (el.isContentEditable && !(up && up.isContentEditable)) return "generic";
  return el.hasAttributes() && (el.hasAttribute("tabindex") || named(el)) ? "generic" : "";
}
const scoped = (el) => el.parentElement && el.parentElement.closest(LANDMARK_SCOPES);
const chosen = (select) => (select.selectedOptions[0] ? select.selectedOptions[0].text : "");
function named(el) {
  return !!((el.getAttribute("aria-label") || "").trim() || el.hasAttribute("aria-labelledby")
    || el.hasAttribute("title"));
}
const squash = (text) => text.replace(/\s+/g, " ");
function contentText(node, depth) {
  if (node.nodeType === 3) return node.data;
  if (node.nodeType !== 1 || depth > 50) return "";
  const el = node;
  if (el.getAttribute("aria-hidden") === "true") return "";
  const label = el.getAttribute("aria-label");
  if (label && label.trim()) return " " + label + " ";
  const tag = el.tagName;
  if (tag === "IMG") return " " + (el.getAttribute("alt") || "") + " ";
  if (tag === "INPUT" || tag === "TEXTAREA") return " " + (el.value || "") + " ";
  if (tag === "SELECT") return " " + chosen(el) + " ";
  if (tag === "SCRIPT" || tag === "STYLE" || tag === "TEMPLATE" || tag === "NOSCRIPT") return "";
  if (tag === "BR") return " ";
  if (el.childElementCount === 0 && !shadowOf(el)) return el.textContent;
  const style = getComputedStyle(el);
  if (style.display === "none" || style.visibility !== "visible") return "";
  let text = "";
  const root = shadowOf(el) || el;
  for (let child = root.firstChild; child; child = child.nextSibling) {
    text += contentText(child, depth + 1);
  }
  return style.display === "inline" ? text : " " + text + " ";
}
function labelled(el) {
  const ids = el.getAttribute("aria-labelledby");
  if (!ids) return "";
  const root = el.getRootNode();
  return ids.split(/\s+/).map((id) => {
    const other = id && root.getElementById ? root.getElementById(id) : null;
    return other ? squash(other.getAttribute("aria-label") || contentText(other, 0)).trim() : "";
  }).filter(Boolean).join(" ");
}
function nameOf(el, tag, role) {
  const attributes = el.hasAttributes();  // most elements have none: no lookups then
  let name = attributes ? labelled(el) || (el.getAttribute("aria-label") || "").trim() : "";
  if (name) return name;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") {
    const type = el.type;
    if (type === "submit" || type === "reset" || type === "button") {
      return el.value || (type === "submit" ? "Submit" : type === "reset" ? "Reset" : "");
    }
    if (type === "image") return el.getAttribute("alt") || "";
    const labels = el.labels ? Array.from(el.labels) : [];
    name = labels.map((label) => {
      let text = "";
      for (let child = label.firstChild; child; child = child.nextSibling) {
        if (child !== el) text += contentText(child, 1);
      }
      return squash(text).trim();
    }).filter(Boolean).join(" ");
    if (name) return name;
  } else if (tag === "IMG" || tag === "AREA") {
    name = el.getAttribute("alt") || "";
  } else if (tag === "FIELDSET" || tag === "TABLE" || tag === "FIGURE") {
    const first = el.querySelector(tag === "FIELDSET" ? ":scope > legend"
      : tag === "TABLE" ? ":scope > caption" : ":scope > figcaption");
    name = first ? squash(contentText(first, 0)).trim() : "";
  } else if (tag === "svg") {
    const title = el.querySelector(":scope > title");
    name = title ? title.textContent.trim() : "";
  }
  if (!name && CONTENT_NAMED.has(role)) name = squash(contentText(el, 0)).trim();
  if (!name && attributes) {
    name = (el.getAttribute("title") || el.getAttribute("placeholder") || "").trim();
  }
  return name;
}
function valueOf(el, tag, role) {
  if (tag === "INPUT") {
    if (el.type === "password" || role === "checkbox" || role === "radio") return null;
    if (role === "button") return null;
    return el.value;
  }
  if (tag === "TEXTAREA") return el.value;
  if (tag === "SELECT" && role === "combobox") return chosen(el) || null;
  if (tag === "PROGRESS" || tag === "METER") return String(el.value);
  const now = el.getAttribute("aria-valuetext") || el.getAttribute("aria-valuenow");
  if (now) return now;
  if (el.isContentEditable && role === "generic") return el.textContent;
  return null;
}
const FOCUSABLE = new Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "IFRAME"]);
// what :disabled can match: form controls, fieldsets, form-associated custom elements
const DISABLEABLE = new Set(["BUTTON", "INPUT", "SELECT", "TEXTAREA", "OPTGROUP", "OPTION",
  "FIELDSET"]);
const NO_ATTRIBUTE = () => null;
function statesOf(el, tag, role) {
  const states = [];
  // most elements have no attributes: then none of the aria-* lookups is made
  const attributes = el.hasAttributes();
  const aria = attributes ? (name) => el.getAttribute(name) : NO_ATTRIBUTE;
  const canDisable = DISABLEABLE.has(tag) || tag.includes("-");
  const disabled = (canDisable && el.matches(":disabled")) || aria("aria-disabled") === "true";
  const editable = el.isContentEditable;
  const focusable = (attributes && el.hasAttribute("tabindex"))
    || (FOCUSABLE.has(tag) && el.tabIndex >= 0);
  if (disabled) states.push("disabled");
  else if (focusable || editable) states.push("focusable");
  if (el === focused) states.push("focused");
  const checked = aria("aria-checked");
  const ticked = el.checked === true || el.indeterminate === true;
  if (ticked || checked === "true" || checked === "mixed") states.push("checked");
  const pressed = aria("aria-pressed");
  if (pressed === "true" || pressed === "mixed") states.push("pressed");
  const open = tag === "SUMMARY" && el.parentElement && el.parentElement.open;
  if (aria("aria-expanded") === "true" || open) states.push("expanded");
  const selected = tag === "OPTION" && el.selected;
  if (aria("aria-selected") === "true" || selected) states.push("selected");
  if (el.required === true || aria("aria-required") === "true") states.push("required");
  if (el.readOnly === true || aria("aria-readonly") === "true") states.push("readonly");
  if (aria("aria-invalid") === "true") states.push("invalid");
  const many = el.multiple === true || aria("aria-multiselectable") === "true";
  if (many) states.push("multiselectable");
  if (role === "textbox" || role === "searchbox" || role === "spinbutton" || editable) {
    states.push("editable");
    if (tag !== "DIV" && tag !== "SPAN" && !editable) states.push("settable");
  } else if (role === "slider") states.push("settable");
  if (tag === "TEXTAREA" || aria("aria-multiline") === "true") states.push("multiline");
  const modal = tag === "DIALOG" && el.matches(":modal");
  if (aria("aria-modal") === "true" || modal) states.push("modal");
  return states.join(",");
}
// the element with the keyboard focus, when the page has it (one lookup per read)
const focused = document.hasFocus() ? document.activeElement : null;

const strings = [], index = new Map();
const str = (s) => {
  let i = index.get(s);
  if (i === undefined) { i = strings.length; strings.push(s); index.set(s, i); }
  return i;
};
const parents = [], ids = [], names = [], bounds = [], styles = [], clients = [], elements = [];
const range = document.createRange();
const plain = str("visible visible static");
function add(node, parent, name, box, style, client) {
  parents.push(parent); ids.push(idOf(node)); names.push(str(name));
  bounds.push(box); styles.push(style); clients.push(client);
  return parents.length - 1;
}
function element(at, parent, role, name, value, states) {
  // roles and states are few: sent once each, in strings
  elements.push([at, parent, str(role), name.length > 4000 ? name.slice(0, 4000) : name, value,
    str(states)]);
  return elements.length - 1;
}
function walk(node, parent, holder, depth, shown) {
  for (let child = node.firstChild; child; child = child.nextSibling) {
    visit(child, parent, holder, depth, shown);
  }
}
const frames = [], hosts = [];
function visit(node, parent, holder, depth, shown) {
  if (depth > 900) return;
  if (node.nodeType === 3) {
    if (!shown || !/\S/.test(node.data)) return;
    range.selectNodeContents(node);
    const r = range.getBoundingClientRect();
    const at = add(node, parent, "#text", [r.left, r.top, r.width, r.height], plain, []);
    element(at, holder, "static text", squash(node.data), null, "");
    return;
  }
  if (node.nodeType !== 1) return;
  const el = node, tag = el.tagName;
  if (tag === "SCRIPT" || tag === "STYLE" || tag === "TEMPLATE" || tag === "HEAD") return;
  const style = getComputedStyle(el);
  const attributes = el.hasAttributes();
  if (style.display === "none" || (attributes && el.getAttribute("aria-hidden") === "true")) {
    return;
  }
  const r = el.getBoundingClientRect();
  const ox = style.overflowX, oy = style.overflowY;
  // the padding box only where it is used: what clips its overflow, what shows a frame
  const clips = ox !== "visible" || oy !== "visible" || tag === "IFRAME" || tag === "FRAME";
  const at = add(el, parent, tag, [r.left, r.top, r.width, r.height],
    str(ox + " " + oy + " " + style.position),
    clips ? [el.clientLeft, el.clientTop, el.clientWidth, el.clientHeight] : []);
  const visible = style.visibility === "visible";
  let role = attributes ? (el.getAttribute("role") || "").trim().split(/\s+/)[0].toLowerCase() : "";
  if (role === "img") role = "image";
  if (role === "none" || role === "presentation") role = "";
  else if (!role) role = implicitRole(el, tag);
  let inside = holder;
  if (role && visible) {
    const value = valueOf(el, tag, role);
    const text = value === null ? null : String(value);
    inside = element(at, holder, role, nameOf(el, tag, role), text, statesOf(el, tag, role));
  }
  if (tag === "IFRAME" || tag === "FRAME") {
    if (el.contentWindow) frames.push(at, el.contentWindow);
    return;
  }
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "IMG") return;
  const shadow = shadowOf(el);
  if (shadow) walk(shadow, at, inside, depth + 1, visible);
  else if ((tag.includes("-") || (HOSTABLE.has(tag) && r.width > 0 && r.height > 0 && bare(el)))
    && !vf.checked.has(el)) hosts.push(el);
  walk(el, at, inside, depth + 1, visible);
}
const doc = document;
const top = add(doc, -1, "#document", [0, 0, innerWidth, innerHeight], plain, []);
const idle = !doc.activeElement || doc.activeElement === doc.body;
const root = element(top, -1, "root web area", doc.title || "", null,
  doc.hasFocus() && idle ? "focusable,focused" : "focusable");
if (doc.documentElement) visit(doc.documentElement, top, root, 0, true);
vf.frames = frames;
vf.hosts = hosts;
return JSON.stringify({frames: frames.length, hosts: hosts.length, epoch: vf.epoch,
  loading: doc.readyState === "loading", strings,
  parents, ids, names, bounds, styles, clients, elements});
})()
"""

#: The last read's iframes: the index of each iframe's node, then its window (a frame id
#: once serialized), flat.
FRAMES = "globalThis.__viewfinder.frames"


async def _run_script(session: CDPSession, context: int, timeout: float) -> dict[str, Any]:
    read: dict[str, Any] = json.loads(
        await session.evaluate(SCRIPT, context_id=context, timeout=timeout)
    )
    return read


async def read_frame(
    session: CDPSession, frame_id: str, timeout: float
) -> tuple[dict[str, Any], dict[str, int]]:
    """One frame's read (see :data:`SCRIPT`), and the frame id shown by each of its
    iframes, with the iframe's node id."""
    world = await session.call(
        "Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD}, timeout=timeout
    )
    context = world["executionContextId"]
    read = await _run_script(session, context, timeout)
    if read["hosts"]:
        opened, read["unchecked"] = await open_closed_roots(session, context, timeout)
        if opened:
            read = await _run_script(session, context, timeout) | {"unchecked": read["unchecked"]}
    shown: dict[str, int] = {}
    if read["frames"]:
        # a window serializes as the id of its frame, out-of-process or not
        frames = await session.call(
            "Runtime.evaluate",
            {
                "expression": FRAMES,
                "contextId": context,
                "objectGroup": WORLD,
                "serializationOptions": {"serialization": "deep", "maxDepth": 1},
            },
            timeout=timeout,
        )
        await session.call("Runtime.releaseObjectGroup", {"objectGroup": WORLD}, timeout=timeout)
        values = frames.get("result", {}).get("deepSerializedValue", {}).get("value", [])
        ids = read["ids"]
        for at, window in zip(values[::2], values[1::2], strict=False):
            index = at.get("value")
            if window.get("type") == "window" and isinstance(index, int) and index < len(ids):
                shown[str(window["value"]["context"])] = ids[index]
    return read, shown
