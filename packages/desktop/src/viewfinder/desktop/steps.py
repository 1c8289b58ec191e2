"""The steps of a ComputerTool run: each action with the frame the screen showed before it.

Every step's event is kept for :meth:`StepLog.trajectory`; frames are not all kept in
memory, so a long run does not grow without bound: with a session folder they are
written in the recorder's format as they happen and read back from it when asked for,
and without one only the last ``frames_in_memory`` (32) steps keep theirs. The folder
is what  ``viewfinder record show``, ``viewfinder cache
build`` and :func:`viewfinder.recorder.load_session` read a run like a recording::

    session/
      metadata.json          screen, display, input source "computer-tool", times
      manifest.jsonl         one line per action (events in SCREEN coordinates), with
                             the action's name and API, a drag's path, a zoom's region
      screenshots/0.png ...  the pre-action frame of each line, at full resolution

Frames are encoded and written on a background thread, in order, so recording does not
slow the action down; :meth:`StepLog.trajectory` and :meth:`StepLog.close` wait for
them. Lines are written whole but not fsync-ed (a power cut may lose the last ones).
A write that fails stops the writing (:attr:`StepLog.error` says why); the frames are
then kept in memory like without a folder. At most :data:`MAX_PENDING` frames wait for
their encoding at a time: a run faster than the encoder waits for it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from viewfinder.core import (
    Event,
    Screenshot,
    ScreenSize,
    Trajectory,
    TrajectoryMetadata,
    TrajectoryStep,
    ViewfinderError,
)
from viewfinder.core.screenshot import utc_now

if TYPE_CHECKING:
    from PIL import Image

    from viewfinder.core.geometry import Region
    from viewfinder.desktop.actions import Action
    from viewfinder.recorder.folder import SessionFolder
    from viewfinder.recorder.manifest import ManifestWriter
    from viewfinder.recorder.metadata import SessionMetadata

log = logging.getLogger(__name__)
#: How the recorder's metadata names what produced the events.
INPUT_SOURCE = "computer-tool"
#: Without a session folder, the frames of this many of the last steps are kept.
FRAMES_IN_MEMORY = 32
#: Frames grabbed but not yet encoded, at most (each is a whole screen of raw pixels).
MAX_PENDING = 4


class StepLog:
    """Steps of one run on a ``screen`` (width, height) of X display ``display_name``.

    ``folder``: a new or empty folder to write the session into (None: memory only).
    Raises the recorder's :class:`~viewfinder.recorder.SessionExistsError` for a folder
    that holds a recording or other files, and
    :class:`~viewfinder.recorder.SessionWriteError` for one that cannot be written.
    ``frames_in_memory``: how many of the last steps keep their frame in memory when
    there is no folder (or writing to it failed).
    """

    def __init__(
        self,
        screen: tuple[int, int],
        display_name: str,
        folder: str | os.PathLike[str] | None,
        *,
        frames_in_memory: int = FRAMES_IN_MEMORY,
    ) -> None:
        if isinstance(frames_in_memory, bool) or not isinstance(frames_in_memory, int):
            raise TypeError(f"frames_in_memory must be an int, got {frames_in_memory!r}")
        self.frames_in_memory = max(0, frames_in_memory)
        self._pending: deque[Future[Screenshot]] = deque()
        self.screen = ScreenSize(width=screen[0], height=screen[1])
        self.display_name = display_name
        self.started_at = utc_now()
        self._steps: list[TrajectoryStep | Future[TrajectoryStep]] = []
        self._lock = threading.Lock()
        self._writer = ThreadPoolExecutor(
            1, thread_name_prefix="viewfinder-steps", initializer=_run_in_the_background
        )
        self._last_image: Image.Image | None = None
        self._last_frame: Future[Screenshot] | None = None
        self.error: BaseException | None = None
        self._folder: SessionFolder | None = None
        self._manifest: ManifestWriter | None = None
        self._metadata: SessionMetadata | None = None
        self._root: Path | None = None
        if folder is not None:
            self._open(Path(folder))

    @property
    def session_dir(self) -> Path | None:
        """The session folder the steps are written to, if any."""
        return self._root

    def __len__(self) -> int:
        return len(self._steps)

    def _open(self, root: Path) -> None:
        from viewfinder.recorder.folder import SessionFolder
        from viewfinder.recorder.manifest import ManifestWriter
        from viewfinder.recorder.metadata import RecordingRun, SessionMetadata, platform_facts

        folder = SessionFolder(root)
        folder.open()
        try:
            metadata = SessionMetadata(
                screen=self.screen,
                backend="xvfb",
                backend_options={"display": self.display_name},
                input_source=INPUT_SOURCE,
                interval_s=0.0,
                started_at=self.started_at,
                platform=platform_facts(self.display_name),
                runs=[
                    RecordingRun(
                        started_at=self.started_at, backend="xvfb", input_source=INPUT_SOURCE
                    )
                ],
            )
            metadata.save(folder.layout.metadata, fsync=False)
            self._manifest = ManifestWriter(folder.layout.manifest, fsync=False)
        except BaseException:
            folder.discard()
            folder.close()
            raise
        self._folder, self._metadata, self._root = folder, metadata, folder.root

    def add(
        self,
        event: Event,
        frame: Image.Image,
        captured_at: datetime,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Keep ``event`` (screen coordinates) with ``frame``, the screen just before it.

        The same image object as the previous step's frame is encoded once. Frames are
        encoded in the background, at the lowest priority; while :data:`MAX_PENDING` of
        them wait there (a loaded machine starves that thread), this one is encoded here
        instead: an action waits for its own frame's encoding, never for the queue's.
        """
        while self._pending and self._pending[0].done():
            self._pending.popleft()
        encoded: Future[Screenshot] | None = None
        if frame is not self._last_image or self._last_frame is None:
            if len(self._pending) >= MAX_PENDING:
                encoded = Future()
                encoded.set_result(_encode(frame, captured_at))
            else:
                encoded = self._writer.submit(_encode, frame, captured_at)
                self._pending.append(encoded)
        with self._lock:
            seq = len(self._steps)
            if self._folder is not None:
                event = event.model_copy(update={"screenshot": self._folder.layout.frame_ref(seq)})
            if encoded is None:
                assert self._last_frame is not None
                encoded = self._last_frame
            else:
                self._last_image, self._last_frame = frame, encoded
            self._steps.append(self._writer.submit(self._write, seq, event, encoded, extra))

    def _write(
        self, seq: int, event: Event, encoded: Future[Screenshot], extra: dict[str, Any] | None
    ) -> TrajectoryStep:
        frame = encoded.result()  # done: it was queued before this job
        on_disk = False
        if self._folder is not None and self._manifest is not None and self.error is None:
            from viewfinder.recorder.durable import write_atomic

            try:
                path = self._folder.layout.frame(seq)
                write_atomic(path, frame.data, mtime=frame.captured_at.timestamp())
                self._manifest.append(seq, event, extra)
                on_disk = True
            except ViewfinderError as exc:
                log.warning("stopped writing the steps to %s: %s", self._folder.root, exc)
                self.error = exc
        with self._lock:
            # Steps are written in order: the one leaving the window is done.
            old = seq - self.frames_in_memory
            if old >= 0:
                step = self._steps[old]
                if isinstance(step, Future):
                    step = step.result()
                if step.frame is not None:
                    self._steps[old] = step.model_copy(update={"frame": None})
        return TrajectoryStep(event=event, frame=None if on_disk else frame)

    def frames_held(self) -> int:
        """How many frames the log holds in memory now (encoded or waiting to be)."""
        with self._lock:
            held = list(self._steps)
        done = [
            step.result() if isinstance(step, Future) and step.done() else step for step in held
        ]
        return sum(isinstance(step, Future) or step.frame is not None for step in done)

    def steps(self) -> list[TrajectoryStep]:
        """Every step so far, in order (waits for frames still being encoded). Frames
        written to the session folder are read back from it; without a folder, steps
        older than the last ``frames_in_memory`` have none."""
        with self._lock:
            pending = list(self._steps)
        for step in pending:  # every write done, so the frames leaving the window are gone
            if isinstance(step, Future):
                step.result()
        with self._lock:
            held = list(self._steps)[: len(pending)]
        steps = [step.result() if isinstance(step, Future) else step for step in held]
        root = self._root
        if root is None:
            return steps
        from viewfinder.recorder.layout import SessionLayout

        layout = SessionLayout(root)
        loaded: list[TrajectoryStep] = []
        for seq, step in enumerate(steps):
            path = layout.frame(seq)
            if step.frame is None and path.is_file():
                step = step.model_copy(update={"frame": _read(path)})
            loaded.append(step)
        return loaded

    def trajectory(self, **metadata: Any) -> Trajectory:
        """The run as a core Trajectory: events in screen coordinates, each with its
        pre-action frame; ``metadata`` adds fields to its metadata."""
        fields: dict[str, Any] = {
            "source": "desktop",
            "created_at": self.started_at,
            "screen": self.screen,
            "display": self.display_name,
            **metadata,
        }
        if self.session_dir is not None:
            fields["session_dir"] = str(self.session_dir)
        return Trajectory(metadata=TrajectoryMetadata.model_validate(fields), steps=self.steps())

    def close(self) -> None:
        """Finish writing, mark the session stopped and release its folder (idempotent)."""
        steps = self.steps()
        self._writer.shutdown(wait=True)
        folder, metadata, manifest = self._folder, self._metadata, self._manifest
        self._folder = None
        if folder is None or metadata is None:
            return
        stopped = utc_now()
        metadata.stopped_at = stopped
        metadata.status = "failed" if self.error is not None else "stopped"
        metadata.error = str(self.error) if self.error is not None else None
        metadata.events = len(steps)
        metadata.runs[-1].stopped_at = stopped
        metadata.runs[-1].events = len(steps)
        try:
            metadata.save(folder.layout.metadata, fsync=True)
        except ViewfinderError as exc:
            log.warning("could not update %s: %s", folder.layout.metadata, exc)
        if manifest is not None:
            manifest.close()
        folder.close()


def step_extra(
    action: Action, path: list[tuple[int, int]] | None, region: Region | None = None
) -> dict[str, Any]:
    """What a manifest line keeps of ``action`` beside its event: its name and API, a
    drag's path, a zoom's region (screen pixels), the element ref it named."""
    extra: dict[str, Any] = {"action": action.name, "api": action.api}
    if path:
        extra["path"] = [list(point) for point in path]
    if region is not None:
        extra["region"] = [region.x, region.y, region.width, region.height]
    if action.element is not None:
        extra["element_ref"] = action.element
    return extra


def _encode(image: Image.Image, captured_at: datetime) -> Screenshot:
    return Screenshot.from_image(image, source="xvfb", format="png", captured_at=captured_at)


def _read(path: Path) -> Screenshot:
    from datetime import UTC

    shot = Screenshot.from_file(path, source="xvfb")
    at = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return shot.model_copy(update={"captured_at": at})


def _run_in_the_background() -> None:
    # The writer only keeps up with the actions; the next action's settle, grab and
    # scaling should have the CPU first. Linux gives each thread its own nice value,
    # and the threads the PNG encoder starts inherit it.
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
