"""Desktop sessions (``--env desktop``) on a real server on loopback: the task a reset
starts, bad tasks refused, isolation between sessions, the sandbox behind run_code,
scaling, the idle reaper, the HTTP endpoints, and nothing left running afterwards."""

from __future__ import annotations

import base64
import io
import json
import os
import socket
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from PIL import Image
from pydantic import ValidationError
from typer.testing import CliRunner
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from viewfinder.cli.app import build_app
from viewfinder.core.testing import child_processes, processes_with_argument, wait_until
from viewfinder.server import LocalServer
from viewfinder.server.desktop_task import DesktopTask

MakeForm = Callable[..., Any]
GREY, FIRST = (0x80, 0x80, 0x80), (0xD0, 0x30, 0x30)


def ws_url(server: LocalServer) -> str:
    return server.base_url.replace("http://", "ws://") + "/ws"


def ask(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps(message))
    reply: dict[str, Any] = json.loads(ws.recv(timeout=120))
    return reply


def call(ws: ClientConnection, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool step's observation (``tool_name``, ``result``, ``error``)."""
    step = {"type": "call_tool", "tool_name": tool, "arguments": arguments}
    reply = ask(ws, {"type": "step", "data": step})
    assert reply["type"] == "observation", reply
    observation: dict[str, Any] = reply["data"]["observation"]
    return observation


def frame(observation: dict[str, Any]) -> Image.Image:
    (image,) = [part for part in observation["result"]["content"] if part["type"] == "image"]
    return Image.open(io.BytesIO(base64.b64decode(image["data"]))).convert("RGB")


def health(server: LocalServer) -> dict[str, Any]:
    answer: dict[str, Any] = httpx.get(f"{server.base_url}/health").json()
    return answer


def closed(server: LocalServer, *forms: Any) -> bool:
    return health(server)["active_sessions"] == 0 and not any(form.running() for form in forms)


# -- the task --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "words"),
    [
        ({"size": "huge"}, "'huge' is not WIDTHxHEIGHT"),
        ({"size": [10, 10]}, "10x10 is not a screen size this server starts"),
        ({"size": [1280]}, "is not [width, height]"),
        ({"size": [1280.5, 800]}, "is not [width, height]"),
        ({"target": "VGA"}, "'VGA' is not a scaling target; use auto, XGA (1024x768)"),
        ({"target": [0, 600]}, "greater than or equal to 1"),
        ({"apps": "xterm"}, "apps"),
        ({"apps": [[]]}, "at least 1 item"),
        ({"apps": [["xterm", 5]]}, "valid string"),
        ({"apps": [["x"]] * 9}, "at most 8 items"),
        ({"seed": -1}, "greater than or equal to 0"),
        ({"seed": "5"}, "valid integer"),
        ({"colour": "red"}, "Extra inputs are not permitted"),
    ],
)
def test_a_bad_task_is_refused_naming_the_field(task: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError) as refused:
        DesktopTask.model_validate(task)
    assert words in str(refused.value)
    assert next(iter(task)) in str(refused.value)


def test_a_task_takes_what_it_leaves_out_from_the_servers() -> None:
    server = DesktopTask(apps=[["xterm"]], size=(800, 600), target="XGA")
    assert DesktopTask.model_validate({"size": "1024x768", "target": "wxga"}).over(server) == (
        DesktopTask(apps=[["xterm"]], size=(1024, 768), target="WXGA")
    )
    assert DesktopTask.model_validate({"target": None, "apps": []}).over(server) == DesktopTask(
        apps=[], size=(800, 600), target=None
    )


# -- sessions --------------------------------------------------------------------------------


def test_reset_starts_the_task_and_close_leaves_nothing(
    serve: Callable[..., LocalServer], form: MakeForm
) -> None:
    # displays of other tests' fixtures may run too: count only those started since
    before = child_processes("Xvfb")
    server = serve(env="desktop", allow_any_app=True)
    app = form()
    with connect(ws_url(server), max_size=None) as ws:
        reset = ask(ws, {"type": "reset", "data": {"apps": [app.command], "episode_id": "e1"}})
        metadata = reset["data"]["observation"]["metadata"]
        assert metadata["episode_id"] == "e1"
        assert metadata["display"].startswith(":")
        assert (metadata["screen_size"], metadata["model_size"]) == ([640, 480], [640, 480])
        assert metadata["apps"] == [app.command]
        assert app.running()
        assert (
            call(ws, "computer", action="left_click", coordinate=app.centre("button"))["error"]
            is None
        )
        wait_until(lambda: app.clicks() == 1, "the click to reach the form")
        assert ask(ws, {"type": "state"})["data"] == {"episode_id": "e1", "step_count": 1}
        # a new episode: the old apps end, the task's start afresh
        first = app.running()
        again = ask(ws, {"type": "reset", "data": {"apps": [app.command]}})
        episode = again["data"]["observation"]["metadata"]["episode_id"]
        assert app.running() and not app.running() & first
        assert ask(ws, {"type": "state"})["data"] == {"episode_id": episode, "step_count": 0}
    wait_until(lambda: closed(server, app), "the session to close with its app")
    assert health(server)["displays"]["in_use"] == 0  # the display went back to the pool
    wait_until(
        lambda: len(child_processes("Xvfb") - before) == 1, "the pool to keep its one display"
    )


def test_bad_tasks_are_refused_and_the_session_goes_on(
    serve: Callable[..., LocalServer], form: MakeForm
) -> None:
    server = serve(env="desktop", desktop=DesktopTask(apps=[form("allowed").command]))
    with connect(ws_url(server), max_size=None) as ws:
        for data, words in [
            ({"size": "huge"}, "data.size: Value error, 'huge' is not WIDTHxHEIGHT"),
            ({"target": "VGA"}, "data.target"),
            ({"apps": [["xterm"]]}, "apps.0: ['xterm'] is not one of this server's apps"),
            ({"apps": [[*form("other").command]]}, "--allow-any-app"),
            ({"colour": "red"}, "data.colour: Extra inputs are not permitted"),
        ]:
            reply = ask(ws, {"type": "reset", "data": data})
            assert reply["type"] == "error", data
            assert reply["data"]["code"] == "VALIDATION_ERROR"
            assert words in reply["data"]["message"]
        # the server's own app is allowed, named or not
        allowed = form("allowed")
        for data in ({"apps": [allowed.command]}, {}):
            reply = ask(ws, {"type": "reset", "data": data})
            assert reply["data"]["observation"]["metadata"]["apps"] == [allowed.command]
        assert allowed.running()
    wait_until(lambda: closed(server, allowed), "the session to close with its app")


def test_an_app_that_cannot_start_is_an_execution_error(
    serve: Callable[..., LocalServer], form: MakeForm
) -> None:
    server = serve(env="desktop", allow_any_app=True)
    app = form()
    with connect(ws_url(server), max_size=None) as ws:
        task = {"apps": [app.command, ["no-such-program-here", "--flag"]]}
        reply = ask(ws, {"type": "reset", "data": task})
        assert reply["data"]["code"] == "EXECUTION_ERROR"
        assert "cannot start app 'no-such-program-here --flag'" in reply["data"]["message"]
        assert not app.running()  # what the failed reset started was stopped
        assert ask(ws, {"type": "reset", "data": {"apps": [app.command]}})["type"] == "observation"
    wait_until(lambda: closed(server, app), "the session to close with its app")


def test_two_sessions_see_only_their_own_screen(
    serve: Callable[..., LocalServer], form: MakeForm
) -> None:
    server = serve(env="desktop", allow_any_app=True)
    mine, theirs = form("mine"), form("theirs")
    with connect(ws_url(server), max_size=None) as a, connect(ws_url(server), max_size=None) as b:
        shown_a = ask(a, {"type": "reset", "data": {"apps": [mine.command]}})
        shown_b = ask(b, {"type": "reset", "data": {"apps": [theirs.command]}})
        display_a = shown_a["data"]["observation"]["metadata"]["display"]
        display_b = shown_b["data"]["observation"]["metadata"]["display"]
        assert display_a != display_b
        clicked = call(a, "computer", action="left_click", coordinate=mine.centre("button"))
        wait_until(lambda: mine.clicks() == 1, "the click to reach session A's form")
        assert theirs.clicks() == 0
        swatch = mine.centre("swatch")
        assert frame(clicked).getpixel(tuple(swatch)) == FIRST
        seen_by_b = call(b, "computer", action="screenshot")
        assert frame(seen_by_b).getpixel(tuple(theirs.centre("swatch"))) == GREY
        # each session's sandbox runs on its own display
        ran = call(b, "run_code", code="import os\nprint(os.environ['DISPLAY'])")
        assert ran["result"]["structuredContent"]["stdout"] == f"{display_b}\n"
    wait_until(lambda: closed(server, mine, theirs), "both sessions to close with their apps")


def test_the_target_scales_frames_and_maps_clicks_back(
    serve: Callable[..., LocalServer], form: MakeForm
) -> None:
    before = child_processes("Xvfb")  # other fixtures' displays
    server = serve(env="desktop", allow_any_app=True)
    app = form()
    with connect(ws_url(server), max_size=None) as ws:
        task = {"apps": [app.command], "size": [1280, 960], "target": "XGA"}
        metadata = ask(ws, {"type": "reset", "data": task})["data"]["observation"]["metadata"]
        assert (metadata["screen_size"], metadata["model_size"]) == ([1280, 960], [1024, 768])
        assert health(server)["displays"]["in_use"] == 0  # a display of its own size
        wait_until(
            lambda: len(child_processes("Xvfb") - before) == 2, "its display beside the pool's"
        )
        x, y = app.centre("button")
        at = [x * 1024 // 1280, y * 768 // 960]  # where the model sees the button
        clicked = call(ws, "computer", action="left_click", coordinate=at)
        assert frame(clicked).size == (1024, 768)
        wait_until(lambda: app.clicks() == 1, "the scaled click to reach the button")
    wait_until(lambda: closed(server, app), "the session to close")
    wait_until(lambda: len(child_processes("Xvfb") - before) == 1, "its own display to stop")


def test_run_code_runs_in_the_sessions_sandbox(serve: Callable[..., LocalServer]) -> None:
    server = serve(env="desktop")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    code = (
        "import os, socket\n"
        "print(os.getuid())\n"
        f"try:\n    open('/proc/{os.getpid()}/environ').read()\n    print('read the server')\n"
        "except OSError as exc:\n    print(type(exc).__name__)\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5)\n"
        "    print('reached the server')\n"
        "except OSError as exc:\n    print(type(exc).__name__)\n"
    )
    try:
        with connect(ws_url(server), max_size=None) as ws:
            ask(ws, {"type": "reset"})
            ran = call(ws, "run_code", code=code)
            assert ran["error"] is None, ran
            uid, read, reached = ran["result"]["structuredContent"]["stdout"].split()
            assert int(uid) != os.getuid()  # the session's own user id
            assert read != "read the server" and reached != "reached the server"
            # cancel stops the code; the session goes on
            marker = f"{3000 + uuid.uuid4().int % 10**6 / 1000:.3f}"
            busy = f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'])\nwhile 1: pass\n"
            step = {"type": "call_tool", "tool_name": "run_code"}
            step["arguments"] = {"code": busy, "timeout": 120}
            ws.send(json.dumps({"type": "step", "data": step}))
            wait_until(lambda: processes_with_argument(marker), "the code to be running")
            ws.send(json.dumps({"type": "cancel"}))
            cancelled = json.loads(ws.recv(timeout=60))["data"]["observation"]
            assert not processes_with_argument(marker)
            assert cancelled["error"]["error_type"] == "execution_error"
            assert cancelled["result"]["structuredContent"]["exit_code"] == 130
            after = call(ws, "run_code", code="print('next')")
            assert after["result"]["structuredContent"]["stdout"] == "next\n"
    finally:
        listener.close()
    wait_until(lambda: closed(server), "the session to close")


def test_browser_execute_runs_in_the_sessions_sandbox(serve: Callable[..., LocalServer]) -> None:
    server = serve(env="desktop")
    code = (
        "import os\n"
        "print(os.getuid(), await page.title())\n"
        f"try:\n    open('/proc/{os.getpid()}/environ').read()\n    print('read the server')\n"
        "except OSError as exc:\n    print(type(exc).__name__)\n"
    )
    with connect(ws_url(server), max_size=None) as ws:
        ask(ws, {"type": "reset"})
        page = "data:text/html,<title>sandboxed</title>"
        ran = call(ws, "browser_execute", code=code, url=page)
        assert ran["error"] is None, ran
        said = ran["result"]["content"][0]["text"].split()
        assert int(said[0]) != os.getuid() and said[1] == "sandboxed"
        assert said[2] != "read"
    wait_until(lambda: closed(server), "the session to close")


def test_an_idle_desktop_session_is_reaped_with_its_apps(
    serve: Callable[..., LocalServer], form: MakeForm
) -> None:
    server = serve(env="desktop", allow_any_app=True, idle_timeout_s=0.5, reap_interval_s=0.1)
    app = form()
    with connect(ws_url(server), max_size=None) as ws:
        ask(ws, {"type": "reset", "data": {"apps": [app.command]}})
        assert app.running()
        wait_until(lambda: closed(server, app), "the idle session to be reaped with its app")
        with pytest.raises(ConnectionClosed, match=r"idle for over 0\.5 s"):
            ws.recv(timeout=30)


def test_http_reset_and_step_are_one_shot(
    serve: Callable[..., LocalServer], form: MakeForm
) -> None:
    app = form()
    server = serve(env="desktop", desktop=DesktopTask(apps=[app.command]))
    base = server.base_url
    reset = httpx.post(f"{base}/reset", json={"episode_id": "http"}, timeout=120).json()
    assert set(reset) == {"observation", "reward", "done"}
    assert reset["observation"]["metadata"]["apps"] == [app.command]
    listed = httpx.post(f"{base}/step", json={"action": {"type": "list_tools"}}, timeout=120)
    assert "computer" in {tool["name"] for tool in listed.json()["observation"]["tools"]}
    action = {"type": "call_tool", "tool_name": "screenshot", "arguments": {"max_width": 320}}
    shot = httpx.post(f"{base}/step", json={"action": action}, timeout=120).json()["observation"]
    assert frame(shot).size == (320, 240)
    for body, kind in [
        ({"action": {"type": "call_tool"}}, "missing"),
        ({"action": {"type": "dance"}}, "union_tag_invalid"),
        ({"action": {"type": "list_tools"}, "timeout_s": 5}, "extra_forbidden"),
    ]:
        refused = httpx.post(f"{base}/step", json=body)
        assert refused.status_code == 422
        assert kind in {error["type"] for error in refused.json()["detail"]}
    bad_task = httpx.post(f"{base}/reset", json={"target": "VGA"})
    assert bad_task.status_code == 422
    other_app = httpx.post(f"{base}/reset", json={"apps": [["xterm"]]})
    assert other_app.status_code == 422
    assert "not one of this server's apps" in other_app.json()["detail"][0]["msg"]
    wait_until(lambda: closed(server, app), "the one-shot sessions to close with their apps")


def test_what_a_desktop_server_says_it_is(serve: Callable[..., LocalServer]) -> None:
    server = serve(env="desktop")
    base = server.base_url
    assert health(server)["env"] == "desktop"
    assert httpx.get(f"{base}/metadata").json()["name"] == "viewfinder-desktop"
    assert httpx.get(f"{base}/state").json() == {"episode_id": None, "step_count": 0}
    schema = httpx.get(f"{base}/schema").json()
    assert set(schema) == {"action", "observation", "state"}
    assert {"tool_name", "result", "error"} <= set(schema["observation"]["properties"])


def test_a_code_server_has_no_tool_calls(server: LocalServer) -> None:
    assert health(server)["env"] == "code"
    assert httpx.post(f"{server.base_url}/mcp", json={}).status_code == 404
    with connect(ws_url(server)) as ws:
        reply = ask(ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "method": "tools/list"}})
        assert reply["data"]["code"] == "UNKNOWN_TYPE"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--app", "xterm"], "--app, --target and --allow-any-app are for desktop sessions"),
        (["--env", "browser"], "'browser' is not a choice: use code or desktop"),
        (["--env", "desktop", "--target", "VGA"], "'VGA' is not a scaling target"),
        (["--env", "desktop", "--app", "'unclosed"], "cannot be split"),
    ],
)
def test_serve_refuses_bad_desktop_options(args: list[str], words: str) -> None:
    result = CliRunner().invoke(build_app(), ["serve", *args], env={"COLUMNS": "400"})
    assert result.exit_code == 2
    assert words in result.output
