"""``run_code`` in the tool registry: runs in an isolated worker on the session's display."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.codeenv import CodeEnvSandbox
from viewfinder.codeenv.tools import DISPLAY_VALUE
from viewfinder.core import ToolContext, call_tool, tool_registry
from viewfinder.core.testing import escape_probe, processes_with_argument, running, wait_until
from viewfinder.xvfb import Display, DisplayPool

BLUE_WINDOW = """
import tkinter as tk
root = tk.Tk()
root.geometry("200x100+10+20")
tk.Frame(root, bg="#0000ff", width=200, height=100).pack()
root.update()
capture_screenshot()
print("drawn")
"""


@pytest.fixture(scope="module")
def display(pool: DisplayPool) -> Iterator[Display]:
    with pool.display() as display:
        yield display


@pytest.fixture(scope="module")
def context(display: Display) -> Iterator[ToolContext]:
    """One session for the module: its sandbox runs on ``display``."""
    with ToolContext(display=display.name, values={DISPLAY_VALUE: display}) as context:
        yield context


def test_run_code_is_registered_as_a_code_running_tool() -> None:
    tool = tool_registry()["run_code"]
    assert tool.runs_code
    assert tool.plugin == "codeenv"
    assert set(tool.input_schema()["properties"]) == {"code", "timeout"}


def test_run_code_draws_on_the_session_display_and_returns_the_capture(
    context: ToolContext, display: Display
) -> None:
    result = call_tool("run_code", {"code": BLUE_WINDOW}, context)
    assert not result.is_error, result.text
    assert "drawn" in result.text
    assert result.structured is not None
    assert result.structured["exit_code"] == 0
    (shot,) = result.images
    assert shot.size == display.size
    assert shot.to_pil().convert("RGB").getpixel((110, 70)) == (0, 0, 255)
    assert shot.to_pil().convert("RGB").getpixel((300, 300)) != (0, 0, 255)


def test_globals_persist_and_attach_image_hands_back_any_image(context: ToolContext) -> None:
    call_tool("run_code", {"code": "colour = (255, 0, 0)"}, context)
    result = call_tool(
        "run_code",
        {
            "code": "from PIL import Image\n"
            "import io\n"
            "out = io.BytesIO()\n"
            "Image.new('RGB', (6, 4), colour).save(out, 'JPEG')\n"
            "attach_image(out.getvalue())\n"
            "attach_image(Image.new('L', (3, 3), 200))\n"
        },
        context,
    )
    assert not result.is_error, result.text
    first, second = result.images
    assert first.size == (6, 4)
    red, green, blue = first.to_pil().convert("RGB").getpixel((3, 2))
    assert red > 240 and green < 20 and blue < 20
    assert second.to_pil().convert("RGB").getpixel((1, 1)) == (200, 200, 200)
    bad = call_tool("run_code", {"code": "attach_image('not an image')"}, context)
    assert bad.is_error
    assert "pass encoded image bytes" in bad.text


def test_failures_are_error_results_and_the_next_run_works(context: ToolContext) -> None:
    failed = call_tool("run_code", {"code": "raise ValueError('nope')"}, context)
    assert failed.is_error
    assert "ValueError: nope" in failed.text
    assert failed.structured is not None and failed.structured["exit_code"] == 1
    timed_out = call_tool(
        "run_code", {"code": "import time; time.sleep(30)", "timeout": 1}, context
    )
    assert timed_out.is_error
    assert "(timed out)" in timed_out.text
    bad = call_tool("run_code", {"code": "", "timeout": -1}, context)
    assert bad.is_error
    assert "code:" in bad.text and "timeout:" in bad.text
    assert call_tool("run_code", {"code": "print(6 * 7)"}, context).text.count("42") == 1


def test_the_sandbox_cannot_read_the_servers_files_or_reach_its_sockets(
    context: ToolContext, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the server's secret")
    secret.chmod(0o600)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        code = escape_probe(secret, port)
        result = call_tool("run_code", {"code": code}, context)
        # the same file and socket are there for this process
        assert secret.read_text() == "the server's secret"
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert "the server's secret" not in result.text
    assert "read refused" in result.text
    assert "connect refused" in result.text
    assert "connected" not in result.text.replace("connect refused", "")


def test_a_host_sandbox_is_used_and_closing_the_context_leaves_nothing(
    display: Display,
) -> None:
    sandbox = CodeEnvSandbox(display)
    with ToolContext(display=display.name, sandbox=sandbox, require_sandbox=True) as context:
        code = "import subprocess; subprocess.Popen(['sleep', '1009.5']); print('started')"
        result = call_tool("run_code", {"code": code}, context)
        assert "started" in result.text
        assert context.get_resource("codeenv.sandbox") is None  # the host's was used
        assert sandbox.environment is not None and sandbox.environment.worker is not None
        worker = sandbox.environment.worker.pid
        assert running(worker)
        # Popen returns once the exec is under way; the new program's arguments show in
        # /proc a moment later
        wait_until(lambda: processes_with_argument("1009.5"), "the sleep the code started")
    sandbox.close()
    assert display.is_alive()  # a lent display outlives the sandbox
    assert not running(worker)
    assert not processes_with_argument("1009.5")
