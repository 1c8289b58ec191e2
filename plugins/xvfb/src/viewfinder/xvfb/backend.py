"""The ``xvfb`` capture backend: frames from an X display's shared-memory framebuffer."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import Xlib.display
from PIL import Image

from viewfinder.core.backend import Availability, CaptureBackend
from viewfinder.core.errors import BackendUnavailableError, DisplayGoneError
from viewfinder.core.event import Event
from viewfinder.core.geometry import Region
from viewfinder.core.imaging import encode
from viewfinder.core.screenshot import Screenshot
from viewfinder.xvfb import getimage, registry, server, windows
from viewfinder.xvfb.connection import CONNECTION_ERRORS, ThreadConnections, gone_message
from viewfinder.xvfb.display import Display, running_displays
from viewfinder.xvfb.framebuffer import Framebuffer
from viewfinder.xvfb.input import XInput


class XvfbBackend(CaptureBackend):
    """Capture (and act on) an X display, reading Xvfb's framebuffer through shared memory.

    ``display`` is a :class:`~viewfinder.xvfb.display.Display`, a display name such as
    ``":99"``, or None for ``$DISPLAY``. Displays started by this process or by
    ``viewfinder display start`` are read from their framebuffer file (an ``mmap``, no
    X request per frame); any other X display is read with the X GetImage request.
    ``framebuffer=False`` forces GetImage. Safe to use from several threads.
    """

    name = "xvfb"
    priority = 100
    supports_act = True

    def __init__(
        self, display: Display | str | None = None, *, framebuffer: bool = True, **_: Any
    ) -> None:
        self._display: Display | None = None
        self._pid: int | None = None
        self._fb_path: Path | None = None
        if isinstance(display, Display):
            self._display = display
            display_name = display.name
        else:
            display_name = display or os.environ.get("DISPLAY") or ""
            if not display_name:
                raise BackendUnavailableError(self.name, _no_display_reason())
            self._find_framebuffer(display_name)
        self.display_name = display_name
        self.use_framebuffer = framebuffer
        self._connections = ThreadConnections(display_name)
        self._lock = threading.Lock()
        self._framebuffer: Framebuffer | None = None
        self._own_framebuffer = False
        self._input: XInput | None = None

    def _find_framebuffer(self, display_name: str) -> None:
        # A Display of this process, or one from `viewfinder display start`: both have a
        # framebuffer file we can map instead of asking X for pixels.
        for candidate in running_displays():
            if candidate.name == display_name:
                self._display = candidate
                return
        record = registry.find_display(display_name)
        if record is not None and record.is_alive() and record.framebuffer_path.exists():
            self._pid, self._fb_path = record.pid, record.framebuffer_path

    @classmethod
    def availability(cls, display: Display | str | None = None, **_: Any) -> Availability:
        """Whether ``display`` (default ``$DISPLAY``) can be captured; the fix when not."""
        if isinstance(display, Display):
            if display.is_alive():
                return Availability.yes(display.name)
            return Availability.no(f"{display!r} is not running; start() it first")
        name = display or os.environ.get("DISPLAY")
        if name:
            return Availability.yes(f"DISPLAY={name}")
        return Availability.no(_no_display_reason())

    # -- capture -----------------------------------------------------------------------

    @property
    def uses_framebuffer(self) -> bool:
        """True when frames come from the shared-memory framebuffer, not X GetImage."""
        return self._get_framebuffer() is not None

    def _capture(
        self, *, region: Region | None, window: int | None, format: str, quality: int | None
    ) -> Screenshot:
        self._check_alive()
        area = region
        if window is not None:
            with self._x() as conn:
                area = windows.visible_region(conn, window, self.display_name)
        image = self._grab(area)
        # The process may have died while we read: its last frame is not the screen.
        self._check_alive()
        return Screenshot(
            data=encode(image, format, quality),
            format=format,  # type: ignore[arg-type]  # normalised by capture()
            width=image.width,
            height=image.height,
            source=self.name,
            region=area,
        )

    def grab(self, region: Region | None = None) -> Image.Image:
        """The screen (or ``region``) as a PIL image, without encoding it."""
        self._check_alive()
        return self._grab(region)

    def _grab(self, area: Region | None) -> Image.Image:
        framebuffer = self._get_framebuffer()
        if framebuffer is not None:
            return framebuffer.image(area)
        with self._x() as conn:
            return getimage.grab(conn, area)

    def screen_size(self) -> tuple[int, int]:
        """Width and height of the display's screen."""
        self._check_alive()
        framebuffer = self._get_framebuffer()
        if framebuffer is not None:
            return (framebuffer.width, framebuffer.height)
        with self._x() as conn:
            return getimage.screen_size(conn)

    # -- input -------------------------------------------------------------------------

    @property
    def input(self) -> XInput:
        """XTest input on this display (the Display's own when there is one)."""
        if self._display is not None:
            return self._display.input
        with self._lock:
            if self._input is None:
                self._input = XInput(self.display_name)
            return self._input

    def act(self, event: Event) -> None:
        """Perform ``event`` through XTest; returns once the X server has carried it out."""
        self._check_alive()
        self.input.perform(event)

    # -- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        """Close this backend's X connections and maps (the display keeps running)."""
        self._connections.close()
        with self._lock:
            if self._own_framebuffer and self._framebuffer is not None:
                self._framebuffer.close()
            self._framebuffer = None
            if self._input is not None:
                self._input.close()
                self._input = None

    def __repr__(self) -> str:
        return f"<XvfbBackend {self.display_name}>"

    # -- internals ------------------------------------------------------------------------

    def _get_framebuffer(self) -> Framebuffer | None:
        if not self.use_framebuffer:
            return None
        with self._lock:
            if self._framebuffer is None:
                if self._display is not None:
                    self._framebuffer = self._display.framebuffer()
                elif self._fb_path is not None:
                    self._framebuffer = Framebuffer(self._fb_path)
                    self._own_framebuffer = True
            return self._framebuffer

    def _check_alive(self) -> None:
        display = self._display
        if display is not None and not display.is_alive():
            tail = "\n".join(display.stderr_text().strip().splitlines()[-5:])
            raise DisplayGoneError(
                f"the Xvfb of display {self.display_name} has exited"
                + (f" (it said: {tail})" if tail else "")
                + "; start a new Display and capture from that"
            )
        if self._pid is not None and not server.pid_alive(self._pid):
            raise DisplayGoneError(
                f"the Xvfb of display {self.display_name} (pid {self._pid}) has exited; "
                "`viewfinder display list` shows what runs, `viewfinder display start` "
                "starts another"
            )

    @contextlib.contextmanager
    def _x(self) -> Iterator[Xlib.display.Display]:
        try:
            yield self._connections.get()
        except CONNECTION_ERRORS as exc:
            self._connections.discard_current()  # the next capture reconnects
            raise DisplayGoneError(gone_message(self.display_name, exc)) from exc


def _no_display_reason() -> str:
    if shutil.which(server.XVFB_PROGRAM) is None:
        return (
            "DISPLAY is not set and Xvfb is not installed: install it with "
            "`apt-get install xvfb` or `make setup`, then `viewfinder display start` and "
            "set DISPLAY to the :N it prints"
        )
    return (
        "DISPLAY is not set: start a display with `viewfinder display start` and set "
        "DISPLAY to the :N it prints, or pass display=':N' or a Display"
    )
