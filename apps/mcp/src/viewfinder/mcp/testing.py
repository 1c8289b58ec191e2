"""``viewfinder mcp`` as a real process, driven by the MCP SDK's own client: for tests
and benchmarks.

The SDK's client is asynchronous; :class:`Connection` keeps one open on an event loop
thread of its own, so a test calls it like a function and a module can share a server::

    server = StdioServer(tmp_path, "--size", "1280x800", "--", "python", "form.py")
    result = server.call("screenshot")          # an mcp.types.CallToolResult
    images_of(result)[0].getpixel((10, 10))
    server.close()                              # the client closes the server's stdin
"""

from __future__ import annotations

import base64
import io
import os
import re
import subprocess
import sys
import uuid
from contextlib import AbstractAsyncContextManager, ExitStack
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx2
from PIL import Image

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, ImageContent, TextContent
from viewfinder.core.testing import processes_with_argument, running, wait_until


def viewfinder_command() -> list[str]:
    """The `viewfinder` executable of this environment, else the CLI module."""
    beside = Path(sys.executable).with_name("viewfinder")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "viewfinder.cli"]


# -- what a result holds ----------------------------------------------------------------


def text_of(result: CallToolResult) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, TextContent))


def images_of(result: CallToolResult) -> list[Image.Image]:
    return [
        Image.open(io.BytesIO(base64.b64decode(part.data))).convert("RGB")
        for part in result.content
        if isinstance(part, ImageContent)
    ]


def image_of_blob(blob: str) -> Image.Image:
    """A resource's base64 image."""
    return Image.open(io.BytesIO(base64.b64decode(blob))).convert("RGB")


def close_to(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 12) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], colour, strict=True))


# -- processes ----------------------------------------------------------------------------


def descendants(pid: int) -> dict[int, str]:
    """Every live process below ``pid`` (children, theirs, ...), with its program."""
    parents: dict[int, int] = {}
    programs: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv0 = (entry / "cmdline").read_bytes().split(b"\0", 1)[0]
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":
            continue
        parents[int(entry.name)] = int(fields[1])
        programs[int(entry.name)] = os.path.basename(argv0.decode(errors="replace"))
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in found:
                found[child] = programs[child]
                frontier.append(child)
    return found


def free_display_name(first: int, count: int = 100) -> str:
    """A display name ``:N`` (``first <= N < first + count``) no X server uses now; tests
    that start their own take numbers from ranges of their own."""
    number = next(
        n
        for n in range(first, first + count)
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists()
    )
    return f":{number}"


def still_running(processes: dict[int, str]) -> dict[int, str]:
    return {pid: name for pid, name in processes.items() if running(pid)}


# -- a connection held open by a thread ---------------------------------------------------


class Connection:
    """An MCP SDK client session kept open on an event loop thread; calls block."""

    def __init__(self, client: Client, *first: AbstractAsyncContextManager[Any]) -> None:
        self._stack = ExitStack()
        self.portal = self._stack.enter_context(anyio.from_thread.start_blocking_portal())
        self.client = client
        try:
            # ``first`` (an HTTP client) is entered before the MCP client and left after it
            for context in (*first, client):
                self._stack.enter_context(self.portal.wrap_async_context_manager(context))
        except BaseException:
            self._stack.close()
            raise

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return self.portal.call(lambda: self.client.call_tool(name, arguments or {}))

    def list_tools(self) -> Any:
        return self.portal.call(self.client.list_tools)

    def list_resources(self) -> Any:
        return self.portal.call(self.client.list_resources)

    def read_resource(self, uri: str) -> Any:
        return self.portal.call(lambda: self.client.read_resource(uri))

    @property
    def protocol_version(self) -> str:
        return self.client.protocol_version

    def close(self) -> None:
        self._stack.close()


class StdioServer:
    """``viewfinder mcp ARGS`` started by the SDK's stdio client, and that connection.

    The server's own command line carries a folder unique to it (``--workdir``), by
    which the test finds its process and what runs below it.
    """

    def __init__(
        self,
        folder: Path,
        *args: str,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.workdir = folder / f"workdir-{uuid.uuid4().hex[:8]}"
        self.workdir.mkdir(parents=True)
        self.log_path = folder / f"{self.workdir.name}.log"
        self._log = self.log_path.open("w")
        command, *prefix = viewfinder_command()
        params = StdioServerParameters(
            command=command,
            args=[*prefix, "mcp", "--workdir", str(self.workdir), *args],
            cwd=str(cwd or Path.cwd()),
            env={**os.environ, **(env or {})},
        )
        self.connection = Connection(Client(stdio_client(params, errlog=self._log)))
        self.pid = wait_until(lambda: processes_with_argument(str(self.workdir)), "the server")
        (self.pid,) = self.pid

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        return self.connection.call(name, arguments)

    def processes(self) -> dict[int, str]:
        """What runs below the server now."""
        return descendants(self.pid)

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def close(self) -> None:
        try:
            self.connection.close()
        finally:
            self._log.close()


class HttpServer:
    """``viewfinder mcp --http --port 0 ARGS`` as a process; connect() opens clients."""

    def __init__(
        self,
        folder: Path,
        *args: str,
        token: str | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.workdir = folder / f"workdir-{uuid.uuid4().hex[:8]}"
        self.workdir.mkdir(parents=True)
        self.log_path = folder / f"{self.workdir.name}.log"
        self.token = token
        env = {**os.environ, **(env or {})}
        if token is not None:
            env["VIEWFINDER_MCP_TOKEN"] = token
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                [*viewfinder_command(), "mcp", "--http", "--port", "0",
                 "--workdir", str(self.workdir), *args],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                cwd=cwd or Path.cwd(), env=env,
            )  # fmt: skip
        self.pid = self.process.pid
        self.url = wait_until(self._url, "the server to listen", timeout=60)

    def _url(self) -> str | None:
        if self.process.poll() is not None:
            raise AssertionError(f"the server exited: {self.log()}")
        match = re.search(r"on (http://\S+)", self.log())
        return match[1] if match else None

    def log(self) -> str:
        return self.log_path.read_text()

    def connect(self, token: str | None = None, *, terminate_on_close: bool = True) -> Connection:
        """A client session; ``terminate_on_close=False``: one that leaves without a word."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
        transport = streamable_http_client(
            self.url, http_client=http, terminate_on_close=terminate_on_close
        )
        return Connection(Client(transport), http)

    def processes(self) -> dict[int, str]:
        return descendants(self.pid)

    def stop(self, signum: int = 15) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signum)
        try:
            return self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
