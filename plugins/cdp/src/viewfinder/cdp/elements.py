"""The ``cdp`` element source: a page's accessibility tree, with boxes.

Two calls per read: ``Accessibility.getFullAXTree`` (roles, names, values, states) and
``DOMSnapshot.captureSnapshot`` (the layout box of every DOM node, in document CSS
pixels), joined on the backend DOM node id. Boxes are then moved into the viewport
(minus the scroll offset) and clipped to it: an element scrolled out of view has none.
Where the browser shows the page on a screen (a Chromium that is not headless, on a
viewfinder display), the boxes are moved to screen pixels by the window's position and
the height of the browser's own bars above the page; a headless page keeps page pixels
(``ElementTree.coordinates`` says which).
"""

from __future__ import annotations

import re
from typing import Any

from viewfinder.cdp.backend import CdpBackend
from viewfinder.cdp.connection import DEFAULT_CALL_TIMEOUT
from viewfinder.cdp.session import CDPSession
from viewfinder.core.backend import Availability
from viewfinder.core.element_sources import ElementNode, ElementRead, ElementSource
from viewfinder.core.geometry import Region

#: Roles that repeat their parent's text, one per line of it: left out.
_SKIPPED_ROLES = {"InlineTextBox"}
#: Where the page sits on the screen, asked of the page itself.
_PLACEMENT = (
    "[navigator.userAgent.includes('Headless'), screenX, screenY, outerWidth, innerWidth,"
    " outerHeight, innerHeight, devicePixelRatio]"
)


class CdpElementSource(ElementSource):
    """The accessibility tree of a page in Chromium.

    ``url``, ``cdp_url``, ``width`` and ``height`` are the ``cdp`` capture backend's: a
    page opened in a launched headless Chromium, or in the browser at ``cdp_url``.
    ``screen``: True maps boxes to screen pixels, False keeps page pixels, None (the
    default) maps them when the browser is not headless.
    """

    name = "cdp"
    priority = 0

    def __init__(
        self,
        url: str | None = None,
        cdp_url: str | None = None,
        width: int = 1280,
        height: int = 800,
        screen: bool | None = None,
        timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        super().__init__()
        self.screen = screen
        self.timeout = timeout
        self._fills_window = False
        self.backend = CdpBackend(
            url=url, cdp_url=cdp_url, width=width, height=height, timeout=timeout
        )

    @classmethod
    def availability(
        cls, url: str | None = None, cdp_url: str | None = None, **_: Any
    ) -> Availability:
        if url is None and cdp_url is None:
            return Availability.no("no page: pass url=... or cdp_url=... (`--url`, `--cdp-url`)")
        return CdpBackend.availability(cdp_url=cdp_url)

    def _read(self) -> ElementRead:
        return self.backend.run(self._aread())

    def close(self) -> None:
        """Close the page, and the browser when this source launched it."""
        self.backend.close()

    async def _aread(self) -> ElementRead:
        session = await self.backend._ensure_started()
        placement = await session.evaluate(_PLACEMENT, timeout=self.timeout)
        on_screen = not placement[0] if self.screen is None else self.screen
        if on_screen and not self._fills_window:
            # The page was opened with an emulated viewport size, drawn at the corner of
            # the window and reported as the window's inner size: on a screen the page
            # must be the window's own for the window's bars to be measured.
            await session.call("Emulation.clearDeviceMetricsOverride", timeout=self.timeout)
            self._fills_window = True
            placement = await session.evaluate(_PLACEMENT, timeout=self.timeout)
        tree = await session.call("Accessibility.getFullAXTree", timeout=self.timeout)
        snapshot = await session.call(
            "DOMSnapshot.captureSnapshot", {"computedStyles": []}, timeout=self.timeout
        )
        frame = await _viewport(session, self.timeout)
        mapping = _Mapping(frame, placement if on_screen else None)
        boxes = _boxes(snapshot)
        roots = _tree(tree.get("nodes", []), boxes, mapping)
        return ElementRead(roots, coordinates="screen" if on_screen else "page")


async def _viewport(session: CDPSession, timeout: float) -> tuple[float, float, float, float]:
    metrics = await session.call("Page.getLayoutMetrics", timeout=timeout)
    view = metrics.get("cssVisualViewport") or metrics["visualViewport"]
    return (view["pageX"], view["pageY"], view["clientWidth"], view["clientHeight"])


class _Mapping:
    """From document CSS pixels to the viewport's (clipped to it), then to the screen's."""

    def __init__(
        self, viewport: tuple[float, float, float, float], placement: list[Any] | None
    ) -> None:
        self.scroll_x, self.scroll_y, self.width, self.height = viewport
        self.left = self.top = 0.0
        self.scale = 1.0
        if placement is not None:
            _, screen_x, screen_y, outer_w, inner_w, outer_h, inner_h, ratio = placement
            self.scale = float(ratio or 1)
            # the browser's bars sit above the page; side borders share the rest
            self.left = (screen_x + max(outer_w - inner_w, 0) / 2) * self.scale
            self.top = (screen_y + max(outer_h - inner_h, 0)) * self.scale

    def box(self, bounds: list[float]) -> Region | None:
        x, y, width, height = bounds
        left = max(x - self.scroll_x, 0.0)
        top = max(y - self.scroll_y, 0.0)
        right = min(x - self.scroll_x + width, self.width)
        bottom = min(y - self.scroll_y + height, self.height)
        if right - left < 1 or bottom - top < 1:
            return None
        return Region(
            x=round(self.left + left * self.scale),
            y=round(self.top + top * self.scale),
            width=max(round((right - left) * self.scale), 1),
            height=max(round((bottom - top) * self.scale), 1),
        )


def _boxes(snapshot: dict[str, Any]) -> dict[int, list[float]]:
    """Layout bounds (document CSS pixels) by backend DOM node id, main frame only."""
    documents = snapshot.get("documents") or []
    if not documents:
        return {}
    document = documents[0]
    backend_ids = document["nodes"].get("backendNodeId", [])
    layout = document.get("layout", {})
    return {
        backend_ids[index]: bounds
        for index, bounds in zip(
            layout.get("nodeIndex", []), layout.get("bounds", []), strict=False
        )
    }


def _role(raw: str) -> str:
    """``"StaticText"`` -> ``"static text"``: lower-case words, as AT-SPI names roles."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", raw).lower()


def _states(properties: list[dict[str, Any]]) -> frozenset[str]:
    states = set()
    for prop in properties:
        value = prop.get("value", {}).get("value")
        # true/false and tristate properties are states; levels, URLs, ... are not
        if value is True or value in ("true", "mixed") or (prop["name"] == "editable" and value):
            states.add(_role(prop["name"]))
    return frozenset(states)


def _tree(
    nodes: list[dict[str, Any]], boxes: dict[int, list[float]], mapping: _Mapping
) -> list[ElementNode]:
    by_id = {node["nodeId"]: node for node in nodes}

    def build(node_id: str) -> list[ElementNode]:
        node = by_id.get(node_id)
        if node is None:
            return []
        children = [element for child in node.get("childIds", []) for element in build(child)]
        role = node.get("role", {}).get("value", "")
        if node.get("ignored") or role in _SKIPPED_ROLES or not role:
            return children if role not in _SKIPPED_ROLES else []  # hoist what it holds
        value = node.get("value", {}).get("value")
        bounds = boxes.get(node.get("backendDOMNodeId", -1))
        return [
            ElementNode(
                role=_role(str(role)),
                name=str(node.get("name", {}).get("value", "") or ""),
                value=None if value in (None, "") else str(value),
                states=_states(node.get("properties", [])),
                box=mapping.box(bounds) if bounds else None,
                children=children,
            )
        ]

    if not nodes:
        return []
    return build(nodes[0]["nodeId"])
