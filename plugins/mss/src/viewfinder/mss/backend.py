"""The ``mss`` capture backend: the screen (X display, Windows or macOS desktop) we run on."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any

import mss
import mss.exception
from viewfinder.core import (
    Availability,
    CaptureBackend,
    CaptureError,
    CaptureNotSupportedError,
    DisplayGoneError,
    Region,
    Screenshot,
)
from viewfinder.core.imaging import ImageFormat, encode_raw


class MssBackend(CaptureBackend):
    """Capture through `mss <https://python-mss.readthedocs.io>`_.

    ``monitor`` picks a screen as mss numbers them: 0 is all monitors together, 1 the
    first (default), 2 the second, ... ``display`` (Linux) names the X display to
    read, ``":1"`` say; by default ``$DISPLAY``. Regions are relative to the monitor.
    """

    name = "mss"
    priority = 50

    def __init__(self, monitor: int = 1, display: str | None = None) -> None:
        self.monitor_index = monitor
        self.display = display
        self._local = threading.local()  # mss handles are not shareable between threads
        self._handles: list[Any] = []
        monitors = self._sct().monitors
        if not 0 <= monitor < len(monitors):
            raise CaptureError(
                f"monitor {monitor} does not exist; this screen has monitors 0 (all) to "
                f"{len(monitors) - 1}"
            )

    @classmethod
    def availability(cls, display: str | None = None, **_: Any) -> Availability:
        if sys.platform.startswith("linux") and not (display or os.environ.get("DISPLAY")):
            return Availability.no(
                "DISPLAY is not set: there is no X screen to capture (pass display=':N' "
                "or start one with `viewfinder display start`)"
            )
        return Availability.yes()

    def _sct(self) -> Any:
        sct = getattr(self._local, "sct", None)
        if sct is None:
            kwargs: dict[str, Any] = {}
            if self.display and sys.platform.startswith("linux"):
                kwargs["display"] = self.display
            try:
                sct = mss.MSS(**kwargs)
            except mss.exception.ScreenShotError as exc:
                where = self.display or os.environ.get("DISPLAY", "the default display")
                raise DisplayGoneError(
                    f"cannot open X display {where}: {exc}. Is it running? "
                    "`viewfinder display list` shows the displays viewfinder started."
                ) from exc
            self._local.sct = sct
            self._handles.append(sct)
        return sct

    def _monitor(self) -> dict[str, int]:
        return dict(self._sct().monitors[self.monitor_index])

    def screen_size(self) -> tuple[int, int]:
        monitor = self._monitor()
        return (monitor["width"], monitor["height"])

    def _capture(
        self, *, region: Region | None, window: int | None, format: ImageFormat, quality: int | None
    ) -> Screenshot:
        if window is not None:
            raise CaptureNotSupportedError(
                "the mss backend captures screens, not windows; use the xvfb backend for a "
                "window by id, or pass the window's region"
            )
        monitor = self._monitor()
        area = monitor
        if region is not None:
            region.check_within(monitor["width"], monitor["height"])
            area = {
                "left": monitor["left"] + region.x,
                "top": monitor["top"] + region.y,
                "width": region.width,
                "height": region.height,
            }
        try:
            grabbed = self._sct().grab(area)
        except mss.exception.ScreenShotError as exc:
            raise DisplayGoneError(f"mss could not grab the screen: {exc}") from exc
        data = encode_raw(
            grabbed.raw, grabbed.width, grabbed.height, format, "BGRX", quality=quality
        )
        return Screenshot(
            data=data,
            format=format,
            width=grabbed.width,
            height=grabbed.height,
            source=self.name,
            region=region,
        )

    def close(self) -> None:
        for handle in self._handles:
            # closing a handle of a display that died raises; there is nothing left to free
            with contextlib.suppress(Exception):
                handle.close()
        self._handles.clear()
        self._local = threading.local()
