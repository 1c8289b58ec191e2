"""``start_recording()`` / ``stop_recording()``: video of the worker's screen.

The code calls them inside a step; the video is made by the *parent*
(:mod:`viewfinder.codeenv.videos`, ffmpeg's x11grab), outside the sandbox: the
worker's limits (memory, processes, file size) and its timeout kill do not reach
ffmpeg, a step that crashes still leaves a whole MP4, and the file lands in a folder
of the environment's that the code cannot touch. Each call is a ``video`` frame to
the parent and a ``video_reply`` frame back on the command pipe (nothing else comes
on that pipe while a step runs).

Imports only the standard library and the worker's own modules: the worker imports
this at every start.
"""

from __future__ import annotations

import itertools
import select
import threading
from typing import TYPE_CHECKING

from viewfinder.codeenv.worker import protocol

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from viewfinder.codeenv.worker.screen import Screen

#: How long a call waits for the parent's answer (ffmpeg's start or the file's end).
REPLY_TIMEOUT_S = 60.0


class Recordings:
    """The in-code functions, bound to the worker's pipes and screen."""

    def __init__(
        self, command_fd: int, send: Callable[[dict[str, Any], bytes], None], screen: Screen
    ) -> None:
        self._command_fd = command_fd
        self._send = send
        self._screen = screen
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.step = 0

    def start_recording(self, region: Any = None, window: Any = None, fps: float = 25) -> str:
        """Start recording this environment's screen (or a ``region`` / ``window`` of it)
        to an MP4 video (H.264). Returns the recording's id, for ``stop_recording()``.

        ``region`` is ``(x, y, width, height)`` and ``window`` a tkinter widget, a
        matplotlib figure or an X window id, as for ``capture_screenshot()``; ``fps`` is
        frames per second (1 to 60). Returns once the first frame is recorded. The
        video comes back in the step's observation (``videos``); one still recording
        when the step ends is stopped then. Raises ``RuntimeError`` saying why when it
        cannot record (no display, too many recordings in one step).
        """
        from viewfinder.codeenv.worker.screen import _parse_region, _window_id

        area = _parse_region(region)
        window_id = _window_id(window)
        if self._screen.config.display is None:
            raise RuntimeError(
                "start_recording(): this environment runs without a display, so there is "
                "no screen to record; create it with a display to record"
            )
        if window_id is not None:
            area = self._window_area(window_id, area)
        if isinstance(fps, bool) or not isinstance(fps, int | float) or not 1 <= fps <= 60:
            raise ValueError(f"start_recording(fps=...): expected 1 to 60, got {fps!r}")
        reply = self._ask(
            {
                "op": "start",
                "region": None if area is None else [area.x, area.y, area.width, area.height],
                "fps": float(fps),
            },
            "start_recording()",
        )
        return str(reply["recording"])

    def stop_recording(self, recording: str | None = None) -> dict[str, Any]:
        """Stop a recording (the latest one still running when none is named) and finish
        its file. Returns what it holds: ``path`` (on the machine running the
        environment, outside this sandbox), ``duration_s``, ``frames``, ``width``,
        ``height``, ``fps``, ``size_bytes``, ``started_at``. The video itself comes back
        in the step's observation (``videos``).
        """
        reply = self._ask({"op": "stop", "recording": recording}, "stop_recording()")
        video = reply["video"]
        assert isinstance(video, dict)
        return video

    def _window_area(self, window_id: int, area: Any) -> Any:
        from viewfinder.codeenv.worker.screen import _intersect
        from viewfinder.core.errors import ViewfinderError
        from viewfinder.xvfb.windows import visible_region

        display = self._screen.config.display or ""
        try:
            return _intersect(visible_region(self._screen._x(), window_id, display), area)
        except ViewfinderError as exc:
            raise RuntimeError(f"start_recording(): {exc}") from None

    def _ask(self, request: dict[str, Any], what: str) -> dict[str, Any]:
        with self._lock:
            number = next(self._ids)
            self._send({"type": "video", "id": number, "step": self.step, **request}, b"")
            poller = select.poll()
            poller.register(self._command_fd, select.POLLIN)
            if not poller.poll(REPLY_TIMEOUT_S * 1000):
                raise RuntimeError(f"{what}: the environment did not answer in time")
            frame = protocol.read_frame(self._command_fd)
        if frame is None or frame.kind != "video_reply" or frame.header.get("id") != number:
            raise RuntimeError(f"{what}: the environment answered out of turn")
        if not frame.header.get("ok"):
            raise RuntimeError(f"{what}: {frame.header.get('message', 'failed')}")
        return frame.header
