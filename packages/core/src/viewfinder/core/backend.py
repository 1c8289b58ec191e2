"""The capture backend contract every backend implements."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from viewfinder.core.errors import CaptureNotSupportedError, PluginError
from viewfinder.core.event import Event
from viewfinder.core.geometry import Region
from viewfinder.core.imaging import ImageFormat, normalize_format
from viewfinder.core.plugins import publish_screenshot
from viewfinder.core.screenshot import Screenshot


@dataclass(frozen=True)
class Availability:
    """Whether a backend can capture here, and why not when it cannot."""

    available: bool
    reason: str = ""

    @classmethod
    def yes(cls, detail: str = "") -> Availability:
        return cls(True, detail)

    @classmethod
    def no(cls, reason: str) -> Availability:
        return cls(False, reason)

    def __bool__(self) -> bool:
        return self.available


class CaptureBackend(ABC):
    """Base class of capture backends.

    Subclasses implement :meth:`_capture` (and :meth:`_acapture` when they are async at
    heart). The public :meth:`capture` / :meth:`acapture` check the arguments and pass
    every screenshot through the ``viewfinder_screenshot_captured`` hook exactly once.
    A backend that can act on its screen sets ``supports_act`` and implements :meth:`act`.
    """

    #: Name under which the backend is registered.
    name: ClassVar[str] = "unnamed"
    #: Order when picking the best available backend (higher first; < 0: never picked).
    priority: ClassVar[int] = 0
    #: True when :meth:`act` can perform input events on the captured screen.
    supports_act: ClassVar[bool] = False

    @classmethod
    def availability(cls, **options: Any) -> Availability:
        """Whether this backend, created with ``options``, can capture here; why not if not.

        Called with no options by ``viewfinder backends`` and when picking the best
        available backend; with the caller's options by :func:`viewfinder.core.get_backend`.
        """
        return Availability.yes()

    # -- capture ------------------------------------------------------------------

    def capture(
        self,
        region: Region | None = None,
        window: int | None = None,
        format: str = "png",
        *,
        quality: int | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> Screenshot:
        """Capture the screen, a ``region`` of it, or one ``window`` (by id) as an image.

        ``context`` is passed on to the ``viewfinder_screenshot_captured`` observers.
        """
        fmt = normalize_format(format)
        shot = self._checked(
            self._capture(region=region, window=window, format=fmt, quality=quality)
        )
        publish_screenshot(shot, self._context(context))
        return shot

    def _checked(self, shot: object) -> Screenshot:
        if not isinstance(shot, Screenshot):
            raise PluginError(
                f"capture backend {self.name!r} ({type(self).__module__}."
                f"{type(self).__qualname__}) returned a {type(shot).__name__} from _capture(), "
                "not a viewfinder.core.Screenshot (see docs/plugins.md)"
            )
        return shot

    async def acapture(
        self,
        region: Region | None = None,
        window: int | None = None,
        format: str = "png",
        *,
        quality: int | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> Screenshot:
        """Async :meth:`capture`; by default runs the sync capture in a worker thread."""
        fmt = normalize_format(format)
        shot = self._checked(
            await self._acapture(region=region, window=window, format=fmt, quality=quality)
        )
        publish_screenshot(shot, self._context(context))
        return shot

    @abstractmethod
    def _capture(
        self, *, region: Region | None, window: int | None, format: ImageFormat, quality: int | None
    ) -> Screenshot:
        """Grab and encode one frame. Raise viewfinder errors for bad input."""

    async def _acapture(
        self, *, region: Region | None, window: int | None, format: ImageFormat, quality: int | None
    ) -> Screenshot:
        return await asyncio.to_thread(
            self._capture, region=region, window=window, format=format, quality=quality
        )

    def _context(self, extra: Mapping[str, Any] | None) -> dict[str, Any]:
        return {"backend": self.name, **(extra or {})}

    # -- screen and input -----------------------------------------------------------

    def screen_size(self) -> tuple[int, int]:
        """Width and height of the whole screen this backend captures."""
        shot = self._capture(region=None, window=None, format="png", quality=None)
        return (shot.width, shot.height)

    def act(self, event: Event) -> None:
        """Perform ``event`` (click, type, key, scroll, ...) on the captured screen."""
        raise CaptureNotSupportedError(
            f"capture backend {self.name!r} cannot perform input events; "
            "use one that can act (xvfb, cdp)"
        )

    async def aact(self, event: Event) -> None:
        """Async :meth:`act`; by default runs it in a worker thread."""
        await asyncio.to_thread(self.act, event)

    def wait_to_act(self, event: Event) -> None:
        """Wait until ``event`` can be performed as an action of its own; at once by
        default. An X backend waits out the double-click time of a press it just made
        where ``event`` presses, so the app does not count the two as one double-click.
        A caller that captures the screen before acting calls it before the capture, so
        the frame it pairs with the action is the one the action met.
        """

    def wait_handled(self, event: Event, timeout: float) -> bool | None:
        """Wait up to ``timeout`` seconds until the app ``event`` (just performed by
        :meth:`act`) went to has handled it, and the input before it.

        True once the app said so, False when it did not in time, None when this
        backend cannot ask (the default): an X server hands input to an app's queue and
        returns, so a caller that reads what the app did next (its files, its screen)
        asks first.
        """
        return None

    # -- lifetime -------------------------------------------------------------------

    def close(self) -> None:
        """Release what the backend holds (connections, browsers, maps)."""

    def __enter__(self) -> CaptureBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
