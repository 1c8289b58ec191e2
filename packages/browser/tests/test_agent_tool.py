"""``browser_execute`` in the tool registry: in-process for a library, in the session's
sandbox when the host requires one (a snippet there cannot read the server's files or
reach its sockets)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.browser.return_value import MAX_RESULT_CHARS
from viewfinder.codeenv import CodeEnvSandbox
from viewfinder.core import ToolContext, call_tool, tool_registry
from viewfinder.core.testing import escape_probe, running

BLUE_PAGE = (
    "data:text/html,<title>blue</title><style>body{margin:0;background:rgb(0,0,255)}</style>x"
)
SHOT = "print(await page.title()); await page.screenshot()"


def colour_at(result_image: object, x: int, y: int) -> tuple[int, int, int]:
    return result_image.to_pil().convert("RGB").getpixel((x, y))  # type: ignore[attr-defined,no-any-return]


def test_the_tool_is_registered_with_a_url_parameter() -> None:
    tool = tool_registry()["browser_execute"]
    assert tool.runs_code
    assert tool.plugin == "browser"
    assert set(tool.input_schema()["properties"]) == {"code", "timeout", "description", "url"}


def test_in_process_for_a_library_caller() -> None:
    with ToolContext() as context:
        result = call_tool("browser_execute", {"code": SHOT, "url": BLUE_PAGE}, context)
        assert not result.is_error, result.text
        assert "blue" in result.text
        (shot,) = result.images
        assert colour_at(shot, 50, 50) == (0, 0, 255)
        again = call_tool("browser_execute", {"code": "return await page.title()"}, context)
        assert again.structured == {"result": "blue", "ok": True}  # the page persisted
        sessions = context.get_resource("browser.sessions")
        assert sessions is not None
    assert sessions.browser.process is None or not running(sessions.browser.process.pid)


@pytest.fixture(scope="module")
def sandboxed() -> Iterator[ToolContext]:
    """A server-like session: code runs only in its sandbox (a fresh display of its own)."""
    sandbox = CodeEnvSandbox()
    with ToolContext(sandbox=sandbox, require_sandbox=True) as context:
        yield context
    sandbox.close()


def test_in_the_sandbox_when_the_host_requires_one(sandboxed: ToolContext) -> None:
    result = call_tool("browser_execute", {"code": SHOT, "url": BLUE_PAGE}, sandboxed)
    assert not result.is_error, result.text
    assert "blue" in result.text
    (shot,) = result.images
    assert colour_at(shot, 50, 50) == (0, 0, 255)
    again = call_tool("browser_execute", {"code": "return await page.title()"}, sandboxed)
    assert again.structured == {"result": "blue", "ok": True}
    failed = call_tool("browser_execute", {"code": "raise KeyError('gone')"}, sandboxed)
    assert failed.is_error
    assert "KeyError" in failed.text
    assert call_tool("browser_execute", {"code": "return 1 + 1"}, sandboxed).structured == {
        "result": 2,
        "ok": True,
    }


def test_a_snippet_in_the_sandbox_cannot_read_server_files_or_reach_its_sockets(
    sandboxed: ToolContext, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the server's secret")
    secret.chmod(0o600)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        code = escape_probe(secret, port)
        result = call_tool("browser_execute", {"code": code}, sandboxed)
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # open to us
    assert secret.read_text() == "the server's secret"
    assert "the server's secret" not in result.text
    assert "read refused" in result.text
    assert "connect refused" in result.text


def test_a_host_requiring_a_sandbox_without_one_refuses() -> None:
    with ToolContext(require_sandbox=True) as context:
        result = call_tool("browser_execute", {"code": "return 1"}, context)
    assert result.is_error
    assert "only in a session's sandbox" in result.text


def test_a_large_return_value_is_cut_with_a_note_in_the_sandbox_and_in_process(
    sandboxed: ToolContext,
) -> None:
    big = "return 'a' * 1_100_000 + 'the-end'"  # past the sandbox's 1 MiB of output
    with ToolContext() as library:
        for context in (sandboxed, library):
            result = call_tool("browser_execute", {"code": big}, context)
            assert not result.is_error, result.text
            assert result.structured is not None
            value = result.structured["result"]
            assert len(value) == MAX_RESULT_CHARS and value.startswith('"aaaa')
            assert "the-end" not in value
            assert "1100009 characters of JSON; only its first 200000" in result.text
            assert len(result.text) < 2 * MAX_RESULT_CHARS  # the value is not printed whole
            small = call_tool("browser_execute", {"code": "return [1, 2]"}, context)
            assert small.structured == {"result": [1, 2], "ok": True}
