"""Fixtures for the browser tool's tests: one shared headless Chromium that sessions
attach to, a loopback web server with pages of known colours, and a guard that no
browser the tests started outlives them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from viewfinder.browser import BrowserSession
from viewfinder.cdp import CDPConnection, CDPSession, ChromiumProcess, connect, launch_chromium
from viewfinder.cdp.testing import chromium_leak_guard, serve_pages
from viewfinder.cdp.testing import free_port as find_free_port

VIEWPORT = (320, 240)
#: Where /color/<name> pages put their block: x, y, width, height.
BLOCK = (40, 30, 120, 80)
COLORS = {
    "blue": (0, 128, 255),
    "red": (220, 20, 60),
    "green": (0, 160, 0),
}


@dataclass(frozen=True)
class Layout:
    """What the test pages look like (tests import nothing from conftest, so they get
    this through the ``layout`` fixture)."""

    viewport: tuple[int, int] = VIEWPORT
    block: tuple[int, int, int, int] = BLOCK
    colors: dict[str, tuple[int, int, int]] = field(default_factory=lambda: dict(COLORS))

    def inside_block(self) -> tuple[int, int]:
        x, y, w, h = self.block
        return (x + w // 2, y + h // 2)

    def outside_block(self) -> tuple[int, int]:
        x, y, w, h = self.block
        return (x + w + 20, y + h + 20)


_RESET = "<style>html, body { margin: 0; background: #fff; }</style>"


def _color_page(name: str) -> str:
    x, y, w, h = BLOCK
    return (
        f"<!doctype html><title>{name} page</title>{_RESET}<body>"
        f'<div id="block" style="position:absolute; left:{x}px; top:{y}px; width:{w}px; '
        f'height:{h}px; background:rgb{COLORS[name]}"></div></body>'
    )


PAGES = {f"/color/{name}": _color_page(name) for name in COLORS}
PAGES["/form"] = f"""<!doctype html><title>form</title>{_RESET}
<body>
  <button id="button" style="position:absolute; left:20px; top:20px; width:120px; height:40px"
          onclick="window.clicks += 1">press</button>
  <input id="field" style="position:absolute; left:20px; top:100px; width:200px; height:30px"
         onkeydown="if (event.key === 'Enter') window.entered = this.value">
  <script>window.clicks = 0; window.entered = null;</script>
</body>"""


PAGES["/leave"] = f"""<!doctype html><title>stay</title>{_RESET}
<body><script>
  addEventListener("beforeunload", (event) => {{
    event.preventDefault();
    event.returnValue = "";
  }});
</script></body>"""


@pytest.fixture(scope="session")
def layout() -> Layout:
    return Layout()


# -- no browser outlives the tests ------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def no_chromium_left_behind() -> Iterator[Path]:
    """Fail the run if any Chromium started by the tests outlives them."""
    with chromium_leak_guard(prefix="vfbr-") as base:
        yield base


# -- the shared browser ---------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium(no_chromium_left_behind: Path) -> Iterator[ChromiumProcess]:
    """One headless Chromium that most tests attach their sessions to."""
    with launch_chromium(width=VIEWPORT[0], height=VIEWPORT[1]) as process:
        yield process


@pytest.fixture
def open_session(chromium: ChromiumProcess, site: str) -> Iterator[Callable[..., BrowserSession]]:
    """Make sessions attached to the shared browser; every one is closed after the test.

    Call it like ``BrowserSession``: ``open_session("id", url=...)``.
    """
    made: list[BrowserSession] = []

    def make(session_id: str = "test", **options: object) -> BrowserSession:
        options.setdefault("cdp_url", chromium.ws_url)
        options.setdefault("url", f"{site}/color/blue")
        options.setdefault("width", VIEWPORT[0])
        options.setdefault("height", VIEWPORT[1])
        session = BrowserSession(session_id, **options)  # type: ignore[arg-type]
        made.append(session)
        return session

    try:
        yield make
    finally:
        for session in made:
            session.close()


@pytest.fixture
def session(open_session: Callable[..., BrowserSession]) -> BrowserSession:
    """A session on the blue page of the shared browser."""
    return open_session("test")


@pytest.fixture
async def connection(chromium: ChromiumProcess) -> AsyncIterator[CDPConnection]:
    async with await connect(chromium.ws_url) as conn:
        yield conn


@pytest.fixture
async def page(connection: CDPConnection, site: str) -> AsyncIterator[CDPSession]:
    """A raw CDP page (no browser tool around it) on the blue page."""
    tab = await connection.new_page(f"{site}/color/blue", *VIEWPORT)
    try:
        yield tab
    finally:
        if not connection.closed:
            await tab.close()


# -- a web server on loopback ------------------------------------------------------------


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """Base URL of a loopback HTTP server serving :data:`PAGES`."""
    with serve_pages(PAGES) as base_url:
        yield base_url


@pytest.fixture
def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    return find_free_port()
