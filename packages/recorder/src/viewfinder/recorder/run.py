"""One recording run: what is opened at start() and closed at stop()."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from viewfinder.core import CaptureBackend, Event, ScreenSize, get_backend
from viewfinder.core.screenshot import utc_now
from viewfinder.recorder.errors import RecorderError, SessionFormatError
from viewfinder.recorder.folder import SessionFolder
from viewfinder.recorder.frames import FrameStore
from viewfinder.recorder.manifest import ManifestWriter
from viewfinder.recorder.metadata import RecordingRun, SessionMetadata, platform_facts
from viewfinder.recorder.pairing import Pairing, PairingSettings
from viewfinder.recorder.pointer_elements import PointerElements
from viewfinder.recorder.pointer_windows import PointerWindows

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordingSummary:
    """What one start-to-stop run recorded."""

    session_dir: Path
    events: int
    total_events: int
    counts: dict[str, int]
    started_at: datetime
    stopped_at: datetime
    error: str | None = None
    resumed: bool = False

    def __str__(self) -> str:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.counts.items())) or "none"
        seconds = (self.stopped_at - self.started_at).total_seconds()
        text = (
            f"recorded {self.events} events ({kinds}) in {seconds:.1f} s into "
            f"{self.session_dir} ({self.total_events} in the session)"
        )
        return text + (f"; stopped on error: {self.error}" if self.error else "")


@dataclass(frozen=True)
class RunOptions:
    """How to open a run (the Recorder's constructor arguments)."""

    session_dir: Path
    backend: CaptureBackend | str | None
    backend_options: Mapping[str, Any]
    resume: bool
    interval: float
    input_source: str
    settings: PairingSettings
    on_event: Callable[[int, Event], Any] | None
    on_failure: Callable[[BaseException], None]
    #: look up the element under pointer actions (when the display has an accessibility bus)
    elements: bool = True


@dataclass
class ActiveRun:
    """The resources of a run between start() and stop()."""

    folder: SessionFolder
    backend: CaptureBackend
    owns_backend: bool
    frames: FrameStore
    manifest: ManifestWriter
    pairing: Pairing
    metadata: SessionMetadata
    first_seq: int
    started_at: datetime
    elements: PointerElements | None = None
    #: names the application in front at each pointer action (an X display's)
    windows: PointerWindows | None = None
    #: the X display's damage watch (None for other backends), whose clock maps the
    #: server's timestamps for every part of the run
    damage: Any = None


def open_run(options: RunOptions) -> ActiveRun:
    """Lock the folder, open the backend, capture the first frame, write metadata.

    On any failure everything opened so far is closed again and the error raised.
    """
    # The backend first: an unknown backend or a dead display must not touch the folder.
    owns_backend = not isinstance(options.backend, CaptureBackend)
    if isinstance(options.backend, CaptureBackend):
        backend = options.backend
    else:
        backend = get_backend(options.backend, **options.backend_options)
    try:
        # Backends connect lazily: ask the screen now, before the folder is made or locked.
        width, height = backend.screen_size()
    except BaseException:
        if owns_backend:
            backend.close()
        raise
    folder = SessionFolder(options.session_dir, resume=options.resume)
    frames: FrameStore | None = None
    elements: PointerElements | None = None
    windows: PointerWindows | None = None
    try:
        folder.open()
        previous = folder.metadata
        if previous is not None and (previous.screen.width, previous.screen.height) != (
            width,
            height,
        ):
            raise RecorderError(
                f"cannot resume {folder.root}: it was recorded on a "
                f"{previous.screen.width}x{previous.screen.height} screen, this one is "
                f"{width}x{height}; record into a new folder"
            )
        layout = folder.layout
        frames = FrameStore(
            backend,
            layout.current,
            options.interval,
            on_failure=options.on_failure,
            context={"recorder": str(layout.root)},
        )
        frames.start()
        elements, why = _pointer_elements(options, backend)
        display = getattr(backend, "display_name", None)
        if options.elements and isinstance(display, str) and display:
            windows = PointerWindows.for_display(display)
        watch = _follow_damage(backend, frames, elements)
        if elements is not None and watch is None:
            elements.close()
            elements, why = None, "the display reports no repaints (no DAMAGE extension)"
        elif elements is not None:
            elements.follow(watch)  # the first read, before the first press can come
        started = utc_now()
        first_seq = folder.manifest.next_seq
        metadata = _metadata(options, backend, previous, ScreenSize(width=width, height=height))
        metadata.runs.append(
            RecordingRun(
                started_at=started,
                first_seq=first_seq,
                backend=backend.name,
                input_source=options.input_source,
                elements={"source": elements.source.name}
                if elements
                else {"source": None, "reason": why},
            )
        )
        metadata.save(layout.metadata, fsync=options.settings.fsync)
        manifest = ManifestWriter(layout.manifest, fsync=options.settings.fsync)
    except BaseException:
        if frames is not None:
            frames.stop()
        if elements is not None:
            elements.close()
        if windows is not None:
            windows.close()
        if owns_backend:
            backend.close()
        folder.close()
        raise
    pairing = Pairing(
        frames,
        manifest,
        layout,
        next_seq=first_seq,
        settings=options.settings,
        on_event=options.on_event,
        elements=elements.before if elements is not None else None,
        windows=windows.at if windows is not None else None,
    )
    return ActiveRun(
        folder,
        backend,
        owns_backend,
        frames,
        manifest,
        pairing,
        metadata,
        first_seq,
        started,
        elements,
        windows,
        watch,
    )


def close_run(run: ActiveRun, error: BaseException | None) -> RecordingSummary:
    """Write the final metadata and release everything; returns the run's summary."""
    stopped = utc_now()
    events = run.pairing.next_seq - run.first_seq
    metadata = run.metadata
    metadata.stopped_at = stopped
    metadata.status = "failed" if error is not None else "stopped"
    metadata.error = str(error) if error is not None else None
    metadata.events = run.pairing.next_seq - (metadata.runs[0].first_seq if metadata.runs else 0)
    current = metadata.runs[-1]
    current.stopped_at, current.events = stopped, events
    current.error = metadata.error
    if run.elements is not None:
        run.elements.close()
        current.elements = run.elements.summary()
    if run.windows is not None:
        run.windows.close()
    _keep_notes_on_disk(run.folder.layout.metadata, metadata)
    try:
        metadata.save(run.folder.layout.metadata, fsync=run.pairing.settings.fsync)
    except RecorderError as exc:  # a full disk: the manifest and frames are still whole
        log.warning("could not update %s: %s", run.folder.layout.metadata, exc)
        error = error or exc
    run.manifest.close()
    if run.owns_backend:
        with contextlib.suppress(Exception):  # a display that died cannot be closed cleanly
            run.backend.close()
    run.folder.close()
    return RecordingSummary(
        session_dir=run.folder.root,
        events=events,
        total_events=run.pairing.next_seq,
        counts=dict(run.pairing.counts),
        started_at=run.started_at,
        stopped_at=stopped,
        error=str(error) if error is not None else None,
        resumed=run.first_seq > 0,
    )


def _keep_notes_on_disk(path: Path, metadata: SessionMetadata) -> None:
    """Keep what others added to the current run's entry while it lasted (the video
    ``viewfinder record --video`` names there as it starts): the run's metadata in
    memory does not have it, and saving would drop it."""
    try:
        on_disk = SessionMetadata.load(path)
    except SessionFormatError:
        return
    if len(on_disk.runs) != len(metadata.runs) or not metadata.runs:
        return
    current = metadata.runs[-1]
    for key, value in (on_disk.runs[-1].model_extra or {}).items():
        if key not in (current.model_extra or {}):
            setattr(current, key, value)


def _pointer_elements(
    options: RunOptions, backend: CaptureBackend
) -> tuple[PointerElements | None, str]:
    """The element lookups of this run, or None and why there are none."""
    if not options.elements:
        return None, "turned off"
    display = getattr(backend, "display_name", None)
    if not isinstance(display, str) or not display:
        return None, f"the {backend.name} backend is not an X display"
    return PointerElements.for_display(display)


def _metadata(
    options: RunOptions,
    backend: CaptureBackend,
    previous: SessionMetadata | None,
    screen: ScreenSize,
) -> SessionMetadata:
    display = getattr(backend, "display_name", None)
    if previous is not None:
        previous.status, previous.error, previous.stopped_at = "recording", None, None
        return previous
    return SessionMetadata(
        screen=screen,
        backend=backend.name,
        backend_options=_plain(options.backend_options),
        input_source=options.input_source,
        interval_s=options.interval,
        started_at=utc_now(),
        platform=platform_facts(display if isinstance(display, str) else None),
    )


def _plain(options: Mapping[str, Any]) -> dict[str, Any]:
    # Only what JSON can hold; a Display object is recorded by its name.
    plain: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, str | int | float | bool) or value is None:
            plain[key] = value
        else:
            plain[key] = getattr(value, "name", None) or repr(value)
    return plain


def _follow_damage(
    backend: CaptureBackend, frames: FrameStore, elements: PointerElements | None
) -> Any:
    """The started damage watch of an X display, whose repaints the frames and the
    elements follow; None for any other backend (polled every interval)."""
    display = getattr(backend, "display_name", None)
    if not isinstance(display, str) or not display:
        return None
    from viewfinder.recorder.damage import DamageWatch

    def repainted(at: float) -> None:
        frames.damaged(at)
        if elements is not None:
            elements.changed(at)

    watch = DamageWatch(display, repainted)
    if not watch.start():
        return None
    frames.follow_damage(watch)
    return watch
