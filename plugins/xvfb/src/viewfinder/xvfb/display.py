"""The Display: one Xvfb server this process starts, uses and stops."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from viewfinder.xvfb import access, server, state
from viewfinder.xvfb.framebuffer import Framebuffer

if TYPE_CHECKING:
    from viewfinder.xvfb.accessibility_bus import AccessibilityBus
    from viewfinder.xvfb.backend import XvfbBackend
    from viewfinder.xvfb.input import XInput

_running: set[Display] = set()
_running_lock = threading.Lock()


class Display:
    """A virtual X display: an ``Xvfb`` server with its screen in shared memory.

    >>> with Display(1280, 800) as display:            # doctest: +SKIP
    ...     subprocess.Popen(["xterm"], env=display.env())
    ...     display.backend().capture().save("frame.png")

    :meth:`start` returns once Xvfb has written its display number to the
    ``-displayfd`` pipe, which it does only when it accepts connections. The screen is
    kept in ``<fbdir>/Xvfb_screen0`` (under ``/dev/shm`` when the machine has it), which
    :class:`~viewfinder.xvfb.backend.XvfbBackend` maps to read frames without X requests.
    :meth:`stop` leaves no process, socket, lock file or framebuffer behind. Displays a
    program forgets to stop are stopped when the interpreter exits. Xvfb runs with
    ``-nolisten tcp -noreset`` (see :data:`~viewfinder.xvfb.server.COMMON_ARGS`).

    ``accessibility=True`` also starts a session D-Bus and the AT-SPI accessibility bus
    with the display (:meth:`start_accessibility` does it later), so the apps started
    with :meth:`env` publish their accessibility trees (see docs/elements.md); they
    stop with the display.

    A display whose owner was killed (SIGKILL: no cleanup runs) is stopped by the next
    ``viewfinder serve``, ``mcp`` or ``desktop`` start. ``die_with_owner=True`` has the
    kernel kill the X server at once instead, when the thread that started it ends: for
    a program that holds its display in its main thread (``viewfinder exec``), never
    for one started from a short-lived worker thread.
    """

    def __init__(
        self,
        width: int = 1280,
        height: int = 800,
        depth: int = 24,
        *,
        dpi: int | None = None,
        extra_args: Sequence[str] = (),
        start_timeout: float = 20.0,
        accessibility: bool = False,
        die_with_owner: bool = False,
    ) -> None:
        self._args = [*server.screen_args(width, height, depth, dpi), *extra_args]
        self._width, self._height, self.depth, self.dpi = width, height, depth, dpi
        self.start_timeout = start_timeout
        self._lock = threading.RLock()
        self._process: subprocess.Popen[bytes] | None = None
        self._number: int | None = None
        self._fbdir: Path | None = None
        self._log_path: Path | None = None
        self._input: XInput | None = None
        self._framebuffer: Framebuffer | None = None
        self._state: state.DisplayState | None = None
        self._guest: int | None = None
        self._accessibility = accessibility
        self._bus: AccessibilityBus | None = None
        self._die_with_owner = die_with_owner

    # -- lifetime -------------------------------------------------------------------

    def start(self) -> Display:
        """Start Xvfb and return once it accepts connections; returns ``self``.

        Raises :class:`~viewfinder.core.DependencyMissingError` when Xvfb is not
        installed and :class:`~viewfinder.xvfb.errors.DisplayStartError` (with Xvfb's
        stderr) when it exits early or does not get ready within ``start_timeout``.
        """
        with self._lock:
            if self._process is not None:
                raise RuntimeError(f"{self!r} is already started; stop() it first")
            server.xvfb_binary()  # fail with the install hint before making directories
            fbdir = Path(
                tempfile.mkdtemp(prefix="viewfinder-xvfb-", dir=server.default_fbdir_parent())
            )
            # The log lives beside the framebuffer so one rmtree removes both.
            log_path = fbdir / "xvfb.log"
            try:
                launched = server.launch(
                    [*self._args, "-fbdir", str(fbdir), *server.COMMON_ARGS],
                    log_path=log_path,
                    timeout=self.start_timeout,
                    die_with_parent=self._die_with_owner,
                )
            except BaseException:
                shutil.rmtree(fbdir, ignore_errors=True)
                raise
            self._process, self._number = launched.process, launched.number
            self._fbdir, self._log_path = fbdir, log_path
            try:
                # only the user who started it may connect (see viewfinder.xvfb.access)
                access.restrict_to_owner(self.name)
            except BaseException:
                self._stop_locked(timeout=2.0)
                raise
            self._guest = None
            if self._accessibility:
                try:
                    self.start_accessibility()
                except BaseException:
                    self._stop_locked(timeout=2.0)
                    raise
            try:
                self._state = state.snapshot(self.name)
            except Exception:  # restore_state() then has nothing to go back to
                self._state = None
        with _running_lock:
            _running.add(self)
        return self

    def admit(self, uid: int | None) -> None:
        """Let user id ``uid`` connect to this display, in place of the one admitted
        before (None: nobody but the owner). The code env admits each session's user id
        while it holds the display, and no other."""
        with self._lock:
            previous, self._guest = self._guest, uid
        if self.is_alive() and previous != uid:
            access.admit_only(self.name, uid, previous)

    @property
    def guest(self) -> int | None:
        """The user id admitted besides the owner (:meth:`admit`), or None."""
        return self._guest

    def stop(self, timeout: float = 5.0) -> None:
        """Stop Xvfb and remove what it left (:func:`~viewfinder.xvfb.server.stop_server`:
        its socket file first, then SIGKILL; ``timeout`` s for each part to end).

        Idempotent. Afterwards there is no Xvfb process, ``/tmp/.X11-unix/XN`` socket,
        ``/tmp/.XN-lock`` file or framebuffer directory left of this display.
        """
        with self._lock:
            self._stop_locked(timeout)

    def _stop_locked(self, timeout: float) -> None:
        self.close_input()
        if self._bus is not None:
            self._bus.stop(timeout=timeout)
            self._bus = None
        if self._framebuffer is not None:
            self._framebuffer.close()
            self._framebuffer = None
        process, number, fbdir = self._process, self._number, self._fbdir
        if process is not None:
            server.stop_server(process.pid, number, child=process, timeout=timeout)
        if fbdir is not None:
            shutil.rmtree(fbdir, ignore_errors=True)
        self._process, self._fbdir, self._guest = None, None, None
        with _running_lock:
            _running.discard(self)

    def __enter__(self) -> Display:
        if self._process is None:
            self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- facts ----------------------------------------------------------------------

    @property
    def number(self) -> int:
        """The display number N (as in ``DISPLAY=:N``)."""
        if self._number is None:
            raise RuntimeError("the display has not been started; call start() first")
        return self._number

    @property
    def name(self) -> str:
        """The display name, ``":N"``, as ``DISPLAY`` takes it."""
        return f":{self.number}"

    @property
    def width(self) -> int:
        return self._width

    @property
    def height(self) -> int:
        return self._height

    @property
    def size(self) -> tuple[int, int]:
        return (self._width, self._height)

    @property
    def pid(self) -> int | None:
        """The Xvfb process id while the display runs."""
        return self._process.pid if self._process is not None else None

    @property
    def fbdir(self) -> Path | None:
        """The directory holding the framebuffer file while the display runs."""
        return self._fbdir

    @property
    def framebuffer_path(self) -> Path | None:
        """The shared-memory XWD file of screen 0 while the display runs."""
        return self._fbdir / server.FRAMEBUFFER_FILE if self._fbdir is not None else None

    def stderr_text(self) -> str:
        """What Xvfb has printed so far."""
        return server.read_log(self._log_path) if self._log_path is not None else ""

    def is_alive(self) -> bool:
        """True while the Xvfb process runs."""
        process = self._process
        return process is not None and process.poll() is None

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """A copy of ``base`` (default ``os.environ``) with ``DISPLAY`` set to this display.

        For ``subprocess.Popen(..., env=display.env())``. ``XAUTHORITY`` is dropped:
        Xvfb runs without access control here, and a stale cookie file only confuses clients.
        """
        environment = dict(os.environ if base is None else base)
        environment["DISPLAY"] = self.name
        environment.pop("XAUTHORITY", None)
        if self._bus is not None:
            environment.update(self._bus.env())
            environment.pop("NO_AT_BRIDGE", None)  # it turns GTK's accessibility off
        return environment

    def start_accessibility(self) -> AccessibilityBus:
        """Start the session and accessibility buses of this display (idempotent).

        Apps started afterwards with :meth:`env` publish their trees there; the buses
        stop with the display. Raises :class:`~viewfinder.core.DependencyMissingError`
        when dbus-daemon or at-spi2-core is not installed.
        """
        from viewfinder.xvfb.accessibility_bus import AccessibilityBus

        with self._lock:
            if self._bus is None:
                if self._fbdir is None:
                    raise RuntimeError("the display has not been started; call start() first")
                self._bus = AccessibilityBus(self.name, self._fbdir).start()
            return self._bus

    @property
    def accessibility_bus(self) -> AccessibilityBus | None:
        """The display's accessibility buses while they run (None when not started)."""
        return self._bus

    # -- what you do with it ----------------------------------------------------------

    @property
    def input(self) -> XInput:
        """Mouse and keyboard on this display through XTest (one shared instance)."""
        with self._lock:
            if self._input is None:
                from viewfinder.xvfb.input import XInput

                self._input = XInput(self.name)
            return self._input

    def close_input(self) -> None:
        """Close the shared :attr:`input` (restoring keycodes it remapped); idempotent."""
        with self._lock:
            if self._input is not None:
                self._input.close()
                self._input = None

    def restore_state(self) -> bool:
        """Put back what clients changed on the server besides their windows.

        The root window's background and properties, the keyboard and modifier mappings,
        the pointer's position, and keys or buttons left pressed go back to how they were
        when the display started (see :mod:`viewfinder.xvfb.state`). Windows are not
        touched: close their clients first. False when there is nothing to go back to or
        the display cannot be reached.
        """
        self.close_input()
        snapshot = self._state
        if snapshot is None or not self.is_alive():
            return False
        try:
            state.restore(self.name, snapshot)
            if self._bus is not None:  # a session may have pointed AT_SPI_BUS elsewhere
                self._bus.publish()
        except Exception:  # a display that dies meanwhile: the caller replaces it
            return False
        return True

    def framebuffer(self) -> Framebuffer:
        """The mapped framebuffer of this display (one shared instance, closed by stop())."""
        with self._lock:
            if self._framebuffer is None:
                path = self.framebuffer_path
                if path is None:
                    raise RuntimeError("the display has not been started; call start() first")
                self._framebuffer = Framebuffer(path)
            return self._framebuffer

    def backend(self) -> XvfbBackend:
        """A capture backend for this display (close it, or use it as a context manager)."""
        from viewfinder.xvfb.backend import XvfbBackend

        return XvfbBackend(self)

    def __repr__(self) -> str:
        where = f":{self._number}" if self._number is not None else "not started"
        state = "alive" if self.is_alive() else "stopped"
        return f"<Display {where} {self._width}x{self._height}x{self.depth} {state}>"


def running_displays() -> list[Display]:
    """The displays this process started and has not stopped."""
    with _running_lock:
        return list(_running)


@atexit.register
def _stop_forgotten_displays() -> None:
    # A safety net: an Xvfb left running after we exit would hold its display number
    # and framebuffer forever.
    for display in running_displays():
        with contextlib.suppress(Exception):
            display.stop(timeout=2.0)
