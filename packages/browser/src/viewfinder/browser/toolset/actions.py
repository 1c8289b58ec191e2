"""Acting on a tab: points and refs, the mouse and the keyboard.

A point a model gives is in the pixels of the last screenshot it was sent (the tab's
``scale`` maps it to CSS pixels of the viewport). An action on a ref reads the page's
tree afresh, scrolls the element into view when it is not, and acts at the middle of
its visible box; before a click, the element at that point is asked of the page
(``DOM.getNodeForLocation``) and must be the named element or inside it, or nothing
is done and the result says what is there instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from viewfinder.browser.toolset.errors import MemberError
from viewfinder.browser.toolset.inputs import CoordinateTarget, RefTarget
from viewfinder.browser.toolset.page_text import element_line
from viewfinder.browser.toolset.tab import Tab, source_ref, toolset_ref
from viewfinder.cdp import CDPError, CDPSession
from viewfinder.cdp.page_input import modifier_mask
from viewfinder.cdp.page_nodes import resolve_node, split_key
from viewfinder.core import ActionError, Point
from viewfinder.core.element import Element

_CONTAINS = "function(hit) { return this === hit || this.contains(hit); }"


def frame_of(key: str) -> str:
    """The frame a ref's key (``"<frame id>/<epoch>/<node id>"``) names."""
    return split_key(key)[0]


def node_session(tab: Tab, frame: str) -> CDPSession:
    """The session that owns ``frame``: an out-of-process iframe's own, else the tab's."""
    # the element source keeps the iframe targets it attached, by target id (= frame id)
    children = tab.elements._frames.children(tab.session.session_id)
    if frame in children:
        return CDPSession(tab.session.connection, children[frame], frame)
    return tab.session


async def element(tab: Tab, ref: str, field: str) -> tuple[Element, str]:
    """The element ``ref`` names on ``tab`` now (a fresh read), and its node key."""
    wanted = source_ref(ref)
    if tab.tree is None:
        await tab.read()
    key = tab.keys.get(wanted)
    if key is None:
        raise MemberError(
            field, f"{ref!r} is not a reference on tab {tab.tab_id}; read_page or find first"
        )
    found = (await tab.read()).find(wanted)
    if found is None:
        raise MemberError(
            field,
            f"{ref} is no longer on the page (it navigated or re-rendered); "
            "read_page or find again",
        )
    return found, key


@contextlib.asynccontextmanager
async def node_object(tab: Tab, key: str) -> AsyncIterator[tuple[CDPSession, str, int]]:
    """The node ``key`` names as a remote object in the world that read it: its frame's
    session, the object's id and the world's execution context id (released after)."""
    session = node_session(tab, frame_of(key))
    found = await resolve_node(session, key, tab.timeout)
    if found is None:
        raise MemberError(
            None, "the element is no longer on the page (it navigated or re-rendered); "
            "read_page or find again",
        )  # fmt: skip
    object_id, context = found
    try:
        yield session, object_id, context
    finally:
        with contextlib.suppress(CDPError):  # the page may have gone meanwhile
            await session.call("Runtime.releaseObject", {"objectId": object_id})


async def call_on(tab: Tab, key: str, function: str, *args: Any) -> Any:
    """Call JavaScript ``function`` with ``this`` the node ``key`` names; its value."""
    async with node_object(tab, key) as (session, object_id, _):
        answer = await session.call(
            "Runtime.callFunctionOn",
            {
                "objectId": object_id,
                "functionDeclaration": function,
                "arguments": [{"value": arg} for arg in args],
                "returnByValue": True,
            },
        )
    if "exceptionDetails" in answer:
        details = answer["exceptionDetails"]
        raise MemberError(None, (details.get("exception") or {}).get("description") or "failed")
    return answer.get("result", {}).get("value")


async def scroll_into_view(tab: Tab, key: str) -> None:
    async with node_object(tab, key) as (session, object_id, _):
        await session.call("DOM.scrollIntoViewIfNeeded", {"objectId": object_id})


async def ref_point(tab: Tab, target: RefTarget, field: str = "target.ref") -> tuple[Point, str]:
    """Where to act on ``target`` (CSS pixels), and a line naming the element."""
    found, key = await element(tab, target.ref, field)
    if found.box is None or not _inside(found, await viewport(tab)):
        await scroll_into_view(tab, key)
        found, key = await element(tab, target.ref, field)
    if found.box is None:
        raise MemberError(field, f"{target.ref} ({element_line(found)}) has no visible box")
    box = found.box
    at = Point(x=box.x + box.width // 2, y=box.y + box.height // 2)
    await _check_hit(tab, key, at, found)
    return at, element_line(found)


def _inside(found: Element, size: tuple[float, float]) -> bool:
    box = found.box
    assert box is not None
    return (
        box.x >= 0 and box.y >= 0 and box.x + box.width <= size[0] and box.y + box.height <= size[1]
    )


async def _check_hit(tab: Tab, key: str, at: Point, found: Element) -> None:
    """Raise unless the node at ``at`` is the element ``key`` names or inside it."""
    if node_session(tab, frame_of(key)) is not tab.session:
        return  # an out-of-process iframe: the hit is its frame's element, checked there
    # the point in document coordinates: what the hit test takes
    left, top = await tab.session.scroll_offset()
    try:
        hit = await tab.session.call(
            "DOM.getNodeForLocation",
            {
                "x": round(at.x + left),
                "y": round(at.y + top),
                "includeUserAgentShadowDOM": False,
                "ignorePointerEventsNone": True,
            },
        )
    except CDPError:
        hit = {}
    hit_id = hit.get("backendNodeId")
    if hit_id is None:
        raise MemberError("target.ref", f"nothing is at ({at.x}, {at.y}); nothing was done")
    async with node_object(tab, key) as (session, own, context):
        # the hit in the same world as the element, so one can be handed to the other
        resolved = await session.call(
            "DOM.resolveNode", {"backendNodeId": hit_id, "executionContextId": context}
        )
        hit_object = resolved["object"]["objectId"]
        try:
            inside = await session.call(
                "Runtime.callFunctionOn",
                {
                    "objectId": own,
                    "functionDeclaration": _CONTAINS,
                    "arguments": [{"objectId": hit_object}],
                    "returnByValue": True,
                },
            )
            if inside.get("result", {}).get("value"):
                return
            what = await session.call(
                "Runtime.callFunctionOn",
                {
                    "objectId": hit_object,
                    "functionDeclaration": "function() { const e = this.nodeType === 1 ? this :"
                    " this.parentElement; return e ? e.outerHTML.slice(0, 120) : '?'; }",
                    "returnByValue": True,
                },
            )
        finally:
            await session.call("Runtime.releaseObject", {"objectId": hit_object})
    covering = what.get("result", {}).get("value", "?")
    raise MemberError(
        "target.ref",
        f"{toolset_ref(found.ref)} ({element_line(found)}) is covered at ({at.x}, {at.y}) "
        f"by {covering}; nothing was done",
    )


async def viewport(tab: Tab) -> tuple[float, float]:
    """The viewport's size in CSS pixels."""
    metrics = await tab.session.call("Page.getLayoutMetrics")
    css = metrics.get("cssLayoutViewport") or metrics["layoutViewport"]
    return float(css["clientWidth"]), float(css["clientHeight"])


async def coordinate_point(tab: Tab, target: CoordinateTarget, field: str = "target") -> Point:
    """``target`` (screenshot pixels) as CSS pixels of the viewport, checked inside it."""
    width, height = await viewport(tab)
    x, y = target.x / tab.scale, target.y / tab.scale
    if not (0 <= x < width and 0 <= y < height):
        shown = f"{round(width * tab.scale)}x{round(height * tab.scale)}"
        raise MemberError(field, f"({target.x}, {target.y}) is outside the viewport ({shown})")
    return Point(x=round(x), y=round(y))


async def point_of(tab: Tab, target: CoordinateTarget | RefTarget) -> tuple[Point, str]:
    """Where to act for a click target, and how to name it in the result."""
    if isinstance(target, RefTarget):
        at, line = await ref_point(tab, target)
        return at, f"{target.ref} ({line.strip()})"
    at = await coordinate_point(tab, target)
    return at, f"({target.x}, {target.y})"


def modifiers(chord: str | None) -> int:
    """A ``"ctrl+shift"`` chord as CDP's modifier bits."""
    if not chord:
        return 0
    try:
        return modifier_mask(part.strip() for part in chord.split("+") if part.strip())
    except ActionError as exc:
        raise MemberError("modifiers", str(exc)) from None


def chords(text: str) -> list[list[str]]:
    """``"ctrl+a Delete"`` as the chords pressed in turn."""
    return [[key for key in word.split("+") if key] for word in text.split()]
