"""What clients get of a busy 1920x1080 desktop: every tool's default result within the
client's limits, over stdio and over streamable HTTP with the SDK's own clients.

The desktop shows examples/busy_screen.py: a photo-like picture with grain (a 1024x576
PNG of it is over 1 MB, more than the SDK's HTTP client takes in one event) and a blue
marker at (100, 100)-(300, 200). Each result must come through the SDK's client, be under
1 MB as JSON, carry under 25k tokens of text, and link the full-size image it shrank.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult, ResourceLink

from viewfinder.core.result_budget import budget_for, estimate_tokens
from viewfinder.mcp.testing import (
    HttpServer,
    StdioServer,
    close_to,
    image_of_blob,
    images_of,
    text_of,
)

ROOT = Path(__file__).resolve().parents[3]
BUSY = ROOT / "examples" / "busy_screen.py"
BLUE = (0, 0, 255)
MARKER_CENTRE = (200, 150)  # screen pixels
RESULT_LIMIT = 1_000_000  # Claude Desktop's, and under the SDK's 1 MiB event
TEXT_TOKENS = 25_000  # Claude Code's
PAGE = (
    "data:text/html,<body style='margin:0'><canvas id=c width=1280 height=4000></canvas>"
    "<script>const c=document.getElementById('c').getContext('2d');"
    "const d=c.createImageData(1280,4000);"
    "for(let i=0;i<d.data.length;i++)d.data[i]=i%254==3?255:Math.random()*256;"
    "c.putImageData(d,0,0)</script></body>"
)
DEFAULT_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("screenshot", {}),
    ("computer", {"action": "screenshot"}),
    ("computer", {"action": "left_click", "coordinate": [500, 300]}),
    ("run_code", {"code": "capture_screenshot()\ncapture_screenshot()"}),
    ("run_code", {"code": "print('head-' + 'x' * (1 << 21) + '-tail')"}),
    (
        "browser_execute",
        {"url": PAGE, "code": "await page.screenshot(full_page=True)", "timeout": 90},
    ),
    ("record_start", {"folder": "busy"}),
    ("record_stop", {}),
]


class Either:
    """A stdio server and its client, or an HTTP server and one client of it."""

    def __init__(self, kind: str, folder: Path) -> None:
        args = ("--size", "1920x1080", "--", sys.executable, str(BUSY))
        self.stdio: StdioServer | None = None
        self.http: HttpServer | None = None
        if kind == "stdio":
            self.stdio = StdioServer(folder, *args, cwd=ROOT)
            self.connection = self.stdio.connection
        else:
            self.http = HttpServer(folder, *args, cwd=ROOT)
            self.connection = self.http.connect()

    def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        return self.connection.call(name, arguments)

    def close(self) -> None:
        self.connection.close()
        if self.stdio is not None:
            self.stdio.close()
        if self.http is not None:
            self.http.stop()


@pytest.fixture(scope="module", params=["stdio", "http"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Either]:
    either = Either(request.param, tmp_path_factory.mktemp(f"mcp-budget-{request.param}"))
    try:
        yield either
    finally:
        either.close()


def _json_size(result: CallToolResult) -> int:
    return len(result.model_dump_json(by_alias=True, exclude_none=True).encode())


def test_every_tools_default_result_fits_the_client(server: Either) -> None:
    for name, arguments in DEFAULT_CALLS:
        result = server.call(name, arguments)  # over HTTP: what the SDK's client took in
        assert not result.is_error, f"{name}: {text_of(result)[:2000]}"
        assert _json_size(result) < RESULT_LIMIT, name
        assert estimate_tokens(text_of(result)) < TEXT_TOKENS, name
        for image in images_of(result):
            assert max(image.size) <= budget_for("claude-desktop").image_long_edge, name


def test_a_shrunk_frame_links_the_full_size_one_which_resources_read_returns(
    server: Either,
) -> None:
    result = server.call("run_code", {"code": "capture_screenshot()"})
    assert not result.is_error, text_of(result)
    (sent,) = images_of(result)
    scale = sent.width / 1920
    assert sent.width < 1920 and "from 1920x1080" in text_of(result)
    assert close_to(sent.getpixel((round(200 * scale), round(150 * scale))), BLUE, 30)
    (link,) = [part for part in result.content if isinstance(part, ResourceLink)]
    assert link.mime_type == "image/png"
    (contents,) = server.connection.read_resource(str(link.uri)).contents
    full = image_of_blob(contents.blob)
    assert full.size == (1920, 1080)
    assert full.getpixel(MARKER_CENTRE) == BLUE  # lossless, every pixel of the capture
    assert full.getpixel((99, 150)) != BLUE and full.getpixel((300, 150)) != BLUE


def test_run_code_text_keeps_head_and_tail_and_structured_content_does_not_repeat_it(
    server: Either,
) -> None:
    result = server.call("run_code", {"code": "print('head-' + 'x' * (1 << 21) + '-tail')"})
    text = text_of(result)
    assert "head-" in text and "-tail" in text and "left out" in text
    structured = result.structured_content or {}
    assert "stdout" not in structured and "stdout" in structured.get("in_text", [])
    assert structured["exit_code"] == 0


def test_the_screenshot_tool_matches_the_computer_tools_image(server: Either) -> None:
    shot = images_of(server.call("screenshot", {}))[0]
    computer = images_of(server.call("computer", {"action": "screenshot"}))[0]
    assert shot.size == computer.size == (1024, 576)
    assert close_to(shot.getpixel((107, 80)), BLUE, 30)
    assert close_to(computer.getpixel((107, 80)), BLUE, 30)
