"""The ``cdp`` element source: a page's accessibility tree, with boxes on its pixels.

Per read, for the page and for each out-of-process iframe (its own target, attached
with ``Target.setAutoAttach``): ``Accessibility.getFullAXTree`` for each of its frames
(roles, names, values, states) and one ``DOMSnapshot.captureSnapshot`` (the layout box
of every node of every document it draws), joined on the backend DOM node id. Boxes
are clipped to what clips them (:mod:`viewfinder.cdp.page_layout`) and given in
CSS pixels of the page's viewport (the pixels of the backend's screenshots and
input). Where the browser shows the page on a screen (a Chromium that is not
headless, on a viewfinder display) they are screen pixels instead: the window's
place, the height of the browser's bars, the device scale factor and the browser's
zoom are applied (``ElementTree.coordinates`` says which). A ref is bound to its
node (frame id and backend node id), so rows inserted above it leave it in place.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from viewfinder.cdp.backend import CdpBackend
from viewfinder.cdp.connection import DEFAULT_CALL_TIMEOUT, CDPConnection
from viewfinder.cdp.errors import CDPError
from viewfinder.cdp.page_layout import STYLES, Rect, read_boxes
from viewfinder.cdp.page_tree import frame_tree
from viewfinder.cdp.session import CDPSession
from viewfinder.core.backend import Availability
from viewfinder.core.element_sources import ElementNode, ElementRead, ElementSource
from viewfinder.core.geometry import Region

#: Where the page sits on the screen, asked of the page itself.
_PLACEMENT = (
    "[navigator.userAgent.includes('Headless'), screenX, screenY, outerWidth, outerHeight,"
    " devicePixelRatio]"
)


class CdpElementSource(ElementSource):
    """The accessibility tree of a page in Chromium.

    ``url``, ``cdp_url``, ``width`` and ``height`` are the ``cdp`` capture backend's: a
    page opened in a launched headless Chromium, or in the browser at ``cdp_url``;
    ``cdp_url`` without ``url`` reads the page that browser shows (its active tab),
    as it is. ``screen``: True maps boxes to screen pixels, False keeps page pixels,
    None (the default) maps them when the browser is not headless.
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
        self._frames = _OutOfProcessFrames()
        self.backend = CdpBackend(
            url=url,
            cdp_url=cdp_url,
            width=width,
            height=height,
            timeout=timeout,
            shown_page=url is None,
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
        """Close the page (a page it opened), and the browser when this source launched it."""
        self.backend.close()

    async def _aread(self) -> ElementRead:
        session = await self.backend._ensure_started()
        placement = await session.evaluate(_PLACEMENT, timeout=self.timeout)
        on_screen = not placement[0] if self.screen is None else self.screen
        if on_screen and not self._fills_window and session.owns_target:
            # The page was opened with an emulated viewport size, drawn at the corner of
            # the window: on a screen the page must be the window's own for the
            # window's bars to be measured.
            await session.call("Emulation.clearDeviceMetricsOverride", timeout=self.timeout)
            self._fills_window = True
            placement = await session.evaluate(_PLACEMENT, timeout=self.timeout)
        metrics = await session.call("Page.getLayoutMetrics", timeout=self.timeout)
        view = _View(metrics, placement, on_screen)
        found = _Found()
        roots = await self._target(session, view, (0.0, 0.0), view.viewport, found)
        reason = ""
        if found.left_out:
            reason = "left out: " + "; ".join(found.left_out)
        return ElementRead(roots, reason=reason, coordinates="screen" if on_screen else "page")

    async def _target(
        self,
        session: CDPSession,
        view: _View,
        origin: tuple[float, float],
        clip: Rect | None,
        found: _Found,
    ) -> list[ElementNode]:
        """The tree of one target (the page, or an out-of-process iframe placed at
        ``origin`` and clipped to ``clip``), its iframes' trees inside it."""
        connection, sid = session.connection, session.session_id
        await self._frames.watch(connection, sid, self.timeout)
        snapshot = await session.call(
            "DOMSnapshot.captureSnapshot",
            {"computedStyles": STYLES, "includeDOMRects": True},
            timeout=self.timeout,
        )
        laid = read_boxes(snapshot, view.factor, clip or (0, 0, 0, 0), origin)
        if clip is None:  # an iframe that is not drawn: its elements have no boxes
            for document in laid.documents:
                document.boxes = {}
        # the accessibility tree of each frame this target draws, all asked at once
        frames = [d for d in laid.documents if d.frame_id]
        answers = await asyncio.gather(
            *(
                session.call(
                    "Accessibility.getFullAXTree",
                    {"frameId": document.frame_id},
                    timeout=self.timeout,
                )
                for document in frames
            ),
            return_exceptions=True,
        )
        inside: dict[int, dict[int, list[ElementNode]]] = {}
        for target_id, child_sid in list(self._frames.children(sid).items()):
            owner = await _frame_owner(session, target_id, self.timeout)
            place = laid.frames.get(owner) if owner is not None else None
            child = CDPSession(connection, child_sid, target_id)
            try:
                nodes = await self._target(
                    child,
                    view,
                    place.origin if place else (0.0, 0.0),
                    place.clip if place else None,
                    found,
                )
            except CDPError as exc:
                found.left_out.append(f"an out-of-process iframe ({exc})")
                continue
            if owner is None:
                found.left_out.append("an out-of-process iframe whose element was not found")
                continue
            holder = place.document if place is not None else 0
            inside.setdefault(holder, {}).setdefault(owner, []).extend(nodes)
        trees: dict[int, list[ElementNode]] = {}
        indexes = {id(document): index for index, document in enumerate(laid.documents)}
        for document, answer in reversed(list(zip(frames, answers, strict=True))):
            index = indexes[id(document)]
            if isinstance(answer, BaseException):
                if not isinstance(answer, CDPError):
                    raise answer
                found.left_out.append(f"the frame at {document.url or '?'} ({answer})")
                continue
            nodes = frame_tree(
                answer.get("nodes", []),
                document.frame_id,
                document.boxes,
                view.region,
                inside.get(index, {}),
            )
            if document.parent is None or document.owner is None:
                trees[index] = nodes
            else:
                inside.setdefault(document.parent, {}).setdefault(document.owner, []).extend(nodes)
        return trees.get(0, [])


@dataclass
class _Found:
    """What a read could not include, said in its reason."""

    left_out: list[str] = field(default_factory=list)


class _View:
    """From device pixels of the top viewport to the pixels a box is given in.

    ``factor``: device pixels per CSS pixel (the device scale factor times the zoom),
    the ratio of the layout viewport's size to its CSS size. In page coordinates a box
    is divided by it; on a screen it is moved by where the viewport's top-left is
    drawn: the window's place and the browser's bars, which the window reports in
    pixels independent of the zoom.
    """

    def __init__(self, metrics: dict[str, Any], placement: list[Any], on_screen: bool) -> None:
        device = metrics.get("layoutViewport") or metrics["cssLayoutViewport"]
        css = metrics.get("cssLayoutViewport") or device
        factor = device["clientWidth"] / css["clientWidth"] if css["clientWidth"] else 1.0
        ratio = float(placement[5] or 1)
        # devicePixelRatio is exact where it is not emulated; the sizes are rounded
        self.factor = ratio if abs(ratio - factor) <= 0.02 * factor else factor
        self.viewport: Rect = (
            0.0,
            0.0,
            float(device["clientWidth"]),
            float(device["clientHeight"]),
        )
        self.on_screen = on_screen
        self.left = self.top = 0.0
        if on_screen:
            _, screen_x, screen_y, outer_w, outer_h, _ = placement
            zoom = float((metrics.get("cssVisualViewport") or {}).get("zoom") or 1)
            scale = self.factor / zoom  # the device scale factor alone
            # the browser's bars sit above the page; side borders share the rest
            self.left = screen_x * scale + max(outer_w * scale - device["clientWidth"], 0) / 2
            self.top = screen_y * scale + max(outer_h * scale - device["clientHeight"], 0)

    def region(self, rect: Rect) -> Region | None:
        left, top, right, bottom = rect
        if not self.on_screen:
            left, top, right, bottom = (value / self.factor for value in rect)
        else:
            left, top, right, bottom = (
                left + self.left,
                top + self.top,
                right + self.left,
                bottom + self.top,
            )
        x, y = round(left), round(top)
        width, height = round(right) - x, round(bottom) - y
        if width < 1 or height < 1:
            return None
        return Region(x=x, y=y, width=width, height=height)


class _OutOfProcessFrames:
    """The iframe targets attached under each session (``Target.setAutoAttach``)."""

    def __init__(self) -> None:
        self._children: dict[str, dict[str, str]] = {}

    def children(self, session_id: str) -> dict[str, str]:
        """Target id -> session id of each iframe target attached under ``session_id``."""
        return self._children.get(session_id, {})

    async def watch(self, connection: CDPConnection, session_id: str, timeout: float) -> None:
        if session_id in self._children:
            return
        found = self._children[session_id] = {}

        def attached(params: dict[str, Any]) -> None:
            info = params.get("targetInfo", {})
            if info.get("type") == "iframe":
                found[info["targetId"]] = params["sessionId"]

        def detached(params: dict[str, Any]) -> None:
            for target_id, child in list(found.items()):
                if child == params.get("sessionId"):
                    del found[target_id]

        connection.on("Target.attachedToTarget", attached, session_id=session_id)
        connection.on("Target.detachedFromTarget", detached, session_id=session_id)
        # the iframes there already are attached before this answers
        await connection.call(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
            session_id=session_id,
            timeout=timeout,
        )


async def _frame_owner(session: CDPSession, frame_id: str, timeout: float) -> int | None:
    try:
        owner = await session.call("DOM.getFrameOwner", {"frameId": frame_id}, timeout=timeout)
    except CDPError:
        return None
    backend_id = owner.get("backendNodeId")
    return backend_id if isinstance(backend_id, int) else None
