"""The Desktop: a virtual screen with the apps of a task, started and stopped together."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from viewfinder.core.geometry import Region
from viewfinder.desktop.apps import (
    WINDOW_TIMEOUT_S,
    App,
    DesktopConfigError,
    find_program,
    launch_app,
    parse_command,
)
from viewfinder.desktop.lease import DisplayLease, DisplaySource, check_display_name, parse_size
from viewfinder.desktop.windows import wait_for_window as wait_for_app_window
from viewfinder.xvfb.display import Display

if TYPE_CHECKING:
    from viewfinder.core.element_sources import ElementSource
    from viewfinder.core.screenshot import Screenshot
    from viewfinder.desktop.computer import ComputerTool
    from viewfinder.xvfb.backend import XvfbBackend

log = logging.getLogger(__name__)


class Desktop:
    """A session on a virtual screen: an Xvfb display and the apps of a task on it.

    >>> form = ["python", "examples/desktop_form.py"]
    >>> with Desktop(size=(1280, 800), apps=[form]) as desktop:        # doctest: +SKIP
    ...     tool = desktop.computer(target="XGA")
    ...     result = tool({"action": "left_click", "coordinate": [56, 84]})

    Where the display comes from:

    - ``Desktop(size=(w, h))`` starts an Xvfb display of its own and stops it on close;
    - ``Desktop(pool=pool)`` borrows one from a :class:`~viewfinder.xvfb.DisplayPool`
      (anything with ``acquire()`` / ``release(display)``) and gives it back on close,
      where the pool closes the windows left on it;
    - ``Desktop(":N")`` (or a running :class:`~viewfinder.xvfb.Display`) uses a display
      someone else runs, and leaves it running.

    ``apps`` are commands with their arguments (``[["python", "form.py"], ["python",
    "notes.py"]]``),
    started in order when the desktop starts, each in a process group of its own with
    ``DISPLAY`` set (plus ``env``; in ``cwd``). With ``wait_for_windows`` (the default)
    :meth:`start` returns once each has mapped its first window. ``browser_url`` opens
    Chromium on the display (a window filling the screen, through the cdp plugin's
    launcher) and loads the URL; :attr:`browser` has its DevTools endpoint.
    ``window_manager`` is a command to run as the window manager, started before the
    apps (none is needed: without one, windows sit where the apps put them).
    ``accessibility`` starts the display's accessibility buses before the apps, and
    gives the apps what they need to publish their elements there (docs/elements.md);
    it needs a display the desktop starts or borrows, or a running
    :class:`~viewfinder.xvfb.Display` of this process.

    :meth:`close` (or leaving the ``with`` block) leaves nothing it started running:
    every app's process group is ended (SIGTERM, then SIGKILL) and reaped, with the
    PID namespace each app runs in where bubblewrap works (so daemons an app started
    with ``setsid`` end too), the browser stopped, then the display stopped, released or
    left alone as above. When the process holding the desktop is killed (SIGKILL), the
    apps die with it, and its display is stopped by the next :meth:`start` of any
    desktop, ``viewfinder desktop`` command, ``viewfinder serve`` or ``viewfinder mcp``.
    """

    def __init__(
        self,
        display: Display | str | None = None,
        *,
        size: tuple[int, int] | str | None = None,
        pool: DisplaySource | None = None,
        apps: Sequence[Sequence[str]] = (),
        browser_url: str | None = None,
        window_manager: Sequence[str] | str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        wait_for_windows: bool = True,
        window_timeout: float = WINDOW_TIMEOUT_S,
        accessibility: bool = False,
    ) -> None:
        if display is not None and pool is not None:
            raise DesktopConfigError(
                "give a display or a pool, not both: the desktop uses one display"
            )
        if size is not None and (display is not None or pool is not None):
            raise DesktopConfigError(
                "size= applies only to a display the desktop starts itself; a display given "
                "by name or borrowed from a pool keeps its own size"
            )
        if isinstance(display, str):
            display = check_display_name(display)
        elif display is not None and not isinstance(display, Display):
            raise DesktopConfigError(
                f"display must be a display name such as ':1' or a viewfinder.xvfb.Display, "
                f"not {type(display).__name__}"
            )
        if pool is not None and not (
            callable(getattr(pool, "acquire", None)) and callable(getattr(pool, "release", None))
        ):
            raise DesktopConfigError(
                f"pool must have acquire() and release(display), like a DisplayPool; "
                f"{type(pool).__name__} has not"
            )
        if isinstance(apps, str) or any(isinstance(app, str) for app in apps):
            raise DesktopConfigError(
                "apps is a list of commands, each a list of words: "
                'apps=[["python", "form.py"], ["python", "notes.py"]]'
            )
        if accessibility and isinstance(display, str):
            raise DesktopConfigError(
                "accessibility=True needs a display the desktop starts or borrows, or a "
                "viewfinder.xvfb.Display; a display given by name runs its buses (or not) "
                "where it was started"
            )
        if browser_url is not None and not (isinstance(browser_url, str) and browser_url.strip()):
            raise DesktopConfigError(f"browser_url must be a URL, not {browser_url!r}")
        self._lease = DisplayLease(
            display, pool=pool, size=parse_size(size) if size is not None else None
        )
        self._apps_wanted = [parse_command(app) for app in apps]
        self._window_manager_wanted = (
            parse_command(window_manager, what="window manager")
            if window_manager is not None
            else None
        )
        self.browser_url = browser_url
        self.env = dict(env or {})
        self.cwd = cwd
        self.wait_for_windows = wait_for_windows
        self.window_timeout = window_timeout
        self.accessibility = accessibility
        self._lock = threading.RLock()
        self._apps: list[App] = []
        self._window_manager: App | None = None
        self._browser: Any = None  # a viewfinder.cdp.ChromiumProcess
        self._logs: Path | None = None
        self._computers: dict[str, ComputerTool] = {}
        self._sources: list[ElementSource] = []
        self._backend: XvfbBackend | None = None
        self._started = False

    # -- lifetime -------------------------------------------------------------------

    def start(self) -> Desktop:
        """Get the display, start the window manager, the apps and the browser; ``self``.

        When something fails, whatever was started is stopped again before the error
        propagates: :class:`~viewfinder.desktop.apps.AppNotFoundError` for a program that
        is not installed, :class:`~viewfinder.desktop.apps.AppStartError` for an app that
        exits before it shows a window, ``WindowTimeoutError``, and the display's own
        errors.
        """
        with self._lock:
            if self._started:
                raise RuntimeError(f"{self!r} is already started; close() it first")
            self._check_programs()
            self._started = True
            try:
                # the displays of desktops whose holder was killed (SIGKILL) go first
                from viewfinder.xvfb.server import reap_abandoned

                reap_abandoned()
                self._lease.open()
                if self.accessibility:
                    self._start_accessibility()
                self._logs = Path(tempfile.mkdtemp(prefix="viewfinder-desktop-"))
                if self._window_manager_wanted is not None:
                    self._window_manager = self._launch(self._window_manager_wanted)
                started = [self._launch(command) for command in self._apps_wanted]
                if self.wait_for_windows:
                    for app in started:
                        wait_for_app_window(app, self.display_name, self.window_timeout)
                if self.browser_url is not None:
                    from viewfinder.desktop.browser import open_browser

                    self._browser = open_browser(self.display_name, self.size, self.browser_url)
            except BaseException:
                self.close()
                raise
        return self

    def _start_accessibility(self) -> None:
        display = self._lease.display
        assert display is not None, "a display given by name was refused in __init__"
        bus = display.start_accessibility()  # idempotent: a pool's display may have them
        self.env.update(bus.env())

    def _check_programs(self) -> None:
        # Before anything starts: a program that is not installed is the commonest
        # mistake, and its error should not wait for a display to start and stop.
        path = {**os.environ, **self.env}.get("PATH")
        commands = [*self._apps_wanted]
        if self._window_manager_wanted is not None:
            commands.insert(0, self._window_manager_wanted)
        for command in commands:
            find_program(command, path)

    def close(self) -> None:
        """Stop everything the desktop started; give back or stop its display. Idempotent."""
        with self._lock:
            for tool in self._computers.values():
                _close_quietly(tool, "computer tool")
            self._computers.clear()
            for source in self._sources:
                _close_quietly(source, "element source")
            self._sources.clear()
            if self._backend is not None:
                _close_quietly(self._backend, "capture backend")
                self._backend = None
            if self._browser is not None:
                _close_quietly(self._browser, "browser", method="stop")
                self._browser = None
            for app in reversed(self._apps):
                _close_quietly(app, f"app {app.describe()}", method="stop")
            self._apps.clear()
            if self._window_manager is not None:
                _close_quietly(self._window_manager, "window manager", method="stop")
                self._window_manager = None
            if self._logs is not None:
                shutil.rmtree(self._logs, ignore_errors=True)
                self._logs = None
            try:
                self._lease.release()
            except Exception:
                log.exception("releasing the display of %r failed", self)
            self._started = False

    def __enter__(self) -> Desktop:
        if not self._started:
            self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- facts ----------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """True between :meth:`start` and :meth:`close`."""
        return self._started

    @property
    def display(self) -> Display | None:
        """The :class:`~viewfinder.xvfb.Display` object (None for a display given by name)."""
        return self._lease.display

    @property
    def display_name(self) -> str:
        """The display's name, ``":N"``, as ``DISPLAY`` takes it."""
        if self._lease.name is None:
            raise RuntimeError("the desktop has not been started; call start() first")
        return self._lease.name

    @property
    def size(self) -> tuple[int, int]:
        """The screen's (width, height) in pixels."""
        if self._lease.size is None:
            raise RuntimeError("the desktop has not been started; call start() first")
        return self._lease.size

    @property
    def apps(self) -> list[App]:
        """The apps started so far (by ``apps=`` and :meth:`launch`), in order."""
        return list(self._apps)

    @property
    def window_manager(self) -> App | None:
        """The window manager's process, when one was asked for."""
        return self._window_manager

    @property
    def browser(self) -> Any:
        """The :class:`viewfinder.cdp.ChromiumProcess` of ``browser_url`` (``ws_url``,
        ``http_url`` for CDP clients), or None."""
        return self._browser

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """A copy of ``base`` (default ``os.environ``) plus ``env``, with ``DISPLAY`` set to
        this desktop's display: for programs you start yourself."""
        environment = dict(os.environ if base is None else base)
        environment.update(self.env)
        environment["DISPLAY"] = self.display_name
        environment.pop("XAUTHORITY", None)
        return environment

    # -- what you do with it ----------------------------------------------------------

    def launch(
        self,
        command: Sequence[str] | str,
        *,
        wait_for_window: bool = False,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> App:
        """Start one more app on the display (a list of words, or a string split like a
        shell's); it is stopped with the desktop.

        With ``wait_for_window``, return once the app has mapped a window
        (:attr:`App.window` holds its id), at most ``timeout`` s (default
        ``window_timeout``).
        """
        self._require_started()
        app = self._launch(parse_command(command), env=env, cwd=cwd)
        if wait_for_window:
            wait_for_app_window(
                app, self.display_name, self.window_timeout if timeout is None else timeout
            )
        return app

    def _launch(
        self,
        command: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> App:
        assert self._logs is not None
        app = launch_app(
            command,
            display=self.display_name,
            log_dir=self._logs,
            env={**self.env, **(env or {})},
            cwd=cwd if cwd is not None else self.cwd,
        )
        self._apps.append(app)
        return app

    def computer(self, **options: Any) -> ComputerTool:
        """A :class:`~viewfinder.desktop.ComputerTool` on this desktop's display.

        ``options`` are the tool's (``target="XGA"``, ``max_width=...``, ``settle=...``,
        ``record_to=...``). Made on first use and kept: the same options give the same
        tool; every tool is closed with the desktop.
        """
        self._require_started()
        from viewfinder.desktop.computer import ComputerTool

        key = repr(sorted(options.items()))
        with self._lock:
            tool = self._computers.get(key)
            if tool is None:
                where: Display | str = self._lease.display or self.display_name
                if self._browser is not None and "element_source" not in options:
                    from viewfinder.desktop.browser import browser_element_source

                    # its page through cdp, closed with the desktop
                    name, buses = self.display_name, self.accessibility
                    page = browser_element_source(self._browser, name, buses)
                    self._sources.append(page)
                    options = {**options, "element_source": page}
                tool = ComputerTool(where, **options)
                self._computers[key] = tool
            return tool

    def screenshot(self, region: Region | None = None, *, format: str = "png") -> Screenshot:
        """The screen now (or ``region`` of it), at full resolution."""
        self._require_started()
        with self._lock:
            if self._backend is None:
                from viewfinder.xvfb.backend import XvfbBackend

                self._backend = XvfbBackend(self._lease.display or self.display_name)
            backend = self._backend
        return backend.capture(region=region, format=format)

    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError("the desktop has not been started; call start() or use `with`")

    def __repr__(self) -> str:
        if not self._started or self._lease.name is None or self._lease.size is None:
            return "<Desktop not started>"
        width, height = self._lease.size
        return f"<Desktop {self._lease.name} {width}x{height}, {len(self._apps)} app(s)>"


def _close_quietly(thing: object, what: str, method: str = "close") -> None:
    # Closing goes on past one failure: everything else must still be stopped.
    closer = getattr(thing, method, None)
    if not callable(closer):
        return
    try:
        closer()
    except Exception:
        log.exception("stopping %s failed", what)


__all__ = ["Desktop", "DisplaySource", "parse_size"]
