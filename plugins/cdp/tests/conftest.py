"""Fixtures for the cdp tests: one shared headless Chromium, a loopback web server with
the test pages, and a guard that no browser the tests started outlives them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from viewfinder.cdp import CDPConnection, CDPSession, ChromiumProcess, connect, launch_chromium
from viewfinder.cdp.testing import chromium_leak_guard, serve_pages
from viewfinder.cdp.testing import free_port as find_free_port


@dataclass(frozen=True)
class Layout:
    """Where the test pages put things (tests import nothing from conftest, so they get
    this through the ``layout`` fixture)."""

    viewport: tuple[int, int] = (640, 480)
    block: tuple[int, int, int, int] = (100, 50, 200, 100)  # x, y, width, height
    block_color: tuple[int, int, int] = (0, 128, 255)
    tall_height: int = 3000
    tall_block: tuple[int, int, int, int] = (10, 2500, 100, 100)
    tall_block_color: tuple[int, int, int] = (0, 160, 0)
    button: tuple[int, int] = (80, 40)  # centre of the button on /form
    field: tuple[int, int] = (170, 115)  # centre of the text field on /form


LAYOUT = Layout()
VIEWPORT = LAYOUT.viewport

_RESET = "<style>html, body { margin: 0; background: #fff; }</style>"


def _box(box: tuple[int, int, int, int], color: tuple[int, int, int], extra: str = "") -> str:
    x, y, w, h = box
    return (
        f'<div {extra} style="position:absolute; left:{x}px; top:{y}px; width:{w}px; '
        f'height:{h}px; background:rgb{color}"></div>'
    )


PAGES = {
    "/block": f"<!doctype html>{_RESET}<body>{_box(LAYOUT.block, LAYOUT.block_color)}</body>",
    "/tall": (
        f"<!doctype html>{_RESET}<body style='height:{LAYOUT.tall_height}px'>"
        f"{_box(LAYOUT.tall_block, LAYOUT.tall_block_color)}</body>"
    ),
    "/form": f"""<!doctype html>{_RESET}
<body>
  <button id="button" style="position:absolute; left:20px; top:20px; width:120px; height:40px"
          onclick="window.clicks += 1" ondblclick="window.doubles += 1">press</button>
  <form id="form" onsubmit="event.preventDefault(); window.submitted = field.value">
    <input id="field" style="position:absolute; left:20px; top:100px; width:300px;
           height:30px">
  </form>
  <script>
    window.clicks = 0; window.doubles = 0; window.submitted = null; window.keys = [];
    document.addEventListener("keydown", (e) => window.keys.push(e.key));
  </script>
</body>""",
}


@pytest.fixture(scope="session")
def layout() -> Layout:
    return LAYOUT


# -- no browser outlives the tests ------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def no_chromium_left_behind() -> Iterator[Path]:
    """Fail the run if any Chromium started by the tests outlives them."""
    with chromium_leak_guard(prefix="vfcdp-") as base:
        yield base


# -- the shared browser and a page in it -----------------------------------------------


@pytest.fixture(scope="session")
def browser(no_chromium_left_behind: Path) -> Iterator[ChromiumProcess]:
    """One headless Chromium for every test that does not need its own."""
    with launch_chromium(width=VIEWPORT[0], height=VIEWPORT[1]) as process:
        yield process


@pytest.fixture
async def connection(browser: ChromiumProcess) -> AsyncIterator[CDPConnection]:
    async with await connect(browser.ws_url) as conn:
        yield conn


@pytest.fixture
async def page(connection: CDPConnection, site: str) -> AsyncIterator[CDPSession]:
    """A new tab showing the block page, closed after the test."""
    session = await connection.new_page(f"{site}/block", *VIEWPORT)
    try:
        yield session
    finally:
        if not connection.closed:
            await session.close()


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
