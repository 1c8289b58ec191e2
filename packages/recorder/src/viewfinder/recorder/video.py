"""``viewfinder record --video``: the screen of a recording run as an MP4 beside its manifest.

While the recorder pairs actions with frames, ffmpeg (:class:`viewfinder.xvfb.video.ScreenVideo`)
records the whole X display into ``videos/N.mp4`` for run N of the session (a resumed
session has one video per run). As soon as ffmpeg grabbed its first frame, the run's
entry in ``metadata.json`` names the video, ``"finished": false``; when the run stops
it gets the rest::

    "runs": [{"started_at": ..., "first_seq": 0, "events": 7, ...,
              "video": {"file": "videos/1.mp4", "started_at": "2026-11-21T23:06:31.912044Z",
                        "finished": true, "duration_s": 6.2, "frames": 155, "width": 1280,
                        "height": 800, "fps": 25.0, "size_bytes": 48211}}]

The file is a fragmented MP4 (:mod:`viewfinder.xvfb.video`): a recorder killed at any
moment leaves it playable up to its last second, named in ``metadata.json`` with
``"finished": false``.

``started_at`` is the instant of the video's first frame, so an event at ``timestamp``
shows at ``timestamp - started_at`` into the video (``viewfinder view`` seeks there).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from viewfinder.recorder.errors import RecorderError
from viewfinder.recorder.layout import SessionLayout
from viewfinder.recorder.metadata import SessionMetadata
from viewfinder.xvfb.video import ScreenVideo, VideoError, VideoInfo, ffmpeg_binary


class SessionVideo:
    """The video of the current run of the session in ``layout``, of X display ``display``."""

    def __init__(self, layout: SessionLayout, display: str, *, fps: float = 25) -> None:
        ffmpeg_binary()  # say ffmpeg is missing before anything records
        self.layout = layout
        self.display = display
        self.fps = fps
        self._video: ScreenVideo | None = None

    @property
    def path(self) -> Path | None:
        return self._video.path if self._video is not None else None

    def start(self) -> Path:
        """Start recording into the next free ``videos/N.mp4`` (N: the run's number)."""
        runs = len(SessionMetadata.load(self.layout.metadata).runs)
        number = max(runs, 1)
        while (self.layout.videos / f"{number}.mp4").exists():
            number += 1
        self._video = ScreenVideo(self.display, self.layout.videos / f"{number}.mp4", fps=self.fps)
        try:
            self._video.start()
        except VideoError as exc:
            raise RecorderError(f"the video of {self.display} did not start: {exc}") from exc
        started = self._video.started_at
        self._note(
            {
                "finished": False,
                "started_at": started.isoformat().replace("+00:00", "Z") if started else None,
                "fps": self.fps,
            }
        )
        return self._video.path

    def stop(self) -> VideoInfo:
        """Finish the file and note it in the run's entry of ``metadata.json``."""
        assert self._video is not None, "start() first"
        try:
            info = self._video.stop()
        except VideoError as exc:
            raise RecorderError(f"the video of {self.display} did not finish: {exc}") from exc
        entry: dict[str, Any] = info.to_dict()
        del entry["path"], entry["region"]
        self._note({"finished": True, **entry})
        return info

    def _note(self, facts: dict[str, Any]) -> None:
        """Name the video (with ``facts``) in the current run's entry of ``metadata.json``."""
        assert self._video is not None
        metadata = SessionMetadata.load(self.layout.metadata)
        if metadata.runs:
            file = os.path.relpath(self._video.path, self.layout.root)
            metadata.runs[-1] = metadata.runs[-1].model_copy(
                update={"video": {"file": file, **facts}}
            )
            metadata.save(self.layout.metadata)

    def kill(self) -> None:
        if self._video is not None:
            self._video.kill()
