"""``capture_screenshot()``: the function the executed code calls to see its own screen.

It lets the toolkits draw (:func:`toolkits.pump`), reads the worker's display through
the same grab as the ``xvfb`` backend (:class:`viewfinder.xvfb.grab.ScreenGrab`:
MIT-SHM, one state of the screen per frame), encodes a PNG, streams it to the parent
at once (so a capture survives a step that later crashes or times out) and returns it
as base64.

The ``viewfinder_screenshot_captured`` hook is not called here: the parent publishes
each capture when it receives it, so observers run in the server (never inside the
sandbox, next to the code) and exactly once per capture.
"""

from __future__ import annotations

import base64
import select
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    #: Sends one capture to the parent: (header, png bytes).
    Sender = Callable[[dict[str, Any], bytes], None]

from viewfinder.codeenv.worker import toolkits


class ScreenConfig:
    """The worker's display as the parent described it (None fields: no display)."""

    def __init__(
        self,
        display: str | None,
        framebuffer: str | None,
        xvfb_pid: int | None,
        max_captures: int,
        xvfb_pidfd: int | None = None,
    ) -> None:
        self.display = display
        self.framebuffer = framebuffer
        self.xvfb_pid = xvfb_pid
        #: A pidfd of the X server (readable once it exited), when the parent passed one.
        self.xvfb_pidfd = xvfb_pidfd
        self.max_captures = max_captures


class Screen:
    """The worker's display, and the captures of the current step."""

    def __init__(self, config: ScreenConfig, send: Sender) -> None:
        self.config = config
        self._send = send
        self._lock = threading.Lock()
        self._screen: Any = None
        self._conn: Any = None
        self.step = 0
        self.count = 0

    def start_step(self, step: int) -> None:
        self.step = step
        self.count = 0

    # -- what the code calls ------------------------------------------------------------

    def capture_screenshot(self, region: Any = None, window: Any = None) -> str:
        """Capture this environment's screen (or a ``region`` / ``window`` of it) now.

        Returns the PNG as base64 text. ``region`` is ``(x, y, width, height)`` (a tuple,
        a dict with those keys, or a ``viewfinder.core.Region``); ``window`` is an X window
        id, a tkinter widget or a matplotlib figure. Pending drawing of tkinter,
        matplotlib and pygame is flushed first. Raises ``RuntimeError`` saying why when
        the screen cannot be captured (no display, a window that is gone, a region off
        the screen, too many captures in one step).
        """
        with self._lock:
            return self._capture(region, window, legacy=False)

    def attach_image(self, image: Any) -> str:
        """Hand back an image that is not a capture of this screen (a browser's screenshot,
        a rendered chart) with the step's screenshots, as if it had been captured.

        ``image`` is encoded image bytes (PNG, JPEG, WebP) or a PIL image; it is sent as
        PNG and counts toward the captures of the step. Returns the PNG as base64. An image
        of more than 40 megapixels raises ``ImageTooLargeError`` (nothing is decoded).
        """
        import io

        from PIL import Image, UnidentifiedImageError

        from viewfinder.core.imaging import check_pixels

        with self._lock:
            self._check_count("attach_image", "attach fewer images")
            try:
                if isinstance(image, bytes | bytearray | memoryview):
                    image = Image.open(io.BytesIO(bytes(image)))
                if not isinstance(image, Image.Image):
                    raise TypeError
                # the environment refuses more pixels than this; say so before decoding
                check_pixels(image.width, image.height)
                image.load()
            except (TypeError, OSError, UnidentifiedImageError):
                raise TypeError(
                    "attach_image(): pass encoded image bytes (PNG, JPEG, WebP) or a PIL "
                    f"image, got {type(image).__name__}"
                ) from None
            if image.mode not in ("RGB", "RGBA"):
                image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
            return self._send_png(image, region=None, window=None, legacy=False, attached=True)

    # -- the parent's after-execution capture ---------------------------------------------

    def capture_after_run(self) -> str | None:
        """The old after-execution capture: the topmost window the code left, else the screen."""
        if self.config.display is None:
            return None
        with self._lock:
            toolkits.pump()
            window = self._topmost_window()
            return self._capture(None, window, legacy=True, pumped=True)

    # -- internals ------------------------------------------------------------------------

    def _capture(self, region: Any, window: Any, *, legacy: bool, pumped: bool = False) -> str:
        area = _parse_region(region)
        window_id = _window_id(window)
        if self.config.display is None:
            raise RuntimeError(
                "capture_screenshot(): this environment runs without a display, so there "
                "is no screen to capture; create it with a display to capture"
            )
        if not legacy:
            self._check_count("capture_screenshot", "capture less often")
        self._check_display_alive()
        if not pumped:
            toolkits.pump()
        from viewfinder.core.errors import ViewfinderError

        try:
            if window_id is not None:
                from viewfinder.xvfb.windows import visible_region

                area = _intersect(visible_region(self._x(), window_id, self.config.display), area)
            image = self._grab(area)
        except ViewfinderError as exc:
            raise RuntimeError(f"capture_screenshot(): {exc}") from None
        self._check_display_alive()
        region = None if area is None else [area.x, area.y, area.width, area.height]
        return self._send_png(image, region=region, window=window_id, legacy=legacy)

    def _check_count(self, function: str, advice: str) -> None:
        if self.count >= self.config.max_captures:
            raise RuntimeError(
                f"{function}(): this step already made {self.count} captures, the limit per "
                f"step; {advice} or split the work into more steps"
            )

    def _send_png(self, image: Any, **fields: Any) -> str:
        """Encode ``image``, stream it to the parent as the step's next capture; base64."""
        from viewfinder.core.imaging import encode_png

        png = encode_png(image)
        self.count += 1
        header = {
            "type": "capture",
            "step": self.step,
            "index": self.count,
            "width": image.width,
            "height": image.height,
            **fields,
        }
        self._send(header, png)
        return base64.b64encode(png).decode("ascii")

    def _check_display_alive(self) -> None:
        pid = self.config.xvfb_pid
        if pid is None:
            return
        if self.config.xvfb_pidfd is not None:
            # readable once the X server exited, zombie or not; and visible to an
            # isolated worker, which cannot see the server in /proc
            poller = select.poll()
            poller.register(self.config.xvfb_pidfd, select.POLLIN)
            state = b"Z" if poller.poll(0) else b"R"
        else:
            # An X server that died is a zombie until its parent (not us) reaps it, and
            # signal 0 still reaches a zombie: read its state instead.
            try:
                with open(f"/proc/{pid}/stat", "rb") as stat:
                    state = stat.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                state = b"X"
        if state in (b"Z", b"X", b"x"):
            raise RuntimeError(
                f"capture_screenshot(): the display {self.config.display} is gone (its "
                "X server exited); nothing can be captured until the environment is reset"
            )

    def _grab(self, area: Any) -> Any:
        if self._screen is None:
            from viewfinder.xvfb.grab import ScreenGrab

            assert self.config.display is not None
            self._screen = ScreenGrab(self.config.display)
        return self._screen.image(area)

    def _x(self) -> Any:
        if self._conn is None:
            from viewfinder.xvfb.connection import open_display

            assert self.config.display is not None
            self._conn = open_display(self.config.display)
        return self._conn

    def _topmost_window(self) -> int | None:
        from viewfinder.xvfb.windows import placement, top_level_windows

        conn = self._x()
        for window in reversed(top_level_windows(conn)):  # stacking order: topmost last
            try:
                place = placement(conn, window, self.config.display or "")
            except Exception:  # vanished between the two requests
                continue
            if place.map_state == "viewable" and place.width > 1 and place.height > 1:
                return window
        return None


def preload() -> None:
    """Import what a capture needs, so the first capture of a step does not pay for it."""
    import viewfinder.core.imaging
    import viewfinder.xvfb.grab
    import viewfinder.xvfb.windows

    viewfinder.xvfb.grab.preload()


def _parse_region(region: Any) -> Any:
    if region is None:
        return None
    from viewfinder.core.geometry import Region

    if isinstance(region, Region):
        return region
    try:
        if isinstance(region, dict):
            return Region(**region)
        x, y, width, height = region
        return Region(x=int(x), y=int(y), width=int(width), height=int(height))
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"capture_screenshot(region=...): expected (x, y, width, height) with x, y >= 0 "
            f"and a positive size, got {region!r}"
        ) from exc


def _window_id(window: Any) -> int | None:
    if window is None:
        return None
    if isinstance(window, bool):
        raise TypeError("capture_screenshot(window=...): expected a window, got a bool")
    if isinstance(window, int):
        if not 0 < window < 2**32:
            raise RuntimeError(
                f"capture_screenshot(): no such window {window}; X window ids are positive "
                "32-bit numbers (list them with `xwininfo -root -tree`)"
            )
        return window
    if hasattr(window, "winfo_id"):  # a tkinter widget
        try:
            return int(window.winfo_id())
        except Exception as exc:  # tkinter.TclError: the widget was destroyed
            raise RuntimeError(
                f"capture_screenshot(): the tkinter widget {window} is gone ({exc}); "
                "capture it while it exists"
            ) from None
    if hasattr(window, "canvas") and hasattr(window, "savefig"):  # a matplotlib figure
        found = toolkits.figure_window(window)
        if found is None:
            raise RuntimeError(
                "capture_screenshot(window=figure): the figure is not shown; call plt.show() first"
            )
        return found
    raise TypeError(
        "capture_screenshot(window=...): expected an X window id (int), a tkinter widget "
        f"or a matplotlib figure, got {type(window).__name__}"
    )


def _intersect(window_area: Any, region: Any) -> Any:
    """A region given with a window is relative to the window's top-left corner."""
    if region is None:
        return window_area
    from viewfinder.core.geometry import Region

    if region.right > window_area.width or region.bottom > window_area.height:
        raise RuntimeError(
            f"capture_screenshot(): region {region} reaches past the "
            f"{window_area.width}x{window_area.height} window"
        )
    return Region(
        x=window_area.x + region.x,
        y=window_area.y + region.y,
        width=region.width,
        height=region.height,
    )
