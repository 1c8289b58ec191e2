"""What the server says about session isolation, its flags, and keeping the token off
the command line."""

from __future__ import annotations

import signal
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.codeenv import CodeEnvConfig
from viewfinder.server import CodingEnv, LocalServer, ServerSettings
from viewfinder.server.app import check_isolation
from viewfinder.server.errors import IsolationUnavailableError


def test_health_reports_the_isolation(server: LocalServer) -> None:
    isolation = httpx.get(f"{server.base_url}/health").json()["isolation"]
    assert isolation == {"enabled": True, "missing": [], "reason": None, "network": "none"}


def test_with_host_network_sessions_reach_loopback(serve: Callable[..., LocalServer]) -> None:
    server = serve(
        codeenv=CodeEnvConfig(timeout_s=20, width=640, height=480, session_network="host")
    )
    assert httpx.get(f"{server.base_url}/health").json()["isolation"]["network"] == "host"
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        with CodingEnv(server.base_url) as env:
            env.reset()
            code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5)"
            assert env.step(code).observation.exit_code == 0
    finally:
        listener.close()


def test_required_isolation_that_is_missing_is_an_error() -> None:
    settings = ServerSettings(codeenv=CodeEnvConfig(isolation=False, require_isolation=True))
    with pytest.raises(IsolationUnavailableError, match=r"not isolated.*turned off"):
        check_isolation(settings)
    report = check_isolation(ServerSettings(codeenv=CodeEnvConfig(isolation=False)))
    assert report["enabled"] is False and report["network"] == "host"


def test_a_bad_session_network_is_refused() -> None:
    result = CliRunner().invoke(build_app(), ["serve", "--session-network", "lan"])
    assert result.exit_code == 2
    assert "'lan' is not a choice: use none or host" in result.output


def test_token_and_token_file_together_are_refused(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("a-token-of-twenty-chars\n")
    result = CliRunner().invoke(
        build_app(), ["serve", "--token", "x" * 12, "--token-file", str(token_file)]
    )
    assert result.exit_code == 2 and "not both" in result.output
    # wide enough that a long pytest folder name does not wrap the message
    wide = {"COLUMNS": "400"}
    empty = tmp_path / "empty"
    empty.write_text("\n")
    result = CliRunner().invoke(build_app(), ["serve", "--token-file", str(empty)], env=wide)
    assert result.exit_code == 2 and "is empty" in result.output
    missing = tmp_path / "no-such-file"
    result = CliRunner().invoke(build_app(), ["serve", "--token-file", str(missing)], env=wide)
    assert result.exit_code == 2 and "cannot read the token from" in result.output


def test_a_token_file_keeps_the_token_off_the_command_line(
    tmp_path: Path, serve_process: Callable[..., tuple[subprocess.Popen[bytes], str]]
) -> None:
    secret = "token-from-a-file-1234"
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n")
    token_file.chmod(0o600)
    process, base = serve_process("--token-file", str(token_file))
    assert secret.encode() not in Path(f"/proc/{process.pid}/cmdline").read_bytes()
    assert httpx.get(f"{base}/health").status_code == 401
    headers = {"Authorization": f"Bearer {secret}"}
    assert httpx.get(f"{base}/health", headers=headers).status_code == 200


def test_a_token_on_the_command_line_is_warned_about(
    serve_process: Callable[..., tuple[subprocess.Popen[bytes], str]],
) -> None:
    secret = "token-on-the-command-line"
    process, base = serve_process("--token", secret)
    headers = {"Authorization": f"Bearer {secret}"}
    assert httpx.get(f"{base}/health", headers=headers).status_code == 200
    process.send_signal(signal.SIGTERM)
    process.wait(60)
    assert process.stderr is not None
    log = process.stderr.read().decode()
    assert "warning: a token given with --token is on the command line" in log
