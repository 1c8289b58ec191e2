"""Chromium as a window on a desktop's display, through the cdp plugin's launcher.

The launcher starts Chromium headless by default; here it runs headful, told by flags
which X display to use (``--display``: the caller's ``DISPLAY`` is left alone) and
where to put its window. The page is loaded over the DevTools protocol, so a URL that
cannot be loaded is an error here rather than an error page an agent later meets.
"""

from __future__ import annotations

from typing import Any

from viewfinder.core.element_sources import ElementNode, ElementRead, ElementSource
from viewfinder.desktop.apps import AppStartError, DesktopConfigError, on_spawner_thread

#: Flags that put Chromium on an X display as a window filling the screen from 0,0.
BROWSER_FLAGS = (
    "--ozone-platform=x11",
    "--window-position=0,0",
    # no "unsupported command-line flag: --no-sandbox" bar over the page
    "--test-type",
    "--disable-session-crashed-bubble",
    "--noerrdialogs",
)


def open_browser(display: str, size: tuple[int, int], url: str) -> Any:
    """Start Chromium on X display ``display``, its window ``size``, and load ``url``.

    Returns the :class:`viewfinder.cdp.ChromiumProcess` (stop it with ``stop()``; its
    ``ws_url`` / ``http_url`` serve CDP clients). Raises
    :class:`~viewfinder.desktop.apps.DesktopConfigError` when the cdp plugin is not
    installed, and the cdp plugin's errors when Chromium does not start or the page
    does not load.
    """
    try:
        from viewfinder.cdp import LoopThread, connect, launch_chromium
        from viewfinder.cdp.session import CDPSession
    except ImportError as exc:  # viewfinder-cdp is not installed
        raise DesktopConfigError(
            f"browser_url needs the cdp plugin: pip install viewfinder-cdp ({exc})"
        ) from None
    width, height = size
    # the launcher ties Chromium to the thread that starts it: start it from one that
    # lives as long as this process
    browser = on_spawner_thread(
        launch_chromium,
        headless=False,
        width=width,
        height=height,
        extra_args=[f"--display={display}", *BROWSER_FLAGS],
    )

    async def load() -> None:
        connection = await connect(browser.ws_url)
        try:
            targets = await connection.call("Target.getTargets")
            page = next(
                (
                    target["targetId"]
                    for target in targets["targetInfos"]
                    if target.get("type") == "page"
                ),
                None,
            )
            if page is None:
                raise AppStartError(f"Chromium opened no page to load {url} in")
            session = await CDPSession.attach(connection, page)
            await session.navigate(url)
        finally:
            await connection.close()

    loop = LoopThread(name="viewfinder-desktop-browser")
    try:
        loop.run(load())
    except BaseException:
        browser.stop()
        raise
    finally:
        loop.stop()
    return browser


def browser_element_source(browser: Any, display: str, accessibility: bool) -> ElementSource:
    """The elements of a desktop with its own Chromium: the page it shows, read over
    the DevTools protocol in screen pixels, after the apps' trees (the ``atspi`` source
    of X display ``display``) when the display has its ``accessibility`` buses.

    Chromium on the display publishes nothing on the accessibility bus unless forced
    to, and would then give its page a second time: its page is read through cdp.
    """
    from viewfinder.cdp.elements import CdpElementSource
    from viewfinder.core.element_sources import get_element_source

    page = CdpElementSource(cdp_url=browser.ws_url, screen=True)
    if not accessibility:
        return page
    return AppsAndPage(get_element_source("atspi", display=display), page)


class AppsAndPage(ElementSource):
    """The apps' trees, then the page's; each node keeps its own source's key, so refs
    stay bound to the element."""

    name = "desktop"

    def __init__(self, apps: ElementSource, page: ElementSource) -> None:
        super().__init__()
        self.sources = (apps, page)

    def _read(self) -> ElementRead:
        roots: list[ElementNode] = []
        reasons = []
        for source in self.sources:
            found = source._read()
            roots.extend(found.roots)
            if found.reason:
                reasons.append(f"{source.name}: {found.reason}")
        return ElementRead(roots, "; ".join(reasons), coordinates="screen")

    def close(self) -> None:
        for source in self.sources:
            source.close()
