"""The parent's checks of what a worker sends on its result pipe, before acting on it.

The worker runs the session's code, and that code can write to the result pipe
itself: a frame is whatever it chose to send. So each frame is validated as a whole
before anything is started or decoded for it: a capture's header must say the size
its PNG's own header says, within :data:`~viewfinder.core.imaging.MAX_DECODE_PIXELS`
(counted from the header, nothing decoded); a recording request must have every field
a recording needs, of the right type, before ffmpeg is started. A frame that fails
raises :class:`MalformedFrameError`: the step ends, the worker is stopped, and the
result says why.
"""

from __future__ import annotations

import math
from typing import Any

from viewfinder.codeenv.worker import protocol
from viewfinder.core import imaging
from viewfinder.core.errors import ScreenshotDecodeError, ViewfinderError
from viewfinder.core.geometry import Region
from viewfinder.core.screenshot import Screenshot

#: Frame rates a recording may ask for (the worker's ``start_recording`` allows these).
MIN_FPS, MAX_FPS = 1.0, 60.0


class MalformedFrameError(ViewfinderError):
    """A frame from the worker breaks the protocol; the worker that sent it is stopped."""


def _int(header: dict[str, Any], key: str, what: str, *, minimum: int = 0) -> int:
    value = header.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise MalformedFrameError(
            f"a {what} frame from the worker has {key}={value!r}, not an integer "
            f">= {minimum}; the worker was stopped"
        )
    return value


def _region(header: dict[str, Any], what: str) -> Region | None:
    region = header.get("region")
    if region is None:
        return None
    if (
        not isinstance(region, list)
        or len(region) != 4
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in region)
    ):
        raise MalformedFrameError(
            f"a {what} frame from the worker has region={region!r}, not four integers; "
            "the worker was stopped"
        )
    try:
        return Region(x=region[0], y=region[1], width=region[2], height=region[3])
    except ValueError as exc:
        raise MalformedFrameError(
            f"a {what} frame from the worker has a bad region ({exc}); the worker was stopped"
        ) from None


def capture(frame: protocol.Frame) -> dict[str, Any]:
    """What a ``capture`` frame carries (the fields of a
    :class:`~viewfinder.codeenv.worker_process.Capture`), checked whole before any decode."""
    header = frame.header
    width = _int(header, "width", "capture", minimum=1)
    height = _int(header, "height", "capture", minimum=1)
    step = _int(header, "step", "capture")
    index = _int(header, "index", "capture")
    region = _region(header, "capture")
    window = header.get("window")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int)):
        raise MalformedFrameError(
            f"a capture frame from the worker has window={window!r}, not an X window id; "
            "the worker was stopped"
        )
    if imaging.sniff_format(frame.payload) != "png":
        raise MalformedFrameError(
            "a capture frame from the worker does not hold a PNG; the worker was stopped"
        )
    try:
        imaging.check_header(frame.payload, width, height)
    except ScreenshotDecodeError as exc:
        raise MalformedFrameError(
            f"a capture frame from the worker was refused: {exc}; the worker was stopped"
        ) from None
    return dict(
        screenshot=Screenshot(
            data=frame.payload,
            format="png",
            width=width,
            height=height,
            source="attached" if header.get("attached") else "xvfb",
            region=region,
        ),
        step=step,
        index=index,
        legacy=bool(header.get("legacy")),
        window=window,
    )


def video_request(header: dict[str, Any]) -> dict[str, Any]:
    """A ``video`` frame's request with every field checked: ``op`` start (``fps``, a
    ``region`` or None) or stop (a ``recording`` name or None), and its ``id``."""
    _int(header, "id", "video")
    op = header.get("op")
    if op == "start":
        fps = header.get("fps")
        if (
            isinstance(fps, bool)
            or not isinstance(fps, int | float)
            or not math.isfinite(fps)
            or not MIN_FPS <= fps <= MAX_FPS
        ):
            raise MalformedFrameError(
                f"a video frame from the worker has fps={fps!r}, not a number from "
                f"{MIN_FPS:g} to {MAX_FPS:g}; the worker was stopped"
            )
        region = _region(header, "video")
        return {"op": op, "id": header["id"], "fps": float(fps), "region": region}
    if op == "stop":
        recording = header.get("recording")
        if recording is not None and not isinstance(recording, str):
            raise MalformedFrameError(
                f"a video frame from the worker has recording={recording!r}, not a name; "
                "the worker was stopped"
            )
        return {"op": op, "id": header["id"], "recording": recording}
    raise MalformedFrameError(
        f"a video frame from the worker has op={op!r}, not 'start' or 'stop'; "
        "the worker was stopped"
    )


def done(header: dict[str, Any]) -> dict[str, Any]:
    """A ``done`` frame's header, its exit code and markers checked."""
    code = header.get("exit_code")
    if isinstance(code, bool) or not isinstance(code, int):
        raise MalformedFrameError(
            f"a done frame from the worker has exit_code={code!r}, not an integer; "
            "the worker was stopped"
        )
    markers = header.get("markers", {})
    if not isinstance(markers, dict):
        raise MalformedFrameError(
            "a done frame from the worker has markers that are not an object; "
            "the worker was stopped"
        )
    legacy = header.get("legacy_error")
    if legacy is not None and not isinstance(legacy, str):
        raise MalformedFrameError(
            "a done frame from the worker has a legacy_error that is not text; "
            "the worker was stopped"
        )
    return header
