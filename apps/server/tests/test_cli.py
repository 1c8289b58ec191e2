"""``viewfinder serve``: refuses an open bind without a token, serves, and shuts down clean."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core.testing import child_processes, wait_until

runner = CliRunner()


def invoke(*args: str, **kwargs: Any) -> Any:
    return runner.invoke(build_app(), list(args), **kwargs)


def test_serve_beyond_loopback_without_a_token_is_refused() -> None:
    result = invoke("serve", "--host", "0.0.0.0", env={"VIEWFINDER_SERVER_TOKEN": ""})
    assert result.exit_code == 1
    assert "listening on 0.0.0.0 lets other machines run code here; give a token" in result.output


def test_serve_rejects_a_bad_size() -> None:
    result = invoke("serve", "--size", "0x0")
    assert result.exit_code == 2
    assert "is not WIDTHxHEIGHT" in result.output


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_runs_a_server_that_stops_clean_on_sigterm() -> None:
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "viewfinder.cli",
            "serve",
            "--port",
            str(port),
            "--pool-size",
            "1",
            "--size",
            "320x240",
            "--max-sessions",
            "2",
            "--max-step-timeout",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:

        def healthy() -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/health").is_success
            except httpx.HTTPError:
                return False

        wait_until(healthy, "the server to answer /health", timeout=60)
        step = httpx.post(
            f"http://127.0.0.1:{port}/step", json={"action": {"code": "print(7)"}}, timeout=60
        )
        assert step.json()["observation"]["stdout"] == "7\n"
        # a client that asks for an hour gets the server's maximum, and is told
        long = httpx.post(
            f"http://127.0.0.1:{port}/step",
            json={"action": {"code": "while True: pass"}, "timeout_s": 3600},
            timeout=60,
        ).json()
        assert long["observation"]["exit_code"] == 124
        assert "at most 2 s" in long["observation"]["metadata"]["timeout_clamped"]
        displays = child_processes("Xvfb", parent=process.pid)
        assert displays
    finally:
        os.kill(process.pid, signal.SIGTERM)
        code = process.wait(timeout=60)
    log = process.stderr.read().decode() if process.stderr else ""
    # uvicorn shuts down, then re-raises the signal it caught: the command exits with
    # 128 + SIGTERM, as every viewfinder command ended by SIGTERM does
    assert code in (0, 128 + signal.SIGTERM), log
    assert "Application shutdown complete" in log
    for pid in displays:
        stat = Path(f"/proc/{pid}/stat")
        assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def _one_line_error(args: list[str]) -> str:
    """``viewfinder serve ARGS`` as a user runs it: status 2 and one line on stderr, no
    traceback (a real process: uvicorn's and Ray's output would show here)."""
    done = subprocess.run(
        [sys.executable, "-m", "viewfinder.cli", "serve", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "RAY_ADDRESS": ""},
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""
    return lines[0]


def test_serve_says_a_bad_port_in_one_line() -> None:
    assert _one_line_error(["--port", "99999"]) == "error: --port: 99999 is not a port (0 to 65535)"


def test_serve_checks_its_desktop_apps_at_start() -> None:
    said = _one_line_error(["--env", "desktop", "--app", "no-such-program --flag"])
    assert said.startswith("error: --app: cannot start app 'no-such-program --flag'")
    assert "Install it, or give the full path" in said


def test_a_provider_that_cannot_start_is_one_line() -> None:
    said = _one_line_error(["--provider", "ray", "--ray-address", "ray://127.0.0.1:1"])
    assert said.startswith("error: --provider: the 'ray' session provider cannot start: ")
    assert "needs Ray's client" in said
