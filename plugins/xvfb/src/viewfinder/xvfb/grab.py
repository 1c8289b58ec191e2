"""Reading an X display's pixels: MIT-SHM where the server allows it, GetImage elsewhere.

Every capture of an X screen in viewfinder goes through :class:`ScreenGrab` (the
``xvfb`` backend, the code env's in-code ``capture_screenshot()``), so a faster or
safer path lands once for all of them.

On a local display the server copies the pixels into a shared-memory segment that is
made once and reused (``XShmGetImage``, through python-mss's XCB implementation); only
the request and a short reply cross the socket. Where the server refuses shared memory
(a display reached over TCP, a server without the MIT-SHM extension, another IPC
namespace) the pixels come in the reply of a plain ``GetImage`` instead. :attr:`path`
says which one is in use.

Both are X requests, and an X server handles one request at a time and draws nothing
while it does: a frame is always one state of the screen, never half of one repaint and
half of the next (reading Xvfb's ``-fbdir`` framebuffer file while the server draws
into it gave such torn frames).
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from PIL import Image

from viewfinder.core.errors import DisplayGoneError
from viewfinder.core.geometry import Region
from viewfinder.core.imaging import image_from_raw
from viewfinder.xvfb.connection import gone_message

GrabPath = Literal["shm", "getimage"]

#: What :attr:`ScreenGrab.path` means, for people reading ``viewfinder backends``.
PATH_NAMES: dict[str, str] = {
    "shm": "MIT-SHM (XShmGetImage into a reused shared-memory segment)",
    "getimage": "X GetImage (the server refused shared memory)",
}


def preload() -> None:
    """Import the XCB bindings now, so that the first grab does not pay for them."""
    import mss.linux.xshmgetimage  # noqa: F401


class ScreenGrab:
    """Frames of one X display as raw BGRX rows or PIL images.

    Opens its X connection (and the shared-memory segment) on creation; raises
    :class:`~viewfinder.core.DisplayGoneError` when the display does not answer.
    Safe to use from several threads (grabs take turns on the one connection).
    """

    def __init__(self, display_name: str) -> None:
        import mss  # the XCB bindings load only when a display is grabbed
        from mss.exception import ScreenShotError

        from viewfinder.core._allocator import keep_frame_buffers

        keep_frame_buffers()  # every grab allocates a frame: reuse, do not re-fault

        self.display_name = display_name
        self._errors: tuple[type[BaseException], ...] = (ScreenShotError, OSError)
        self._lock = threading.Lock()
        try:
            self._mss: Any = mss.MSS(display=display_name, backend="xshmgetimage")
            root = self._mss.monitors[0]
        except self._errors as exc:
            raise DisplayGoneError(gone_message(display_name, exc)) from exc
        self.width: int = root["width"]
        self.height: int = root["height"]
        self._closed = False

    @property
    def path(self) -> GrabPath:
        """``"shm"`` while shared memory works on this connection, else ``"getimage"``."""
        status = getattr(getattr(self._mss, "_impl", None), "shm_status", None)
        return "getimage" if status is None or status.name == "UNAVAILABLE" else "shm"

    @property
    def fallback_reason(self) -> str | None:
        """Why the server refused shared memory, when it did."""
        if self.path == "shm":
            return None
        notes = [note for note in self._mss.performance_status if "working" not in note]
        return notes[0].splitlines()[0] if notes else "MIT-SHM is not available"

    def size(self) -> tuple[int, int]:
        """Width and height of the screen."""
        return (self.width, self.height)

    def raw(self, region: Region | None = None) -> tuple[bytearray, int, int]:
        """The screen (or ``region``, which must lie on it) as tightly packed BGRX rows.

        Returns ``(pixels, width, height)``; the buffer is the caller's to keep.
        """
        if region is None:
            region = Region(x=0, y=0, width=self.width, height=self.height)
        region.check_within(self.width, self.height)
        box = {"left": region.x, "top": region.y, "width": region.width, "height": region.height}
        with self._lock:
            if self._closed:
                raise DisplayGoneError(f"the grab of display {self.display_name} was closed")
            try:
                shot = self._mss.grab(box)
            except self._errors as exc:
                raise DisplayGoneError(gone_message(self.display_name, exc)) from exc
        return shot.raw, region.width, region.height

    def image(self, region: Region | None = None) -> Image.Image:
        """The screen (or ``region``) as an RGB PIL image."""
        pixels, width, height = self.raw(region)
        return image_from_raw(pixels, width, height)

    def close(self) -> None:
        """Close the connection and free the shared-memory segment (idempotent)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._mss.close()

    def __enter__(self) -> ScreenGrab:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ScreenGrab {self.display_name} {self.width}x{self.height} via {self.path}>"
