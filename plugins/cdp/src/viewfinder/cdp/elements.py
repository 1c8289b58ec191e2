"""The ``cdp`` element source: a page's elements, with boxes on its pixels.

Per read, for the page and for each out-of-process iframe (its own target, attached
with ``Target.setAutoAttach``): one script in each of its frames, run in an isolated
world (:mod:`viewfinder.cdp.page_script`), computes every rendered element's role,
name, value and states from the DOM with the ARIA rules and measures its boxes.
Boxes are clipped to what clips them (:mod:`viewfinder.cdp.page_layout`) and given in
CSS pixels of the page's viewport (the pixels of the backend's screenshots and
input). Where the browser shows the page on a screen (a Chromium that is not
headless, on a viewfinder display) they are screen pixels instead: the window's
place, the height of the browser's bars, the device scale factor and the browser's
zoom are applied (``ElementTree.coordinates`` says which). A ref is bound to its
node (the node object's id in the reading world), so rows inserted above it leave
it in place.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from viewfinder.cdp.backend import CdpBackend
from viewfinder.cdp.connection import DEFAULT_CALL_TIMEOUT, CDPConnection
from viewfinder.cdp.errors import CDPError
from viewfinder.cdp.page_layout import Rect, frame_boxes
from viewfinder.cdp.page_script import read_frame
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

        async def measure() -> tuple[Any, dict[str, Any]]:
            # both asked at once: a read's round trips add up
            placement, metrics = await asyncio.gather(
                session.evaluate(_PLACEMENT, timeout=self.timeout),
                session.call("Page.getLayoutMetrics", timeout=self.timeout),
            )
            return placement, metrics

        placement, metrics = await measure()
        on_screen = not placement[0] if self.screen is None else self.screen
        if on_screen and not self._fills_window and session.owns_target:
            # The page was opened with an emulated viewport size, drawn at the corner of
            # the window: on a screen the page must be the window's own for the
            # window's bars to be measured.
            await session.call("Emulation.clearDeviceMetricsOverride", timeout=self.timeout)
            self._fills_window = True
            placement, metrics = await measure()
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
        tree = await session.call("Page.getFrameTree", timeout=self.timeout)
        remote = self._frames.children(sid)
        # this target's own frames, parents first; out-of-process ones are read below
        local = [frame for frame in _frames(tree["frameTree"]) if frame[0] not in remote]
        answers = await asyncio.gather(
            *(read_frame(session, frame_id, self.timeout) for frame_id, _ in local),
            return_exceptions=True,
        )
        reads: dict[str, tuple[dict[str, Any], dict[str, int]]] = {}
        for (frame_id, url), answer in zip(local, answers, strict=True):
            if isinstance(answer, BaseException):
                if not isinstance(answer, CDPError):
                    raise answer
                found.left_out.append(f"the frame at {url or '?'} ({answer})")
            else:
                reads[frame_id] = answer
                if answer[0].get("loading"):
                    found.left_out.append(
                        f"what the frame at {url or '?'} has not parsed yet (its document is "
                        "still loading: read again once it has loaded)"
                    )
                if answer[0].get("unchecked"):
                    found.left_out.append(
                        f"what {answer[0]['unchecked']} elements of the frame at "
                        f"{url or '?'} may hold in closed shadow roots (custom elements, and "
                        "built-in ones none of whose own children is drawn; the next reads "
                        "ask)"
                    )
        # frame id -> where it is drawn, and the frame and iframe node holding it
        places: dict[str, _Place] = {local[0][0]: _Place(origin, clip)} if local else {}
        boxes: dict[str, dict[int, Rect | None]] = {}
        for frame_id, _ in local:
            place = places.get(frame_id)
            if frame_id not in reads or place is None:
                continue  # its iframe is not rendered, or its parent was not read
            read, shown = reads[frame_id]
            boxes[frame_id], iframes = frame_boxes(read, view.factor, place.clip, place.origin)
            for shown_frame, owner in shown.items():
                at = iframes.get(owner)
                places[shown_frame] = _Place(
                    at.origin if at else (0.0, 0.0), at.clip if at else None, frame_id, owner
                )
        inside: dict[str, dict[int, list[ElementNode]]] = {}
        for target_id, child_sid in list(remote.items()):
            place = places.get(target_id)
            if place is None or place.holder is None:
                found.left_out.append("an out-of-process iframe whose element is not shown")
                continue
            frame_session = CDPSession(connection, child_sid, target_id)
            try:
                nodes = await self._target(frame_session, view, place.origin, place.clip, found)
            except CDPError as exc:
                found.left_out.append(f"an out-of-process iframe ({exc})")
                continue
            inside.setdefault(place.holder, {}).setdefault(place.owner, []).extend(nodes)
        trees: dict[str, list[ElementNode]] = {}
        for frame_id, _ in reversed(local):  # children first: they go inside their iframe
            if frame_id not in boxes:
                continue
            nodes = frame_tree(
                reads[frame_id][0],
                frame_id,
                boxes[frame_id],
                view.region,
                inside.get(frame_id, {}),
            )
            place = places[frame_id]
            if place.holder is None:
                trees[frame_id] = nodes
            else:
                inside.setdefault(place.holder, {}).setdefault(place.owner, []).extend(nodes)
        return trees.get(local[0][0], []) if local else []


@dataclass
class _Place:
    """Where a frame is drawn, and the frame and iframe node (id) that show it."""

    origin: tuple[float, float]
    clip: Rect | None
    holder: str | None = None
    owner: int = 0


def _frames(tree: dict[str, Any]) -> list[tuple[str, str]]:
    """Each frame's id and URL, parents first (``Page.getFrameTree``)."""
    found: list[tuple[str, str]] = []
    stack = [tree]
    while stack and len(found) < 10_000:
        node = stack.pop()
        frame = node.get("frame", {})
        found.append((str(frame.get("id", "")), str(frame.get("url", ""))))
        stack.extend(reversed(node.get("childFrames", [])))
    return found


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
