"""Fixtures for the server tests: real servers on loopback, real workers and displays."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from viewfinder.codeenv import CodeEnvConfig
from viewfinder.codeenv.font_cache import shared_font_cache
from viewfinder.core.testing import child_processes, processes_with_argument, wait_until
from viewfinder.server import LocalServer, ServerSettings


@pytest.fixture(scope="session", autouse=True)
def no_process_left() -> Iterator[None]:
    """After all tests, no Xvfb or worker started by them may still run."""
    before = child_processes("Xvfb") | child_processes("python")
    yield
    shared_font_cache().wait()
    left = (child_processes("Xvfb") | child_processes("python")) - before
    assert not left, f"the tests left processes running: {sorted(left)}"


def small_settings(**changes: Any) -> ServerSettings:
    """One warm 640x480 display, 20 s steps: light enough for a loaded two-core machine."""
    codeenv = changes.pop("codeenv", CodeEnvConfig(timeout_s=20, width=640, height=480))
    base = dict(pool_size=1, display_width=640, display_height=480, max_sessions=4)
    return ServerSettings(**{**base, **changes, "codeenv": codeenv})


@pytest.fixture
def serve() -> Iterator[Callable[..., LocalServer]]:
    """``serve(**settings)`` starts a real server on loopback; it is stopped afterwards,
    and then no worker or display of it may be left."""
    started: list[LocalServer] = []

    def start(**changes: Any) -> LocalServer:
        server = LocalServer(small_settings(**changes)).start()
        started.append(server)
        return server

    before = child_processes("Xvfb") | child_processes("python")
    yield start
    for server in started:
        server.stop()
    shared_font_cache().wait()  # its one-off build is a subprocess of ours
    left = (child_processes("Xvfb") | child_processes("python")) - before
    assert not left, f"a server left processes running: {sorted(left)}"


@pytest.fixture
def server(serve: Callable[..., LocalServer]) -> LocalServer:
    """A server with the small settings."""
    return serve()


@pytest.fixture
def serve_process() -> Iterator[Callable[..., tuple[subprocess.Popen[bytes], str]]]:
    """``serve_process(*args)`` runs ``viewfinder serve --port P ARGS`` as a process of its
    own and returns it, with its base URL, once it answers; afterwards it is stopped
    (SIGTERM, then SIGKILL) if still running."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> tuple[subprocess.Popen[bytes], str]:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        process = subprocess.Popen(
            [sys.executable, "-m", "viewfinder.cli", "serve", "--port", str(port),
             "--pool-size", "1", "--size", "320x240", *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        started.append(process)
        base = f"http://127.0.0.1:{port}"

        def answers() -> bool:
            try:
                return httpx.get(f"{base}/health").status_code in (200, 401)
            except httpx.HTTPError:
                return False

        wait_until(answers, "the server to answer /health", timeout=60)
        return process, base

    yield start
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(30)
        if process.stderr is not None:
            process.stderr.close()


# -- desktop sessions -----------------------------------------------------------------------

#: The Tk form the desktop tests drive (examples/desktop_form.py).
FORM = Path(__file__).resolve().parents[3] / "examples" / "desktop_form.py"


class Form:
    """One instance of the Tk form: its command and the state it writes to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: The command that starts it; its state path marks its processes.
        self.command = [sys.executable, str(FORM), "--state", str(path)]

    def state(self) -> dict[str, Any]:
        """The form's state once it is drawn (it writes its layout then)."""

        def drawn() -> dict[str, Any] | None:
            try:
                state: dict[str, Any] = json.loads(self.path.read_text())
            except (OSError, ValueError):
                return None
            return state if "layout" in state else None

        found: dict[str, Any] = wait_until(drawn, f"the form to write {self.path}")
        return found

    def centre(self, widget: str) -> list[int]:
        """The screen point in the middle of ``widget``."""
        x, y, width, height = self.state()["layout"][widget]
        return [x + width // 2, y + height // 2]

    def clicks(self) -> int:
        clicks: int = self.state()["swatch"]["clicks"]
        return clicks

    def running(self) -> set[int]:
        """The form's live processes."""
        return processes_with_argument(str(self.path))


@pytest.fixture
def form(tmp_path: Path) -> Callable[[str], Form]:
    """``form(name)``: a Tk form writing its state to a file of its own."""
    return lambda name="form": Form(tmp_path / f"{name}.json")


# -- OpenEnv's clients ------------------------------------------------------------------------


@pytest.fixture
def code_observation_client() -> type[Any]:
    """An OpenEnv env client built on viewfinder's ``CodeObservation``, written as OpenEnv's
    env packages write theirs: the observation read as it comes, nothing put back."""
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient

    from viewfinder.codeenv import CodeAction, CodeObservation, CodeState

    class CodeObservationClient(EnvClient[CodeAction, CodeObservation, CodeState]):
        def _step_payload(self, action: CodeAction) -> dict[str, Any]:
            return action.model_dump(exclude_defaults=True)

        def _parse_result(self, payload: dict[str, Any]) -> StepResult[CodeObservation]:
            return StepResult(
                observation=CodeObservation(**payload["observation"]),
                reward=payload.get("reward"),
                done=bool(payload.get("done", False)),
            )

        def _parse_state(self, payload: dict[str, Any]) -> CodeState:
            return CodeState(**payload)

    return CodeObservationClient


#: Two captures, a blue screen and then a red one: the last capture is the red one.
BLUE_THEN_RED = """
import tkinter as tk
root = tk.Tk()
root.overrideredirect(True)
root.geometry("320x240+0+0")
frame = tk.Frame(root, bg="#0000ff", width=320, height=240)
frame.pack()
root.update()
capture_screenshot()
frame.configure(bg="#ff0000")
root.update()
capture_screenshot()
"""


@pytest.fixture
def blue_then_red() -> str:
    """Code that captures a blue 320x240 window, then the same window red."""
    return BLUE_THEN_RED


# -- viewfinder serve --provider ray ------------------------------------------------------------


def _start_ray_server(
    address: str,
    folder: Path,
    max_sessions: int = 4,
    *options: str,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log_path = folder / "server.log"
    with log_path.open("wb") as log_file:  # a file, not a pipe: nothing can block on it
        process = subprocess.Popen(
            [sys.executable, "-m", "viewfinder.cli", "serve", "--port", str(port),
             "--size", "320x240", "--max-sessions", str(max_sessions),
             "--provider", "ray", "--ray-address", address, *options],
            stdout=subprocess.DEVNULL, stderr=log_file, env={**os.environ, **(env or {})},
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {log_path.read_text()[-3000:]}")
        try:
            return httpx.get(f"{base}/health").status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(answers, "the ray server to answer /health", timeout=120)
    return process, base


@pytest.fixture(scope="session")
def start_ray_server() -> Callable[..., tuple[subprocess.Popen[bytes], str]]:
    """``start_ray_server(address, folder, max_sessions, *options, env=None)``:
    ``viewfinder serve --provider ray --ray-address ADDRESS OPTIONS`` on loopback (``env``
    added to its environment), answering; its log goes to ``folder/server.log``. The
    caller stops it."""
    return _start_ray_server
