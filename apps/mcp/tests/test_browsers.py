"""``--browser``: off (no browser tool), or a running browser's DevTools URL, which the
snippets of ``browser_execute`` drive from the session's sandbox."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client import Client

from viewfinder.cdp import ChromiumProcess, launch_chromium
from viewfinder.core import tool_registry
from viewfinder.mcp.options import DesktopOptions
from viewfinder.mcp.server import build_server, served_tools
from viewfinder.mcp.sessions import SessionRegistry
from viewfinder.mcp.testing import StdioServer, close_to, images_of, text_of


def test_browser_off_leaves_the_browser_tool_out_and_a_call_says_why(tmp_path: Path) -> None:
    # in-process (the SDK's memory transport): no desktop starts for any of these calls
    options = DesktopOptions(browser="off", workdir=tmp_path)
    registry = tool_registry()
    tools = served_tools(registry, options)
    withheld = {name: "started with --browser off" for name in registry if name not in tools}
    sessions = SessionRegistry(options)
    server = build_server(tools, sessions, lambda ctx: "test", withheld=withheld)

    async def use() -> tuple[set[str], str, bool]:
        async with Client(server) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            result = await client.call_tool("browser_execute", {"code": "1"})
            return listed, text_of(result), result.is_error

    listed, text, is_error = anyio.run(use)
    assert "browser_execute" not in listed and "browser_navigate" not in listed
    # every tool of the browser package (browser_execute, the browser toolset's) is left out
    assert listed == {name for name, tool in registry.items() if tool.plugin != "browser"}
    assert is_error and "not offered by this server: started with --browser off" in text
    assert len(sessions) == 0


@pytest.fixture
def chromium() -> Iterator[ChromiumProcess]:
    browser = launch_chromium(width=800, height=600)
    try:
        yield browser
    finally:
        browser.stop()


def test_browser_execute_drives_the_browser_at_the_devtools_url(
    stdio_server: Callable[..., StdioServer], chromium: ChromiumProcess
) -> None:
    server = stdio_server("--size", "1006x706", "--browser", chromium.ws_url)
    page = "data:text/html,<body style='margin:0;background:%23c03080'></body>"
    result = server.call(
        "browser_execute",
        {"code": "print(await page.evaluate('navigator.userAgent'))\nawait page.screenshot()",
         "url": page},
    )  # fmt: skip
    assert not result.is_error, text_of(result)
    (shot,) = images_of(result)
    assert close_to(shot.getpixel((shot.width // 2, shot.height // 2)), (0xC0, 0x30, 0x80))
    # the snippet ran in that browser (its page is open there), and the session started
    # no Chromium of its own
    pages = httpx2.get(chromium.http_url + "/json/list").json()
    assert any(target["url"].startswith("data:text/html") for target in pages)
    assert "chromium" not in " ".join(server.processes().values()).lower()


def test_the_browser_toolset_tools_drive_the_browser_at_the_devtools_url(
    stdio_server: Callable[..., StdioServer], chromium: ChromiumProcess
) -> None:
    server = stdio_server("--size", "806x606", "--browser", chromium.ws_url)
    page = (
        "data:text/html,<title>toolset</title><script>window.log = []</script>"
        "<button onclick=\"log.push('save')\">Save</button>"
        "<button onclick=\"log.push('cancel')\">Cancel</button>"
    )
    went = server.call("browser_navigate", {"url": page})
    assert not went.is_error, text_of(went)
    tree = text_of(server.call("browser_read_page", {"filter": "interactive"}))
    save = next(line for line in tree.splitlines() if 'button "Save"' in line)
    ref = save.split("[", 1)[1].split("]", 1)[0]
    clicked = server.call("browser_left_click", {"target": {"type": "ref", "ref": ref}})
    assert not clicked.is_error, text_of(clicked)
    log = server.call("browser_javascript_exec", {"text": "log.join(',')"})
    assert text_of(log).startswith("save\n")  # the page's own log: Save, nothing else
    # the session drove that browser and started no Chromium of its own
    assert "chromium" not in " ".join(server.processes().values()).lower()


def test_the_browser_toolset_tools_say_how_to_give_them_a_browser(
    stdio_server: Callable[..., StdioServer],
) -> None:
    server = stdio_server("--size", "806x606")
    result = server.call("browser_navigate", {"url": "about:blank"})
    assert result.is_error and "--browser <DevTools URL>" in text_of(result)
    assert "chromium" not in " ".join(server.processes().values()).lower()
