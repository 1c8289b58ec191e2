"""ViewfinderEnvironment: the processes, browser and screen of an agent's workspace."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

from viewfinder.cdp import CDP_URL_ENV, launch_chromium
from viewfinder.core import Screenshot, ViewfinderError
from viewfinder.tui.browser import (
    ChromiumLauncher,
    EnvironmentBrowser,
    attach_browser,
    launch_browser,
)
from viewfinder.tui.config import ViewfinderConfig
from viewfinder.tui.errors import NothingToCaptureError
from viewfinder.tui.processes import ProcessManager
from viewfinder.xvfb import Display, XvfbBackend

log = logging.getLogger(__name__)

ShotSource = Literal["auto", "display", "browser"]


class ViewfinderEnvironment:
    """Owns a :class:`ProcessManager`, optionally an Xvfb display and a browser.

    >>> async with ViewfinderEnvironment(load_config()) as env:      # doctest: +SKIP
    ...     await env.processes.spawn("xterm")     # DISPLAY is the environment's display
    ...     shot = await env.capture()

    On entry it starts the display when ``[display] enabled``; processes spawned through
    :attr:`processes` then get ``DISPLAY`` set. The ``[browser] cdp_url`` setting picks the
    browser: ``"auto"`` launches a local headless Chromium, a ``ws://`` or ``http://`` URL
    attaches to a running one, none disables it. A browser that cannot be had is
    reported in :attr:`browser_error` and the environment goes on without it. On exit,
    also when the block raised, it closes the browser (stopping one it launched), kills
    every process, stops the display and removes :attr:`temp_dir`.

    ``launcher`` starts Chromium (default :func:`viewfinder.cdp.launch_chromium`, which
    honours ``$VIEWFINDER_CHROMIUM``).
    """

    def __init__(
        self,
        config: ViewfinderConfig | None = None,
        *,
        processes: ProcessManager | None = None,
        launcher: ChromiumLauncher = launch_chromium,
    ) -> None:
        self.config = config or ViewfinderConfig()
        tui = self.config.tui
        self.processes = processes or ProcessManager(
            buffer_lines=tui.buffer_lines, kill_timeout=tui.kill_timeout, reap_orphans=True
        )
        self.launcher = launcher
        self.display: Display | None = None
        self.browser: EnvironmentBrowser | None = None
        #: Why the configured browser is missing (launch or attach failed), else None.
        self.browser_error: str | None = None
        self.temp_dir: Path | None = None
        self._display_backend: XvfbBackend | None = None
        self._sessions: set[EnvironmentBrowser] = set()

    # -- lifetime -------------------------------------------------------------------

    async def __aenter__(self) -> ViewfinderEnvironment:
        self.temp_dir = Path(tempfile.mkdtemp(prefix="viewfinder-env-"))
        try:
            if self.config.display.enabled:
                await self._start_display()
            await self._start_browser()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def _start_display(self) -> None:
        settings = self.config.display
        display = Display(settings.width, settings.height)
        await asyncio.to_thread(display.start)
        self.display = display
        self._display_backend = display.backend()
        self.processes.base_env = display.env(self.processes.base_env)

    async def _start_browser(self) -> None:
        settings = self.config.browser
        width, height = self.config.display.width, self.config.display.height
        try:
            if settings.mode == "auto":
                self.browser = await launch_browser(
                    width=width, height=height, timeout=settings.timeout, launcher=self.launcher
                )
            elif settings.mode == "attach":
                assert settings.cdp_url is not None
                self.browser = await attach_browser(
                    settings.cdp_url, width=width, height=height, timeout=settings.timeout
                )
        except (ViewfinderError, OSError) as exc:
            # The workspace is useful without a browser: say why and go on.
            self.browser_error = str(exc)
            log.warning("continuing without a browser: %s", exc)
        # Children learn where the browser is only when there is one: an empty or stale
        # value inherited from this process would send them nowhere.
        env = dict(self.processes.base_env if self.processes.base_env is not None else os.environ)
        env.pop(CDP_URL_ENV, None)
        if self.browser is not None:
            env[CDP_URL_ENV] = self.browser.endpoint
        self.processes.base_env = env

    async def close(self) -> None:
        """Stop the browser, kill every process, stop the display, remove temp folders.

        Every step runs even when an earlier one failed; the first error is raised after.
        Idempotent.
        """
        errors: list[BaseException] = []
        browsers = [*self._sessions, *([self.browser] if self.browser else [])]
        self._sessions.clear()
        self.browser = None
        for browser in browsers:
            await _collect(errors, browser.close())
        await _collect(errors, self.processes.close())
        if self._display_backend is not None:
            backend, self._display_backend = self._display_backend, None
            await _collect(errors, asyncio.to_thread(backend.close))
        if self.display is not None:
            display, self.display = self.display, None
            await _collect(errors, asyncio.to_thread(display.stop))
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None
        if errors:
            raise errors[0]

    # -- what it offers -------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def browser_session(self, url: str | None = None) -> AsyncIterator[EnvironmentBrowser]:
        """A fresh local headless Chromium for one block, stopped when the block ends.

        Independent of the ``[browser]`` setting. ``url`` is loaded first when given.
        Raises :class:`~viewfinder.core.DependencyMissingError` without Chromium.
        """
        settings = self.config.browser
        browser = await launch_browser(
            width=self.config.display.width,
            height=self.config.display.height,
            timeout=settings.timeout,
            launcher=self.launcher,
        )
        self._sessions.add(browser)
        try:
            if url is not None:
                await browser.navigate(url)
            yield browser
        finally:
            self._sessions.discard(browser)
            await browser.close()

    async def capture(self, source: ShotSource = "auto") -> Screenshot:
        """A screenshot of the display, or of the browser page (``auto``: display first)."""
        if source in ("auto", "display") and self._display_backend is not None:
            return await self._display_backend.acapture(context={"origin": "tui"})
        if source in ("auto", "browser") and self.browser is not None:
            return await self.browser.capture()
        raise NothingToCaptureError(_nothing_to_capture(source, self.browser_error))

    @property
    def display_name(self) -> str | None:
        return self.display.name if self.display is not None else None

    def __repr__(self) -> str:
        return (
            f"ViewfinderEnvironment(display={self.display_name}, browser={self.browser!r}, "
            f"{self.processes!r})"
        )


async def _collect(errors: list[BaseException], step: object) -> None:
    try:
        await step  # type: ignore[misc]
    except Exception as exc:
        log.warning("cleaning up the environment: %s", exc)
        errors.append(exc)


def _nothing_to_capture(source: ShotSource, browser_error: str | None) -> str:
    if source == "display":
        return "the environment has no display; set [display] enabled = true in the config"
    why = f" (the browser failed: {browser_error})" if browser_error else ""
    if source == "browser":
        return f'the environment has no browser{why}; set [browser] cdp_url = "auto" or a URL'
    return (
        f"the environment has neither a display nor a browser to capture{why}; "
        'set [display] enabled = true or [browser] cdp_url = "auto" in the config'
    )
