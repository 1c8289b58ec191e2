"""The code environment: OpenEnv's ``reset`` / ``step`` / ``state`` over a sandboxed worker."""

from __future__ import annotations

import base64
import shutil
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

from viewfinder.codeenv.config import CodeEnvConfig, MiB
from viewfinder.codeenv.displays import DisplaySource, FreshDisplays
from viewfinder.codeenv.errors import EnvironmentClosedError
from viewfinder.codeenv.font_cache import shared_font_cache
from viewfinder.codeenv.models import CodeAction, CodeObservation, CodeState, Video
from viewfinder.codeenv.sandbox_users import SandboxUsers
from viewfinder.codeenv.session_space import SessionSpace
from viewfinder.codeenv.worker_process import Capture, StepRun, WorkerProcess
from viewfinder.core.plugins import publish_screenshot
from viewfinder.xvfb import Display

#: Said in the metadata of a step that used ``CodeAction.capture_screenshot=True``.
LEGACY_CAPTURE_NOTE = (
    "CodeAction.capture_screenshot=True is deprecated: it captures after the code ran, "
    "when its windows may be gone. Call capture_screenshot() inside the code, at the "
    "moment to capture (see docs/codeenv.md, 'Migrating from the after-execution flag')."
)


class CodeEnvironment:
    """Runs Python in a sandboxed worker on a virtual display of its own.

    >>> with CodeEnvironment() as env:                      # doctest: +SKIP
    ...     env.reset()
    ...     code = "import tkinter as tk; tk.Tk(); png = capture_screenshot()"
    ...     obs = env.step(CodeAction(code=code))
    ...     obs.screenshots                                  # one base64 PNG

    Each episode (:meth:`reset`) gets a fresh worker subprocess, in its own process
    group (and under its own user id when run as root). The session takes a display
    from ``displays`` (a shared :class:`~viewfinder.xvfb.DisplayPool`, or by default a
    new Xvfb of its own) at its first reset and keeps it until :meth:`close`: a reset
    kills every process of the old worker, and the X server destroys the windows of
    every client that goes, so the new episode starts on an empty screen. Globals
    persist across the steps of an episode. A step that runs past its timeout or
    crashes the worker is reported in its observation; the next step runs in a fresh
    worker, and its metadata says the earlier state is lost.
    Every capture passes through the ``viewfinder_screenshot_captured`` hook in this
    process, with ``session_id``, ``episode_id``, ``step`` and ``capture_index`` in its
    context. Methods may be called from any thread, one at a time; :meth:`close` may
    interrupt a running step.
    """

    #: Many instances can run side by side (OpenEnv's server checks this flag).
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        config: CodeEnvConfig | None = None,
        *,
        displays: DisplaySource | None = None,
        session_id: str | None = None,
        users: SandboxUsers | None = None,
    ) -> None:
        self.config = config or CodeEnvConfig()
        self.session_id = session_id or uuid.uuid4().hex
        self._displays = displays or FreshDisplays(self.config.width, self.config.height)
        self._users = users
        self._lock = threading.RLock()
        self._display: Display | None = None
        self._worker: WorkerProcess | None = None
        #: The episode's home and temporary folders (kept across its workers).
        self._space: SessionSpace | None = None
        self._state = CodeState()
        self._closed = False
        self._pending_loss: str | None = None
        #: The worker running a step right now (set while :meth:`step` waits for it).
        self._stepping: WorkerProcess | None = None
        #: The folder videos go to once one is recorded (see ``CodeEnvConfig.video_dir``).
        self._video_dir: Path | None = None
        shared_font_cache()  # starts building matplotlib's font list for the workers

    # -- facts ----------------------------------------------------------------------------

    @property
    def state(self) -> CodeState:
        """The current episode (a copy)."""
        return self._state.model_copy()

    @property
    def display(self) -> Display | None:
        """The display the current episode runs on (None before :meth:`reset`)."""
        return self._display

    @property
    def worker(self) -> WorkerProcess | None:
        """The current worker subprocess, if one runs."""
        return self._worker

    @property
    def closed(self) -> bool:
        return self._closed

    # -- OpenEnv's Environment interface ----------------------------------------------------

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **_: Any
    ) -> CodeObservation:
        """Start a new episode: a fresh worker on a clean display, empty globals.

        ``seed`` is accepted for OpenEnv compatibility and ignored (code runs as written).
        """
        with self._lock:
            self._check_open()
            self._stop_worker()
            if self._display is not None and not self._display.is_alive():
                self._release_display()  # the source replaces a display that died
            if self._display is not None:
                # the old worker's windows went with its processes; what it set on the
                # server (root background, keymap, pointer...) goes back to a fresh state
                self._display.restore_state()
            if self.config.display and self._display is None:
                self._display = self._displays.acquire(timeout=self.config.start_timeout_s)
            self._end_episode_home()
            self._state = CodeState(episode_id=episode_id or uuid.uuid4().hex)
            self._pending_loss = None
            self._start_worker()
            return CodeObservation(metadata=self._base_metadata())

    def step(self, action: CodeAction, timeout_s: float | None = None, **_: Any) -> CodeObservation:
        """Run ``action.code``; never raises for what the code does (see the class docs).

        ``timeout_s`` (OpenEnv's step request field) applies when the action gives none.
        """
        with self._lock:
            self._check_open()
            if self._state.episode_id is None:
                self.reset()
            restarted = None
            if self._worker is None or not self._worker.alive:
                restarted = self._pending_loss or "the previous worker is gone"
                self._stop_worker()
                self._start_worker()
            assert self._worker is not None
            step = self._state.step_count + 1
            asked = action.timeout_s or timeout_s or self.config.timeout_s
            limit = min(asked, self.config.max_timeout_s)
            self._stepping = self._worker
            try:
                run = self._worker.run(
                    action.code, step, limit, capture_after=action.capture_screenshot
                )
            finally:
                self._stepping = None
            self._state.step_count = step
            self._state.last_exit_code = run.exit_code
            if run.worker_lost is not None:
                self._pending_loss = f"step {step}: {run.worker_lost}"
            observation = self._observation(action, run, restarted)
            if limit < asked:
                observation.metadata["timeout_clamped"] = (
                    f"the step asked for {asked:g} s; this environment allows at most "
                    f"{limit:g} s (max_timeout_s), so it ran with {limit:g} s"
                )
            return observation

    def cancel(self, reason: str = "cancelled by the client") -> bool:
        """Stop the running step, from any thread: its processes are killed and
        :meth:`step` returns at once, with exit code 130 and ``reason`` in the
        observation's ``metadata["cancelled"]``. The next step runs in a fresh worker
        (files in the home are kept). True when a step was running."""
        worker = self._stepping
        if worker is None:
            return False
        worker.cancel(reason)
        return True

    def close(self) -> None:
        """Stop the worker (interrupting a running step) and give the display back."""
        self._closed = True
        worker = self._worker
        if worker is not None:
            worker.interrupt()  # a step running in another thread returns promptly
        with self._lock:
            self._stop_worker()
            self._end_episode_home()
            self._release_display()
            if self._video_dir is not None and self.config.video_dir is None:
                shutil.rmtree(self._video_dir, ignore_errors=True)  # our own folder
            self._video_dir = None

    def __enter__(self) -> CodeEnvironment:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self._display.name if self._display is not None else "no display"
        return f"<CodeEnvironment {self.session_id[:8]} {where} steps={self._state.step_count}>"

    # -- internals --------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise EnvironmentClosedError(
                f"code environment {self.session_id} is closed; create a new one"
            )

    def _start_worker(self) -> None:
        if self._space is None:
            # one home per episode: a worker started again after a timeout or a crash
            # finds the files the episode wrote
            self._space = SessionSpace(self.config.tmp_size_mb * MiB)
        self._worker = WorkerProcess(
            self.config, self._display, on_capture=self._publish, users=self._users,
            space=self._space, video_dir=self._videos_folder,
        )  # fmt: skip

    def _videos_folder(self) -> Path:
        """Where this environment's videos go: ``config.video_dir``, else a folder of
        its own (only this process's user may enter it), removed by :meth:`close`."""
        if self._video_dir is None:
            if self.config.video_dir is not None:
                self._video_dir = Path(self.config.video_dir)
                self._video_dir.mkdir(parents=True, exist_ok=True)
            else:
                self._video_dir = Path(tempfile.mkdtemp(prefix="viewfinder-videos-"))
        return self._video_dir

    def _end_episode_home(self) -> None:
        space, self._space = self._space, None
        if space is not None:
            space.remove()

    def _stop_worker(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()

    def _release_display(self) -> None:
        display, self._display = self._display, None
        if display is not None:
            self._displays.release(display)

    def _publish(self, capture: Capture) -> None:
        publish_screenshot(
            capture.screenshot,
            {
                "backend": "xvfb",
                "session_id": self.session_id,
                "episode_id": self._state.episode_id,
                "step": capture.step,
                "capture_index": capture.index,
                "display": self._display.name if self._display is not None else None,
                "window": capture.window,
                "after_execution": capture.legacy,
            },
        )

    def _videos(self, run: StepRun, metadata: dict[str, Any]) -> list[Video]:
        """The step's videos; each up to ``video_inline_bytes`` with its file as base64."""
        videos = []
        for info, stopped_by in run.videos:
            fields = info.to_dict()
            data = None
            if (info.size_bytes + 2) // 3 * 4 <= self.config.video_inline_bytes:
                data = base64.b64encode(info.path.read_bytes()).decode("ascii")
            videos.append(Video(**fields, stopped_by=stopped_by, data=data))
        if run.video_errors:
            metadata["video_errors"] = run.video_errors
        return videos

    def _within_budget(
        self, run: StepRun, stderr: str, metadata: dict[str, Any], reserved: int = 0
    ) -> list[str]:
        """The step's captures as base64, the newest that fit in ``observation_bytes``
        with the text (and ``reserved`` bytes of videos); what was left out is said in
        ``metadata["screenshots_dropped"]``."""
        # JSON of text costs at most 6 bytes a character (\u escapes); base64 1 a byte
        room = self.config.observation_bytes - 6 * (len(run.stdout.text) + len(stderr)) - 65536
        room -= reserved
        kept: list[str] = []
        dropped = list(run.dropped)  # left out by the worker as they came
        for capture in reversed(run.captures):
            size = capture.b64_size
            if size <= room:
                kept.append(capture.screenshot.b64())
                room -= size + 4
            else:
                room = -1  # the older ones go too: what is kept is the newest, in order
                dropped.append(capture.index)
        if dropped:
            metadata["screenshots_dropped"] = {
                "count": len(dropped),
                "capture_indices": sorted(dropped),  # 1-based, as in the capture hook
                "kept": len(kept),
                "limit_bytes": self.config.observation_bytes,
                "reason": "the captures would not fit in the observation's byte budget; "
                "the newest were kept (capture fewer, smaller windows, or call "
                "capture_screenshot(region=...))",
            }
        kept.reverse()
        return kept

    def _base_metadata(self) -> dict[str, Any]:
        worker = self._worker
        return {
            "session_id": self.session_id,
            "episode_id": self._state.episode_id,
            "display": self._display.name if self._display is not None else None,
            "sandbox_user": worker.uid if worker is not None else None,
        }

    def _observation(
        self, action: CodeAction, run: StepRun, restarted: str | None
    ) -> CodeObservation:
        metadata = self._base_metadata()
        metadata.update(step=self._state.step_count, duration_s=round(run.duration_s, 4))
        stderr = run.stderr.text
        if restarted is not None:
            metadata["worker_restarted"] = True
            metadata["state_lost"] = (
                f"this step ran in a fresh worker: {restarted}, so globals, imports and "
                "windows of earlier steps are gone (files in the home are kept)"
            )
        if run.cancelled is not None:
            metadata["cancelled"] = run.cancelled
        if run.worker_lost is not None:
            metadata["worker_lost"] = run.worker_lost
            stderr += (
                f"{'' if not stderr or stderr.endswith(chr(10)) else chr(10)}"
                f"viewfinder: {run.worker_lost}. Every process of the step was killed; "
                "the next step runs in a fresh worker without the globals of earlier steps.\n"
            )
        if run.stdout.truncated or run.stderr.truncated:
            metadata["output_truncated"] = {
                "stdout_bytes": run.stdout.total_bytes,
                "stderr_bytes": run.stderr.total_bytes,
                "limit_bytes": self.config.output_limit_bytes,
            }
        if action.capture_screenshot:
            metadata["deprecation"] = LEGACY_CAPTURE_NOTE
            if run.legacy_error:
                metadata["after_execution_capture_error"] = run.legacy_error
        videos = self._videos(run, metadata)
        reserved = sum(len(video.data or "") + 1024 for video in videos)
        screenshots = self._within_budget(run, stderr, metadata, reserved)
        return CodeObservation(
            stdout=run.stdout.text,
            stderr=stderr,
            exit_code=run.exit_code,
            screenshot=screenshots[-1] if screenshots else None,
            screenshots=screenshots,
            videos=videos,
            metadata=metadata,
        )
