"""The ``xvfb`` capture backend: frames of any local X display through MIT-SHM."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import Xlib.display
from PIL import Image

from viewfinder.core.backend import Availability, CaptureBackend
from viewfinder.core.errors import BackendUnavailableError, DisplayGoneError
from viewfinder.core.event import Event
from viewfinder.core.geometry import Region
from viewfinder.core.imaging import StillFrames, encode_raw
from viewfinder.core.screenshot import Screenshot
from viewfinder.xvfb import registry, server, windows
from viewfinder.xvfb.connection import CONNECTION_ERRORS, ThreadConnections, gone_message
from viewfinder.xvfb.display import Display, running_displays
from viewfinder.xvfb.grab import PATH_NAMES, GrabPath, ScreenGrab
from viewfinder.xvfb.input import XInput


class XvfbBackend(CaptureBackend):
    """Capture (and act on) an X display: MIT-SHM grabs on any local display.

    ``display`` is a :class:`~viewfinder.xvfb.display.Display`, a display name such as
    ``":99"``, or None for ``$DISPLAY``. Any X server works, whoever started it: the
    server copies each frame into a shared-memory segment reused across captures
    (``XShmGetImage``), or sends it in a GetImage reply where it refuses shared memory
    (:attr:`grab_path` says which). A frame is always one state of the screen.

    When the pixels of a region did not change since its last capture in the same
    format, the previous encoded bytes come back without encoding again
    (``still_frames=False`` encodes every frame). Safe to use from several threads.
    """

    name = "xvfb"
    priority = 100
    supports_act = True

    def __init__(self, display: Display | str | None = None, *, still_frames: bool = True) -> None:
        self._display: Display | None = None
        self._pid: int | None = None
        if isinstance(display, Display):
            self._display = display
            display_name = display.name
        else:
            display_name = display or os.environ.get("DISPLAY") or ""
            if not display_name:
                raise BackendUnavailableError(self.name, _no_display_reason())
            self._find_owner(display_name)
        self.display_name = display_name
        self._connections = ThreadConnections(display_name)
        self._lock = threading.Lock()
        self._screen: ScreenGrab | None = None
        self._still = StillFrames() if still_frames else None
        self._input: XInput | None = None

    def _find_owner(self, display_name: str) -> None:
        # A Display of this process, or one from `viewfinder display start`: we know its
        # process, so a capture can tell a dead server from a slow one.
        for candidate in running_displays():
            if candidate.name == display_name:
                self._display = candidate
                return
        record = registry.find_display(display_name)
        if record is not None and record.is_alive():
            self._pid = record.pid

    @classmethod
    def availability(cls, display: Display | str | None = None, **_: Any) -> Availability:
        """Whether ``display`` (default ``$DISPLAY``) can be captured, and how; the fix when not."""
        if isinstance(display, Display):
            if not display.is_alive():
                return Availability.no(f"{display!r} is not running; start() it first")
            name = display.name
        else:
            name = display or os.environ.get("DISPLAY") or ""
            if not name:
                return Availability.no(_no_display_reason())
        try:
            with ScreenGrab(name) as screen:
                screen.raw(Region(x=0, y=0, width=1, height=1))  # settles which path works
                how = PATH_NAMES[screen.path]
                if screen.fallback_reason:
                    how += f": {screen.fallback_reason}"
        except DisplayGoneError as exc:
            return Availability.no(str(exc))
        return Availability.yes(f"DISPLAY={name}, grab: {how}")

    # -- capture -----------------------------------------------------------------------

    @property
    def grab_path(self) -> GrabPath:
        """``"shm"`` (shared memory) or ``"getimage"``: how frames are read from the server."""
        return self._get_screen().path

    def _capture(
        self, *, region: Region | None, window: int | None, format: str, quality: int | None
    ) -> Screenshot:
        self._check_alive()
        area = region
        if window is not None:
            with self._x() as conn:
                area = windows.visible_region(conn, window, self.display_name)
        pixels, width, height = self._get_screen().raw(area)
        # The process may have died while we read: its last frame is not the screen.
        self._check_alive()
        if self._still is not None:
            data, _ = self._still.encode_raw(pixels, width, height, format, quality, key=area)
        else:
            data = encode_raw(pixels, width, height, format, quality=quality)
        return Screenshot(
            data=data,
            format=format,  # type: ignore[arg-type]  # normalised by capture()
            width=width,
            height=height,
            source=self.name,
            region=area,
        )

    def _context(self, extra: Mapping[str, Any] | None) -> dict[str, Any]:
        return {**super()._context(extra), "grab": self.grab_path}

    def grab(self, region: Region | None = None) -> Image.Image:
        """The screen (or ``region``) as a PIL image, without encoding it."""
        self._check_alive()
        return self._get_screen().image(region)

    def screen_size(self) -> tuple[int, int]:
        """Width and height of the display's screen."""
        self._check_alive()
        return self._get_screen().size()

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

    def wait_to_act(self, event: Event) -> None:
        """Wait until ``event``'s first press would not join a press just made at the
        same place into a double-click (:meth:`XInput.wait_apart`). A display gone
        shows in what the caller does next (its capture, the action)."""
        try:
            self._check_alive()
        except DisplayGoneError:
            return
        self.input.wait_apart(event)

    def wait_handled(self, event: Event, timeout: float) -> bool | None:
        """Wait until the app ``event`` went to has handled it: a ping queued behind it
        to the app under the pointer (a pointer event) or with the focus, answered once
        its event loop got past the input (:meth:`XInput.ask_handled`). None when no app
        can be asked (the bare root, no focus, an app that does not answer pings)."""
        self._check_alive()
        check = self.input.ask_handled(pointer=event.is_pointer)
        return None if check is None else check.wait(timeout)

    # -- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        """Close this backend's X connections and maps (the display keeps running)."""
        self._connections.close()
        with self._lock:
            if self._screen is not None:
                self._screen.close()
                self._screen = None
            if self._still is not None:
                self._still.clear()
            if self._input is not None:
                self._input.close()
                self._input = None

    def __repr__(self) -> str:
        return f"<XvfbBackend {self.display_name}>"

    # -- internals ------------------------------------------------------------------------

    def _get_screen(self) -> ScreenGrab:
        with self._lock:
            if self._screen is None:
                self._screen = ScreenGrab(self.display_name)
            return self._screen

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
