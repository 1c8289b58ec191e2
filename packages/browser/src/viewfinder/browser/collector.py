"""Collecting a call's screenshots from the CDP transport.

The collector is a call-result listener on the call's own session view: it sees the
``(method, params, result)`` of every command that view sent and keeps the successful
``Page.captureScreenshot`` results as core Screenshots, in the order they were
answered. Nothing in the snippet has to cooperate: a raw ``session.call(...)`` counts
as much as ``page.screenshot()``. Each collected screenshot passes core's
``viewfinder_screenshot_captured`` hook once.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Mapping
from typing import Any

from viewfinder.browser.view import CAPTURE_METHOD
from viewfinder.core import Region, Screenshot, publish_screenshot
from viewfinder.core.imaging import image_size, normalize_format, sniff_format

log = logging.getLogger(__name__)

#: The backend name screenshots of the browser tool carry (``Screenshot.source`` and the
#: hook's ``context["backend"]``).
SOURCE = "cdp"


def screenshot_from_result(params: Mapping[str, Any], result: Mapping[str, Any]) -> Screenshot:
    """The Screenshot a ``Page.captureScreenshot`` call with ``params`` answered.

    The format is read from the image bytes (so the mime type is right whatever was
    asked), the size from the image header (the image is not decoded), and the region
    from the ``clip`` parameter when there was one.
    """
    try:
        data = base64.b64decode(result["data"], validate=True)
    except (KeyError, TypeError, binascii.Error) as exc:
        raise ValueError(f"captureScreenshot answered without valid image data ({exc})") from exc
    return screenshot_from_bytes(data, params)


def screenshot_from_bytes(data: bytes, params: Mapping[str, Any]) -> Screenshot:
    """The Screenshot of decoded capture bytes; see :func:`screenshot_from_result`."""
    fmt = sniff_format(data) or normalize_format(str(params.get("format", "png")))
    width, height = image_size(data)
    return Screenshot(
        data=data,
        format=fmt,
        width=width,
        height=height,
        source=SOURCE,
        region=_clip_region(params.get("clip")),
    )


def _clip_region(clip: Any) -> Region | None:
    if not isinstance(clip, Mapping):
        return None
    try:
        region = Region(
            x=max(round(clip["x"]), 0),
            y=max(round(clip["y"]), 0),
            width=max(round(clip["width"]), 1),
            height=max(round(clip["height"]), 1),
        )
    except (KeyError, TypeError, ValueError):
        return None
    return region


class ScreenshotCollector:
    """The screenshots of one call, in call order.

    Register :meth:`observe` with ``view.on_own_call_result``; ``context`` is what the
    hook receives (``backend``, ``session_id``, ``call_id``), plus ``seq``, the
    screenshot's 1-based position in the call.
    """

    def __init__(self, context: Mapping[str, Any]) -> None:
        self.context = dict(context)
        self.screenshots: list[Screenshot] = []
        # id(result) -> (result, shot): the result is kept so that its id stays unique.
        self._by_result: dict[int, tuple[Mapping[str, Any], Screenshot]] = {}

    def observe(self, method: str, params: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        if method != CAPTURE_METHOD:
            return
        shot = screenshot_from_result(params, result)
        self.screenshots.append(shot)
        self._by_result[id(result)] = (result, shot)
        publish_screenshot(shot, {**self.context, "seq": len(self.screenshots)})

    def screenshot_for(self, result: Mapping[str, Any]) -> Screenshot | None:
        """The screenshot collected from ``result`` (the dict ``call()`` returned)."""
        entry = self._by_result.pop(id(result), None)
        if entry is None or entry[0] is not result:
            return None
        return entry[1]
