"""What ``read_page`` and ``find`` say about a page's tree, as text a model reads.

One line per element, indented by its depth below the elements shown above it::

    root web area "Sign up" [ref_1]
     heading "Sign up" [ref_4]
     textbox "Email" [ref_7] value="ada@example.org" (focused, required)
     button "Create account" [ref_9]

Containers with neither a name nor a role worth saying (``generic``, ``none``) are left
out and their children moved up. ``filter``: omitted, elements with a box in the
viewport; ``"interactive"``, only elements an agent acts on (buttons, fields, links,
options, ..., or anything focusable); ``"all"``, off-viewport elements too.

``find`` ranks elements by the words of the query found in their name, role and
value: a word in the name counts 3, in the role 2 (with the usual other words for a
role: "field" or "input" for a textbox, "dropdown" for a combobox, ...), in the value
1; the whole query as the name adds 5; an interactive element adds 1, one outside the
viewport loses 1. The 20 best with any word found come back, best first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from viewfinder.browser.toolset.tab import toolset_ref
from viewfinder.core.element import Element, ElementTree

#: The most characters ``read_page`` returns.
MAX_READ_CHARS = 50_000
DEFAULT_DEPTH = 15
MAX_FOUND = 20

#: Roles left out (their children are shown in their place) when they have no name.
_SILENT = {"generic", "none", "line break", "div", "section", "group", "paragraph", "label text"}
_INTERACTIVE = {
    "button",
    "checkbox",
    "combobox",
    "link",
    "listbox",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "radio",
    "scrollbar",
    "searchbox",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "textbox",
    "treeitem",
}
#: Words people use for a role, by role.
_ROLE_WORDS = {
    "textbox": {"field", "input", "textbox", "text", "box", "textarea", "entry"},
    "searchbox": {"search", "field", "input", "box", "bar"},
    "combobox": {"select", "dropdown", "combobox", "menu", "list", "choice"},
    "listbox": {"select", "list", "listbox"},
    "checkbox": {"checkbox", "check", "box", "tick", "toggle"},
    "radio": {"radio", "option", "choice"},
    "button": {"button", "btn", "submit"},
    "link": {"link", "anchor", "href"},
    "heading": {"heading", "title", "header"},
    "image": {"image", "img", "picture", "icon", "logo"},
    "switch": {"switch", "toggle"},
    "slider": {"slider", "range"},
}
#: States every element of its kind has: not said.
_QUIET_STATES = {"focusable", "editable", "settable", "multiselectable"}
_STOP_WORDS = {"the", "a", "an", "of", "to", "for", "on", "in", "with", "and", "that", "this"}


def interactive(element: Element) -> bool:
    """An element an agent acts on: by role, or because it takes the focus."""
    return element.role in _INTERACTIVE or "focusable" in element.states


def element_line(element: Element, indent: int = 0) -> str:
    """``textbox "Email" [ref_7] value="..." (focused)``."""
    parts = [" " * indent + element.role]
    if element.name:
        parts.append(_quoted(element.name))
    parts.append(f"[{toolset_ref(element.ref)}]")
    if element.value is not None and element.value != element.name:
        parts.append(f"value={_quoted(element.value)}")
    states = sorted(state for state in element.states if state not in _QUIET_STATES)
    if states:
        parts.append(f"({', '.join(states)})")
    return " ".join(parts)


def _quoted(text: str) -> str:
    text = text.replace("\n", " ")
    if len(text) > 200:
        text = text[:200] + "…"
    return '"' + text.replace('"', '\\"') + '"'


def _shown(element: Element, filter: str | None) -> bool:
    if filter == "interactive":
        return interactive(element) and (element.box is not None or "focusable" in element.states)
    if element.role in _SILENT and not element.name:
        return False
    if filter == "all":
        return True
    return element.box is not None or element.role == "root web area"


def _lines(
    elements: tuple[Element, ...], filter: str | None, depth: int, level: int, above: str = ""
) -> Iterator[str]:
    for element in elements:
        if element.role == "static text" and element.name.strip() in above:
            continue  # the text its parent's name already says
        if _shown(element, filter):
            if level < depth:
                yield element_line(element, level)
                yield from _lines(element.children, filter, depth, level + 1, element.name)
        else:
            yield from _lines(element.children, filter, depth, level, above)


def read_page_text(
    tree: ElementTree,
    *,
    depth: int | None = None,
    filter: str | None = None,
    root: Element | None = None,
    max_chars: int = MAX_READ_CHARS,
) -> str:
    """The tree (or ``root``'s subtree) as lines, at most ``max_chars`` characters."""
    roots = (root,) if root is not None else tree.roots
    out: list[str] = []
    used = 0
    for line in _lines(roots, filter, depth or DEFAULT_DEPTH, 0):
        if used + len(line) + 1 > max_chars:
            out.append(
                f"[cut at {max_chars:,} characters: read a part with ref, or a smaller depth]"
            )
            break
        out.append(line)
        used += len(line) + 1
    if not out:
        return "(no elements" + (" match this filter)" if filter else " in view)")
    return "\n".join(out)


def _words(text: str) -> list[str]:
    return [word for word in re.findall(r"[\w@.+-]+", text.lower()) if word not in _STOP_WORDS]


def find_elements(tree: ElementTree, query: str, limit: int = MAX_FOUND) -> list[Element]:
    """The elements best matching ``query``, best first (see the module's docs)."""
    words = _words(query)
    whole = " ".join(words)
    scored: list[tuple[float, int, Element]] = []
    for order, element in enumerate(tree.walk()):
        if element.role in _SILENT and not element.name:
            continue
        name = set(_words(element.name))
        role = set(_words(element.role)) | _ROLE_WORDS.get(element.role, set())
        value = set(_words(element.value or ""))
        score = 0.0
        found = False
        for word in words:
            hit = 3 * (word in name) + 2 * (word in role) + (word in value)
            found = found or hit > 0
            score += hit
        if not found:
            continue
        if whole and " ".join(_words(element.name)) == whole:
            score += 5
        if interactive(element):
            score += 1
        if element.box is None:
            score -= 1
        scored.append((-score, order, element))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [element for _, _, element in scored[:limit]]
