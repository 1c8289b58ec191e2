"""Video of an X display: ffmpeg's ``x11grab`` into an MP4 (H.264).

:class:`ScreenVideo` starts ``ffmpeg -f x11grab`` on a display (or a region of it),
returns from :meth:`~ScreenVideo.start` once ffmpeg has grabbed its first frame, and
from :meth:`~ScreenVideo.stop` once ffmpeg has finished the file (asked to quit with
SIGINT).

The MP4 is *fragmented*: an empty index at the front, then a fragment with its own
index at least every quarter second (a keyframe every second), each written through to
the file as it is made. A recording cut off at any moment, ffmpeg or its parent killed
with SIGKILL, the machine losing power, is a playable file up to its last fragment: at
most a second is lost. Browsers play and seek such files as they are.

x11grab stamps each frame with the wall clock; ffmpeg prints the first one
(``Input #0, x11grab ... start: 1795546778.047133``), so :attr:`VideoInfo.started_at`
is the instant of the video's first frame, to the microsecond. A position in the video
is then ``instant - started_at``: the viewer seeks to a step's time that way.

ffmpeg is Debian's (``apt-get install ffmpeg``, ``make setup``). It runs in a process
group of its own and receives SIGTERM (on which it also finishes the file) when the
thread that started it ends; start recordings from a long-lived thread.

When ffmpeg fails (a full disk, an unwritable folder), :class:`VideoError` carries
ffmpeg's own error lines (``No space left on device``), not its encoder statistics.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from viewfinder.core.errors import DependencyMissingError, ViewfinderError
from viewfinder.core.geometry import Region
from viewfinder.core.lifetime import popen_dying_with_parent

FFMPEG = "ffmpeg"
FFPROBE = "ffprobe"
INSTALL_HINT = "Install it with `apt-get install ffmpeg` (Debian/Ubuntu) or run `make setup`."
#: Frames per second when the caller does not say.
DEFAULT_FPS = 25
_START = re.compile(rb"Input #0, x11grab.*?start: (\d+\.\d+)", re.DOTALL)
_STDERR_KEEP = 64 * 1024
#: A fragment (and its index) at least this often, in microseconds: about what a kill loses.
FRAGMENT_US = 250_000
# ffmpeg's lines that say what went wrong, as opposed to its statistics and notes
_TROUBLE = re.compile(
    r"error|fail|no space|denied|invalid|cannot|could not|unable|not found|no such|refused",
    re.IGNORECASE,
)

# ffmpeg gets a parent-death signal tied to the thread that starts it: this one lives as
# long as the process does.
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ffmpeg-spawner")


class VideoError(ViewfinderError):
    """A recording could not start or did not end in a whole file."""


@dataclass(frozen=True)
class VideoInfo:
    """A finished recording: the file and what is in it."""

    path: Path
    started_at: datetime
    duration_s: float
    frames: int
    width: int
    height: int
    fps: float
    size_bytes: int
    region: Region | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (``path`` as text, ``started_at`` in ISO 8601, UTC)."""
        data = asdict(self)
        data["path"] = str(self.path)
        data["started_at"] = self.started_at.isoformat().replace("+00:00", "Z")
        data["region"] = (
            None
            if self.region is None
            else [self.region.x, self.region.y, self.region.width, self.region.height]
        )
        return data


def ffmpeg_binary() -> str:
    """The path of ffmpeg, or :class:`DependencyMissingError` saying how to get it."""
    found = shutil.which(FFMPEG)
    if found is None:
        raise DependencyMissingError(FFMPEG, INSTALL_HINT)
    return found


class ScreenVideo:
    """One recording of X display ``display`` (``":1"``) into ``path`` (an ``.mp4``).

    ``region`` limits it to part of the screen; ``fps`` is the frame rate;
    ``draw_mouse`` draws the pointer in. Use as a context manager, or call
    :meth:`start` and :meth:`stop`.
    """

    def __init__(
        self,
        display: str,
        path: str | os.PathLike[str],
        *,
        region: Region | None = None,
        fps: float = DEFAULT_FPS,
        draw_mouse: bool = True,
        crf: int = 23,
    ) -> None:
        if not 1 <= fps <= 60:
            raise ValueError(f"fps must be between 1 and 60, got {fps:g}")
        self.display = display
        self.path = Path(path)
        self.region = region
        self.fps = fps
        self.draw_mouse = draw_mouse
        self.crf = crf
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr = bytearray()
        self._frames = 0
        self._changed = threading.Condition()
        self._readers: list[threading.Thread] = []
        self.started_at: datetime | None = None
        self.info: VideoInfo | None = None

    @property
    def recording(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._process is not None and self.info is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def command(self) -> list[str]:
        """The ffmpeg command line."""
        source = self.display
        grab = ["-f", "x11grab", "-framerate", f"{self.fps:g}"]
        if not self.draw_mouse:
            grab += ["-draw_mouse", "0"]
        if self.region is not None:
            grab += ["-video_size", f"{self.region.width}x{self.region.height}"]
            source = f"{self.display}+{self.region.x},{self.region.y}"
        return [
            ffmpeg_binary(), "-hide_banner", "-nostdin", "-loglevel", "info", "-nostats",
            "-progress", "pipe:1", "-stats_period", "0.05",
            *grab, "-probesize", "32", "-analyzeduration", "0", "-i", source,
            # H.264 wants even sizes: a pixel of padding rather than a lost one
            "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
            "-c:v", "libx264", "-preset", "ultrafast", "-crf", str(self.crf),
            "-pix_fmt", "yuv420p",
            # a keyframe every second and a fragment every quarter second, each written
            # through at once: a kill at any moment leaves a playable file
            "-g", str(max(1, round(self.fps))), "-keyint_min", "1",
            "-movflags", "+frag_keyframe+empty_moov+default_base_moof",
            "-frag_duration", str(FRAGMENT_US), "-flush_packets", "1",
            "-f", "mp4", "-y", str(self.path),
        ]  # fmt: skip

    def start(self, timeout: float = 15.0) -> ScreenVideo:
        """Start recording; returns once ffmpeg grabbed its first frame.

        Raises :class:`DependencyMissingError` without ffmpeg and :class:`VideoError`
        (with what ffmpeg said) when it exits or does not start grabbing in time.
        """
        if self._process is not None:
            raise VideoError("this recording was started already; make a new ScreenVideo")
        command = self.command()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._process = _spawner.submit(
            popen_dying_with_parent,
            command,
            signal.SIGTERM,  # ffmpeg closes the file
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        ).result()
        for stream, reader in (
            (self._process.stdout, self._read_progress),
            (self._process.stderr, self._read_stderr),
        ):
            thread = threading.Thread(
                target=reader, args=(stream,), name="viewfinder-video-reader", daemon=True
            )
            thread.start()
            self._readers.append(thread)
        deadline = time.monotonic() + timeout
        with self._changed:
            # ffmpeg prints the first frame's time as soon as it has grabbed it, before
            # it sets up the encoder: returning then keeps the video's head short
            while self.started_at is None:
                remaining = deadline - time.monotonic()
                if self._process.poll() is not None or remaining <= 0:
                    break
                self._changed.wait(min(remaining, 0.1))
            started = self.started_at is not None
        if not started:
            exited = self._process.poll() is not None
            why = "exited" if exited else f"did not start in {timeout:g} s"
            self._kill()
            for thread in self._readers:  # what it said last says why
                thread.join(5)
            raise VideoError(f"ffmpeg {why} recording {self.display}{self._said()}")
        return self

    def stop(self, timeout: float = 30.0) -> VideoInfo:
        """Stop and finish the file; returns what it holds (idempotent).

        Raises :class:`VideoError` when ffmpeg fails to finish a readable file.
        """
        if self.info is not None:
            return self.info
        process = self._process
        if process is None:
            raise VideoError("this recording was never started")
        if process.poll() is None:
            # SIGINT ends ffmpeg's loop at the next frame, as cleanly as `q` on its
            # input, which it reads only every 100 ms
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._kill()
        for thread in self._readers:
            thread.join(5)
        if process.returncode not in (0, 255) or not self.path.is_file():
            raise VideoError(
                f"ffmpeg ended with status {process.returncode} without a whole {self.path}"
                f"{self._said()}"
            )
        self.info = probe(self.path, started_at=self.started_at, region=self.region)
        return self.info

    def kill(self) -> None:
        """End ffmpeg at once, without finishing the file (idempotent)."""
        self._kill()

    def _kill(self) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(5)

    def _read_progress(self, stream: Any) -> None:
        # `-progress` writes blocks of key=value lines, several a second
        for line in stream:
            key, _, value = line.strip().partition(b"=")
            if key == b"frame" and value.isdigit():
                with self._changed:
                    self._frames = int(value)
                    self._changed.notify_all()
        stream.close()

    def _read_stderr(self, stream: Any) -> None:
        while chunk := stream.read1(4096):
            with self._changed:
                if self.started_at is None and len(self._stderr) < _STDERR_KEEP:
                    self._stderr += chunk
                    found = _START.search(self._stderr)
                    if found is not None:
                        self.started_at = datetime.fromtimestamp(float(found.group(1)), UTC)
                        self._changed.notify_all()
                else:  # the end is what says why ffmpeg stopped: keep the latest
                    self._stderr += chunk
                    del self._stderr[: max(0, len(self._stderr) - _STDERR_KEEP)]
        stream.close()

    def _said(self) -> str:
        return said(self._stderr.decode("utf-8", "replace"))

    def __enter__(self) -> ScreenVideo:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        if self.info is None:
            try:
                self.stop()
            except VideoError:
                if exc_info[0] is None:
                    raise


def said(stderr: str) -> str:
    """What ffmpeg said that matters, for an error message: its error lines
    (``av_interleaved_write_frame(): No space left on device``) when it printed any,
    else its last lines; never the encoder's closing statistics."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    notes = [line for line in lines if not line.startswith("[libx264 @")]
    trouble = [line for line in notes if _TROUBLE.search(line)]
    chosen = _distinct(trouble)[-4:] if trouble else notes[-6:]
    return (": ffmpeg said:\n" + "\n".join(chosen)) if chosen else ""


def _distinct(lines: list[str]) -> list[str]:
    """``lines`` without repeats (ffmpeg says a failed write once per packet)."""
    return list(dict.fromkeys(lines))


def probe(
    path: str | os.PathLike[str],
    *,
    started_at: datetime | None = None,
    region: Region | None = None,
) -> VideoInfo:
    """What ffprobe says about the video at ``path`` (:class:`VideoError` if it cannot read it)."""
    found = shutil.which(FFPROBE)
    if found is None:
        raise DependencyMissingError(FFPROBE, INSTALL_HINT)
    result = subprocess.run(
        [found, "-v", "error", "-select_streams", "v:0", "-count_packets",
         "-show_entries", "format=duration:stream=width,height,r_frame_rate,nb_read_packets",
         "-of", "json", str(path)],
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    try:
        data = json.loads(result.stdout)
        stream = data["streams"][0]
        numerator, _, denominator = stream["r_frame_rate"].partition("/")
        fps = float(numerator) / float(denominator or 1)
        duration = float(data["format"]["duration"])
        frames = int(stream.get("nb_read_packets", 0))
        width, height = int(stream["width"]), int(stream["height"])
    except (ValueError, KeyError, IndexError, ZeroDivisionError) as exc:
        said = result.stderr.decode("utf-8", "replace").strip()[-500:]
        raise VideoError(f"{path} is not a readable video ({exc}): {said}") from None
    return VideoInfo(
        path=Path(path),
        started_at=started_at or datetime.fromtimestamp(os.stat(path).st_mtime - duration, UTC),
        duration_s=duration,
        frames=frames,
        width=width,
        height=height,
        fps=fps,
        size_bytes=os.stat(path).st_size,
        region=region,
    )
