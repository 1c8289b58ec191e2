"""OpenEnv's own ``MCPToolClient`` (openenv-core, a dev dependency) drives
``viewfinder serve --env desktop`` unchanged: over the WebSocket (its default) and over
``/mcp`` (its production mode), against the real ``computer`` tool on a real Tk app."""

from __future__ import annotations

import base64
import io
import shlex
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from openenv.core.env_server.mcp_types import (
    CallToolAction,
    CallToolObservation,
    ToolErrorType,
)
from openenv.core.mcp_client import MCPToolClient
from PIL import Image

from viewfinder.core import tool_registry
from viewfinder.core.testing import wait_until

Serve = Callable[..., tuple[subprocess.Popen[bytes], str]]
#: The ``form`` fixture (conftest.py): ``form(name)`` is a Tk form with a state file.
MakeForm = Callable[..., Any]
TOKEN = "desktop-token-for-tests"
#: The colours of the form's swatch: before any click of Apply, after the second.
GREY, SECOND = (0x80, 0x80, 0x80), (0x30, 0xA0, 0x40)


def desktop_server(serve: Serve, form: Any, *args: str) -> str:
    """``viewfinder serve --env desktop`` whose task is ``form``; its base URL."""
    command = shlex.join(form.command)
    _, base = serve("--env", "desktop", "--size", "800x600", "--app", command, *args)
    return base


def active_sessions(base: str, auth: tuple[str, str] | None = None) -> int:
    count: int = httpx.get(f"{base}/health", auth=auth).json()["active_sessions"]
    return count


def pixel(result: dict[str, Any], point: list[int]) -> tuple[int, int, int]:
    """The colour at ``point`` of the image in a tool result (MCP content)."""
    (image,) = [part for part in result["content"] if part["type"] == "image"]
    assert image["mimeType"] == "image/png"
    frame = Image.open(io.BytesIO(base64.b64decode(image["data"]))).convert("RGB")
    colour = frame.getpixel((point[0], point[1]))
    assert isinstance(colour, tuple)
    return (colour[0], colour[1], colour[2])


async def test_mcp_tool_client_over_the_websocket(serve_process: Serve, form: MakeForm) -> None:
    app = form()
    base = desktop_server(serve_process, app)
    async with MCPToolClient(base_url=base, message_timeout_s=120) as env:
        reset = await env.reset()
        assert reset.observation.metadata["screen_size"] == [800, 600]
        assert reset.observation.metadata["apps"] == [app.command]
        tools = await env.list_tools()
        registry = tool_registry()
        assert [tool.name for tool in tools] == list(registry)
        for tool in tools:
            assert tool.input_schema == registry[tool.name].input_schema()
        button, swatch = app.centre("button"), app.centre("swatch")

        # call_tool acts, and hands back only the tool's structured data
        data = await env.call_tool("computer", action="left_click", coordinate=button)
        wait_until(lambda: app.clicks() == 1, "the click to reach the form")
        assert data["action"] == "left_click"
        assert data["screen"] == {"width": 800, "height": 600}
        shot = await env.call_tool("screenshot", max_width=400)
        assert shot["screen"] == {"width": 800, "height": 600}
        assert shot["image"] == {"width": 400, "height": 300}

        # a step returns the image and the text, as an MCP tool result carries them
        step = await env.step(
            CallToolAction(
                tool_name="computer", arguments={"action": "left_click", "coordinate": button}
            )
        )
        observation = step.observation
        assert isinstance(observation, CallToolObservation)
        assert observation.error is None
        result = observation.result
        assert {part["type"] for part in result["content"]} == {"text", "image"}
        assert result["isError"] is False
        assert result["data"] == result["structuredContent"]
        wait_until(lambda: app.clicks() == 2, "the second click to reach the form")
        assert pixel(result, swatch) == SECOND  # the frame shows what the click did

        # a malformed call is OpenEnv's tool error, naming the field; the next call works
        bad = await env.step(CallToolAction(tool_name="computer", arguments={"action": "dance"}))
        assert isinstance(bad.observation, CallToolObservation)
        assert bad.observation.error is not None
        assert bad.observation.error.error_type == ToolErrorType.INVALID_ARGS
        assert "action" in bad.observation.error.message
        assert "left_click" in bad.observation.error.message  # what is allowed
        with pytest.raises(RuntimeError, match=r"coordinate.*\(type: invalid_args\)"):
            await env.call_tool("computer", action="left_click", coordinate="the button")
        with pytest.raises(RuntimeError, match=r"unknown tool 'dance'.*tool_not_found"):
            await env.call_tool("dance")
        await env.call_tool("computer", action="left_click", coordinate=button)
        wait_until(lambda: app.clicks() == 3, "the call after the errors to work")
        assert (await env.state()).step_count == 6
        assert app.running()
    wait_until(
        lambda: active_sessions(base) == 0 and not app.running(),
        "the session to close, and its app with it",
    )


async def test_mcp_tool_client_over_http_mcp(serve_process: Serve, form: MakeForm) -> None:
    app = form()
    base = desktop_server(serve_process, app)
    env = MCPToolClient(base_url=base, message_timeout_s=120)
    env.use_production_mode = True  # tools/list and tools/call on POST /mcp
    try:
        tools = await env.list_tools()
        assert [tool.name for tool in tools] == list(tool_registry())
        assert active_sessions(base) == 1  # openenv/session/create started the task
        button = app.centre("button")
        await env.call_tool("computer", action="left_click", coordinate=button)
        wait_until(lambda: app.clicks() == 1, "the click to reach the form")
        shot = await env.call_tool("screenshot")
        assert shot["screen"] == {"width": 800, "height": 600}
        with pytest.raises(RuntimeError, match=r"Tool 'computer' failed: .*action"):
            await env.call_tool("computer", action="dance")
        await env.call_tool("computer", action="left_click", coordinate=button)
        wait_until(lambda: app.clicks() == 2, "the call after the error to work")
    finally:
        await env.close()  # openenv/session/close
    assert active_sessions(base) == 0
    wait_until(lambda: not app.running(), "the app to go with its session")


async def test_a_token_is_required_and_works_in_the_url(
    serve_process: Serve, form: MakeForm, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    app = form()
    base = desktop_server(serve_process, app, "--token-file", str(token_file))
    assert httpx.get(f"{base}/health").status_code == 401
    assert (
        httpx.post(f"{base}/mcp", json={"jsonrpc": "2.0", "method": "tools/list"}).status_code
        == 401
    )
    with pytest.raises(ConnectionError):
        async with MCPToolClient(base_url=base) as env:
            await env.reset()
    # OpenEnv's client cannot set headers: the token goes in the URL (basic auth)
    url = base.replace("http://", f"http://openenv:{TOKEN}@")
    async with MCPToolClient(base_url=url, message_timeout_s=120) as env:
        await env.reset()
        await env.call_tool("computer", action="left_click", coordinate=app.centre("button"))
        wait_until(lambda: app.clicks() == 1, "the click over the WebSocket")
    wait_until(lambda: not app.running(), "the first session's app to end")
    app.path.unlink()  # the next session's form writes its own
    production = MCPToolClient(base_url=url, message_timeout_s=120)
    production.use_production_mode = True
    try:
        assert await production.list_tools()  # creates the session: its form starts
        await production.call_tool("computer", action="left_click", coordinate=app.centre("button"))
        wait_until(lambda: app.clicks() == 1, "the click on /mcp (a fresh form)")
    finally:
        await production.close()
    assert active_sessions(base, auth=("any", TOKEN)) == 0


async def test_capacity_is_enforced_on_both_paths(serve_process: Serve, form: MakeForm) -> None:
    base = desktop_server(serve_process, form(), "--max-sessions", "1")
    async with MCPToolClient(base_url=base, message_timeout_s=120) as first:
        await first.reset()
        second = MCPToolClient(base_url=base)
        try:
            with pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
                await second.reset()
        finally:
            await second.close()
        third = MCPToolClient(base_url=base)
        third.use_production_mode = True
        try:
            with pytest.raises(
                RuntimeError, match=r"Failed to create MCP session: .*maximum \(1\)"
            ):
                await third.call_tool("screenshot")
        finally:
            await third.close()
    wait_until(lambda: active_sessions(base) == 0, "the session to close")


async def test_two_sessions_do_not_see_each_others_screen(
    serve_process: Serve, form: MakeForm
) -> None:
    mine, theirs = form("mine"), form("theirs")
    base = desktop_server(serve_process, mine, "--allow-any-app")
    async with (
        MCPToolClient(base_url=base, message_timeout_s=120) as a,
        MCPToolClient(base_url=base, message_timeout_s=120) as b,
    ):
        shown_a = await a.reset(apps=[mine.command])
        shown_b = await b.reset(apps=[theirs.command])
        assert shown_a.observation.metadata["display"] != shown_b.observation.metadata["display"]
        await a.call_tool("computer", action="left_click", coordinate=mine.centre("button"))
        wait_until(lambda: mine.clicks() == 1, "the click to reach session A's form")
        seen = await b.step(
            CallToolAction(tool_name="computer", arguments={"action": "screenshot"})
        )
        assert isinstance(seen.observation, CallToolObservation)
        assert pixel(seen.observation.result, theirs.centre("swatch")) == GREY
        assert theirs.clicks() == 0
    wait_until(
        lambda: active_sessions(base) == 0 and not mine.running() and not theirs.running(),
        "both sessions to close with their apps",
    )


async def test_a_bad_reset_task_is_refused_clearly(serve_process: Serve, form: MakeForm) -> None:
    base = desktop_server(serve_process, form())
    async with MCPToolClient(base_url=base, message_timeout_s=120) as env:
        for task, words in [
            ({"size": "huge"}, r"data\.size: Value error, 'huge' is not WIDTHxHEIGHT"),
            ({"target": "VGA"}, r"data\.target: .*'VGA' is not a scaling target"),
            ({"apps": [["xterm"]]}, r"apps\.0: \['xterm'\] is not one of this server's apps"),
            ({"screen": [800, 600]}, r"data\.screen: Extra inputs are not permitted"),
        ]:
            with pytest.raises(RuntimeError, match=rf"{words}.*\(code: VALIDATION_ERROR\)"):
                await env.reset(**task)
        assert (await env.reset()).observation.metadata["screen_size"] == [800, 600]


async def test_a_stopped_server_leaves_no_app_running(serve_process: Serve, form: MakeForm) -> None:
    app = form()
    command = shlex.join(app.command)
    process, base = serve_process("--env", "desktop", "--app", command)
    env = MCPToolClient(base_url=base, message_timeout_s=120)
    try:
        await env.reset()
        assert app.running()
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) in (0, 128 + signal.SIGTERM)
    finally:
        await env.close()
    assert not app.running()
