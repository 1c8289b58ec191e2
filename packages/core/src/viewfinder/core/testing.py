"""In-process test doubles for code around capture: a canvas and its backend.

:class:`CanvasBackend` is an in-process backend that "captures" a PIL image you draw on,
so logic around capture can be tested without a display. The pytest fixtures that use
it live in :mod:`viewfinder.core.pytest_plugin`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PIL import Image, ImageDraw

from viewfinder.core.backend import CaptureBackend
from viewfinder.core.errors import CaptureNotSupportedError
from viewfinder.core.event import Event
from viewfinder.core.geometry import Region
from viewfinder.core.hookspecs import hookimpl
from viewfinder.core.imaging import ImageFormat
from viewfinder.core.screenshot import Screenshot


class Canvas:
    """A screen in memory: an RGB image plus the events performed on it."""

    def __init__(self, width: int = 640, height: int = 480, color: str = "white") -> None:
        self.image = Image.new("RGB", (width, height), color)
        self.events: list[Event] = []

    def fill(self, region: Region, color: str | tuple[int, int, int]) -> None:
        ImageDraw.Draw(self.image).rectangle(
            (region.x, region.y, region.right - 1, region.bottom - 1), fill=color
        )


class CanvasBackend(CaptureBackend):
    """A backend that captures a :class:`Canvas` held in memory; it never touches a display."""

    name = "canvas"
    priority = -1  # only when asked for by name

    def __init__(self, canvas: Canvas | None = None, **_: Any) -> None:
        self.canvas = canvas or Canvas()

    supports_act = True

    def _capture(
        self, *, region: Region | None, window: int | None, format: ImageFormat, quality: int | None
    ) -> Screenshot:
        if window is not None:
            raise CaptureNotSupportedError("the canvas backend has no windows; capture a region")
        image = self.canvas.image
        if region is not None:
            region.check_within(image.width, image.height)
            image = image.crop(region.box)
        return Screenshot.from_image(
            image, source=self.name, format=format, region=region, quality=quality
        )

    def screen_size(self) -> tuple[int, int]:
        return self.canvas.image.size

    def act(self, event: Event) -> None:
        self.canvas.events.append(event)


class CanvasPlugin:
    """A plugin object registering one :class:`CanvasBackend` bound to ``canvas``."""

    def __init__(self, canvas: Canvas) -> None:
        self.canvas = canvas

    @hookimpl
    def viewfinder_register_capture_backends(self, register: Callable[..., None]) -> None:
        canvas = self.canvas

        def factory(**options: Any) -> CanvasBackend:
            return CanvasBackend(canvas, **options)

        factory.priority = CanvasBackend.priority  # type: ignore[attr-defined]
        register(CanvasBackend.name, factory)
