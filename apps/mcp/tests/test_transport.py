"""``viewfinder mcp`` over stdio when the client misbehaves: it dies mid-call, sends one
line over the limit, signals twice; and when the X server of ``--display`` restarts.

These speak JSON-RPC on the server's pipes directly (the SDK's client neither sends an
oversized line nor dies on cue), except where a real client's cancellation is the point.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from Xlib import display as xdisplay

from viewfinder.core.testing import wait_until
from viewfinder.mcp.testing import (
    HttpServer,
    StdioServer,
    close_to,
    free_display_name,
    images_of,
    text_of,
    viewfinder_command,
)

ROOT = Path(__file__).resolve().parents[3]
MAX_LINE = 64 * 1024 * 1024


class RawServer:
    """``viewfinder mcp`` on pipes this test writes and reads JSON-RPC lines on."""

    def __init__(self, folder: Path, *args: str) -> None:
        self.workdir = folder / f"workdir-{uuid.uuid4().hex[:8]}"
        self.workdir.mkdir()
        self.log_path = folder / f"{self.workdir.name}.log"
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                [*viewfinder_command(), "mcp", "--workdir", str(self.workdir), *args],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=ROOT,
            )  # fmt: skip
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout: IO[bytes] = self.process.stdout
        self.answers: dict[Any, dict[str, Any]] = {}
        self.notifications: list[str] = []
        self._next_id = 0
        self.initialized = self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        })  # fmt: skip
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()

    def start(self, method: str, params: dict[str, Any]) -> int:
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def answer(self, request_id: Any) -> dict[str, Any]:
        """The answer to ``request_id`` (notifications on the way are passed over)."""
        while request_id not in self.answers:
            line = self.stdout.readline()
            if not line:
                raise AssertionError(f"the server closed its stdout: {self.log()}")
            message = json.loads(line)
            if "id" in message:
                self.answers[message["id"]] = message
            else:
                self.notifications.append(message["method"])
        return self.answers.pop(request_id)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.answer(self.start(method, params))

    def log(self) -> str:
        return self.log_path.read_text()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # the server closes its session on the way out
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)


@pytest.fixture
def raw_server(tmp_path: Path) -> Iterator[Any]:
    started: list[RawServer] = []

    def start(*args: str) -> RawServer:
        server = RawServer(tmp_path, *args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def test_a_client_that_dies_mid_call_is_a_quiet_exit_0(raw_server: Any) -> None:
    server = raw_server("--size", "800x600")
    server.start("tools/call", {"name": "computer", "arguments": {"action": "wait", "duration": 2}})
    # the client is killed: both its pipe ends close while the call runs
    server.stdout.close()
    server.stdin.close()
    assert server.process.wait(60) == 0, server.log()
    assert "stopped (" in server.log()
    assert "Traceback" not in server.log() and "BrokenPipeError" not in server.log()


def test_a_client_gone_from_stdout_while_stdin_stays_open_is_a_quiet_exit_0(
    raw_server: Any,
) -> None:
    server = raw_server("--size", "800x600")
    server.start("tools/call", {"name": "computer", "arguments": {"action": "wait", "duration": 1}})
    server.stdout.close()  # the answer is written to a pipe nobody reads any more
    assert server.process.wait(60) == 0, server.log()
    assert "stopped (the client went away)" in server.log()
    assert "Traceback" not in server.log()


def test_a_line_over_the_limit_is_one_error_answer_and_the_server_reads_on(
    raw_server: Any,
) -> None:
    server = raw_server("--size", "800x600")
    code = "#" * (MAX_LINE + 1024)
    message = {"jsonrpc": "2.0", "id": "huge-1", "method": "tools/call",
               "params": {"name": "run_code", "arguments": {"code": code}}}  # fmt: skip
    writer = threading.Thread(target=server.send, args=(message,), daemon=True)
    writer.start()
    refused = server.answer("huge-1")
    writer.join(60)
    assert refused["error"]["code"] == -32600
    assert "over 64 MiB" in refused["error"]["message"]
    listed = server.request("tools/list", {})
    assert "run_code" in {tool["name"] for tool in listed["result"]["tools"]}
    assert server.process.poll() is None


def test_a_second_sigterm_during_the_cleanup_keeps_exit_status_143(raw_server: Any) -> None:
    server = raw_server("--size", "800x600")
    started = server.request("tools/call", {"name": "screenshot", "arguments": {}})
    assert not started["result"]["isError"], started
    os.kill(server.process.pid, signal.SIGTERM)
    time.sleep(0.3)  # the moment of the second signal is the point of the test
    os.kill(server.process.pid, signal.SIGTERM)
    assert server.process.wait(60) == 143, server.log()
    assert "stopped (signal SIGTERM)" in server.log()


def test_resources_say_they_change_and_notify_when_a_recording_comes_and_goes(
    raw_server: Any,
) -> None:
    server = raw_server("--size", "800x600")
    assert server.initialized["result"]["capabilities"]["resources"]["listChanged"] is True
    changed = "notifications/resources/list_changed"
    started = server.request("tools/call", {"name": "record_start", "arguments": {"folder": "r"}})
    assert not started["result"]["isError"], started
    assert server.notifications.count(changed) == 1
    listed = server.request("resources/list", {})["result"]["resources"]
    assert "viewfinder://session/recording/manifest.jsonl" in [item["uri"] for item in listed]
    stopped = server.request("tools/call", {"name": "record_stop", "arguments": {}})
    assert not stopped["result"]["isError"], stopped
    assert server.notifications.count(changed) == 2
    # a folder that holds a recording: the error names this tool's argument, not the
    # library's resume=True
    again = server.request("tools/call", {"name": "record_start", "arguments": {"folder": "r"}})
    text = again["result"]["content"][0]["text"]
    assert again["result"]["isError"] and "resume" not in text
    assert "r already holds a recording" in text and "give another folder" in text
    assert server.notifications.count(changed) == 2  # nothing came or went


def test_a_second_sigterm_keeps_exit_status_143_over_http_too(tmp_path: Path) -> None:
    server = HttpServer(tmp_path, "--size", "800x600", cwd=ROOT)
    connection = server.connect()
    try:
        assert not connection.call("screenshot").is_error
    finally:
        connection.close()
    server.process.send_signal(signal.SIGTERM)
    time.sleep(0.3)  # the moment of the second signal is the point of the test
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(60) == 143, server.log()
    assert "stopped;" in server.log()


def _keys_down(display: str) -> bool:
    connection = xdisplay.Display(display)
    try:
        return any(connection.query_keymap())
    finally:
        connection.close()


def _display_of(result: Any) -> str:
    text = text_of(result)
    return text.split("display ", 1)[1].split(" ", 1)[0]


@pytest.mark.parametrize("action", ["hold_key", "wait"])
def test_a_cancelled_wait_or_hold_key_ends_and_the_next_call_is_answered(
    tmp_path: Path, action: str
) -> None:
    server = StdioServer(tmp_path, "--size", "810x610", "--log-level", "debug", cwd=ROOT)
    try:
        display = _display_of(server.call("screenshot"))
        client = server.connection.client
        arguments = {"action": action, "duration": 100}
        if action == "hold_key":
            arguments["text"] = "shift"
        call = server.connection.portal.start_task_soon(
            lambda: client.call_tool("computer", arguments)
        )
        if action == "hold_key":
            wait_until(lambda: _keys_down(display), "the key to be held")
        else:
            wait_until(lambda: "calling computer" in server.log(), "the call to start")
        call.cancel()  # notifications/cancelled
        if action == "hold_key":
            wait_until(lambda: not _keys_down(display), "the key to be released", timeout=20)
        answered: list[Any] = []
        threading.Thread(
            target=lambda: answered.append(server.call("computer", {"action": "cursor_position"})),
            daemon=True,
        ).start()
        # far sooner than the 100 s the cancelled call would have taken
        (after,) = wait_until(lambda: answered, "the next call's answer", timeout=30)
        assert not after.is_error, text_of(after)
        assert "X=" in text_of(after)
    finally:
        server.close()


@pytest.fixture
def free_display() -> str:
    return free_display_name(841)


def _xvfb(display: str, colour: int) -> tuple[subprocess.Popen[bytes], Any]:
    """An X server on ``display`` showing a window of ``colour`` (0xRRGGBB) all over it,
    and the connection that keeps the window."""
    xvfb = subprocess.Popen(
        ["Xvfb", display, "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    socket = Path(f"/tmp/.X11-unix/X{display.lstrip(':')}")
    wait_until(socket.exists, "the X server")
    connection = wait_until(lambda: _connect(display), "a connection to the X server")
    screen = connection.screen()
    window = screen.root.create_window(
        0, 0, 1024, 768, 0, screen.root_depth, background_pixel=colour, override_redirect=True
    )
    window.map()
    connection.sync()
    return xvfb, connection


def _connect(display: str) -> Any:
    try:
        return xdisplay.Display(display)
    except Exception:
        return None


def test_every_tool_reconnects_to_a_display_whose_x_server_restarted(
    tmp_path: Path, free_display: str
) -> None:
    first, first_window = _xvfb(free_display, 0x2050C0)
    server = StdioServer(tmp_path, "--display", free_display, cwd=ROOT)
    try:
        before = server.call("screenshot")
        assert close_to(images_of(before)[0].getpixel((10, 10)), (0x20, 0x50, 0xC0))
        assert not server.call("computer", {"action": "screenshot"}).is_error
        first_window.close()
        first.terminate()
        first.wait(10)
        wait_until(lambda: not Path(f"/tmp/.X11-unix/X{free_display[1:]}").exists(), "the end")
        second, second_window = _xvfb(free_display, 0xC03020)
        try:
            for tool, arguments in (("screenshot", {}), ("computer", {"action": "screenshot"})):
                result = server.call(tool, arguments)
                assert not result.is_error, f"{tool}: {text_of(result)}"
                assert close_to(images_of(result)[0].getpixel((10, 10)), (0xC0, 0x30, 0x20))
        finally:
            server.close()
            second_window.close()
            second.terminate()
            second.wait(10)
    finally:
        server.close()  # again, when the first display's part failed: closes once
        if first.poll() is None:
            first.terminate()
            first.wait(10)
