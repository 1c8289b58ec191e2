"""The parent's side of ``start_recording()`` / ``stop_recording()`` (see worker/recording.py).

One :class:`StepVideos` per step: it starts ffmpeg (:class:`viewfinder.xvfb.video.ScreenVideo`)
on the session's display when the code asks, stops it when the code asks, and at the
end of the step stops whatever still runs, so no ffmpeg outlives the step that
started it (the caller calls :meth:`StepVideos.finish` on every way out of a step, an
error included). The files go to a folder of the environment's that the code cannot
reach.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from viewfinder.codeenv import frames
from viewfinder.codeenv.models import StoppedBy
from viewfinder.core.errors import ViewfinderError
from viewfinder.core.geometry import Region
from viewfinder.xvfb import Display
from viewfinder.xvfb.video import ScreenVideo, VideoInfo

log = logging.getLogger(__name__)


class StepVideos:
    """Recordings of one step on ``display``, into the folder ``folder()`` gives."""

    def __init__(
        self,
        display: Display | None,
        folder: Callable[[], Path] | None,
        step: int,
        *,
        prefix: str = "video",
        limit: int = 8,
    ) -> None:
        self.display = display
        self._folder = folder
        self.step = step
        self.prefix = prefix
        self.limit = limit
        self._numbers = itertools.count(1)
        self._running: dict[str, ScreenVideo] = {}
        #: Finished recordings, in the order they were stopped: (info, stopped_by).
        self.finished: list[tuple[VideoInfo, StoppedBy]] = []
        self.errors: list[str] = []

    def handle(self, frame: dict[str, Any]) -> dict[str, Any]:
        """Answer one ``video`` frame of the worker with the ``video_reply`` frame.

        The frame is checked whole first (:func:`viewfinder.codeenv.frames.video_request`):
        a malformed one raises :class:`~viewfinder.codeenv.frames.MalformedFrameError`
        and nothing is started for it.
        """
        request = frames.video_request(frame)
        reply: dict[str, Any] = {"type": "video_reply", "id": request["id"]}
        try:
            if request["op"] == "start":
                reply["recording"] = self._start(request)
            else:
                reply["video"] = self._stop(request["recording"])
        except (ViewfinderError, ValueError, OSError) as exc:
            return {**reply, "ok": False, "message": str(exc)}
        return {**reply, "ok": True}

    def finish(self, stopped_by: StoppedBy) -> None:
        """Stop every recording still running (end of the step, or the worker lost)."""
        for name in list(self._running):
            video = self._running.pop(name)
            try:
                self.finished.append((video.stop(), stopped_by))
            except ViewfinderError as exc:
                log.warning("recording %s did not finish: %s", name, exc)
                self.errors.append(f"recording {name}: {exc}")

    def _start(self, request: dict[str, Any]) -> str:
        if self.display is None or self._folder is None:
            raise ValueError("this environment has no display to record")
        if len(self.finished) + len(self._running) >= self.limit:
            raise ValueError(
                f"this step already made {self.limit} recordings, the limit per step; "
                "stop and reuse fewer, or split the work into more steps"
            )
        area: Region | None = request["region"]
        if area is not None:
            area.check_within(self.display.width, self.display.height)
        name = f"{self.step}-{next(self._numbers)}"
        path = self._folder() / f"{self.prefix}-step{self.step}-{name.split('-')[1]}.mp4"
        video = ScreenVideo(self.display.name, path, region=area, fps=request["fps"])
        video.start()
        self._running[name] = video
        return name

    def _stop(self, name: Any) -> dict[str, Any]:
        if name is None:
            if not self._running:
                raise ValueError("no recording is running; call start_recording() first")
            name = list(self._running)[-1]
        video = self._running.pop(str(name), None)
        if video is None:
            raise ValueError(f"no recording {name!r} is running in this step")
        info = video.stop()
        self.finished.append((info, "code"))
        return info.to_dict()
