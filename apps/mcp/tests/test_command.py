"""``viewfinder mcp``'s options: what it refuses before anything starts, and the config
snippets of --print-config (in-process, with typer's runner)."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.mcp.options import HttpOptions, McpOptionError

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[3]
FORM = ROOT / "examples" / "desktop_form.py"


def invoke(*args: str, **kwargs: Any) -> Any:
    return runner.invoke(build_app(), ["mcp", *args], **kwargs)


def test_listening_beyond_loopback_without_a_token_is_refused() -> None:
    result = invoke("--http", "--host", "0.0.0.0", env={"VIEWFINDER_MCP_TOKEN": ""})
    assert result.exit_code == 2
    assert "listening on 0.0.0.0 lets other machines" in result.output
    assert "give a token" in result.output


def test_a_token_opens_other_addresses_and_loopback_needs_none() -> None:
    assert HttpOptions(host="0.0.0.0", token="long-enough-token").token
    assert HttpOptions(host="::1").token is None
    assert HttpOptions(host="localhost").url(4321) == "http://localhost:4321/mcp"
    with pytest.raises(McpOptionError, match="at least 8 characters"):
        HttpOptions(host="127.0.0.1", token="short")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--size", "big"], "--size: 'big' is not WIDTHxHEIGHT"),
        (["--max-size", "10x10"], "each side must be 16 to 32767 pixels"),
        (["--browser", "firefox"], "--browser: 'firefox' is not auto, off or a DevTools URL"),
        (["--display", "localhost:0"], "--display: 'localhost:0' is not a local display"),
        (["--display", ":5", "--size", "800x600"], "not to --display"),
        (["--port", "9000", "--token", "x" * 8], "--port, --token apply to --http only"),
        (["--", "no-such-program-here", "x"], "no program 'no-such-program-here' on PATH"),
        (["--app", "'unclosed"], "cannot be split"),
        (["--print-config", "emacs"], "'emacs' is not a client this knows"),
        (
            ["--print-config", "claude-desktop", "--http"],
            "--http: Claude Desktop's config file starts local servers over stdio and does "
            "not read a URL: drop --http",
        ),
        (["--client", "netscape"], "--client: 'netscape' is not one of claude-desktop"),
    ],
)
def test_options_that_cannot_work_are_refused_with_what_to_write(
    args: list[str], message: str
) -> None:
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())


def test_print_config_claude_starts_this_command_with_its_options() -> None:
    result = invoke(
        "--print-config", "claude", "--size", "1600x1000", "--browser", "off",
        "--", sys.executable, "examples/desktop_form.py",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    config = json.loads(result.stdout)
    entry = config["mcpServers"]["viewfinder"]
    assert Path(entry["command"]).is_absolute()
    assert entry["args"][-11:] == [
        "mcp", "--size", "1600x1000",
        # made absolute: a client starts the server elsewhere, with a PATH of its own
        "--app", shlex.join([shutil.which(sys.executable) or sys.executable, str(FORM)]),
        # the limits of results the client takes (Claude Code's, the tighter)
        "--client", "claude-code",
        "--browser", "off",
        # and in a folder of its own (Claude Desktop: /), so the workdir is pinned
        "--workdir", str(Path.cwd().resolve()),
    ]  # fmt: skip


def test_print_config_for_cursor_and_vscode_over_stdio() -> None:
    cursor = json.loads(invoke("--print-config", "cursor").stdout)
    assert cursor["mcpServers"]["viewfinder"]["args"][-5:] == [
        "mcp", "--client", "cursor", "--workdir", str(Path.cwd().resolve())
    ]  # fmt: skip
    vscode = json.loads(invoke("--print-config", "vscode", "--max-size", "none").stdout)
    entry = vscode["servers"]["viewfinder"]
    assert entry["type"] == "stdio"
    assert entry["args"][-7:-2] == ["mcp", "--client", "generic", "--max-size", "none"]


def test_print_config_pins_the_workdir_given_relative_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path)
    result = invoke("--print-config", "claude", "--workdir", "work")
    assert result.exit_code == 0, result.output
    args = json.loads(result.stdout)["mcpServers"]["viewfinder"]["args"]
    assert args[args.index("--workdir") + 1] == str(tmp_path / "work")


@pytest.mark.parametrize("folder", ["/", "~", "/home", "/root"])
def test_a_workdir_of_the_root_or_a_home_folder_is_refused(folder: str) -> None:
    result = invoke("--print-config", "claude", "--workdir", str(Path(folder).expanduser()))
    assert result.exit_code == 2, result.output
    assert "would give the tools every file below it" in " ".join(result.output.split())


def test_started_in_the_root_folder_without_a_workdir_is_refused_as_claude_desktop_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir("/")
    result = invoke("--print-config", "claude")
    output = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "--workdir: the current folder, /, would give the tools every file" in output


def test_print_config_over_http_names_a_url_a_client_can_reach() -> None:
    env = {"VIEWFINDER_MCP_TOKEN": "the-secret-token-123"}
    anywhere = invoke("--print-config", "claude", "--http", "--host", "0.0.0.0", "--port",
                      "8124", env=env)  # fmt: skip
    assert anywhere.exit_code == 0, anywhere.output
    assert json.loads(anywhere.stdout)["mcpServers"]["viewfinder"]["url"] == (
        "http://127.0.0.1:8124/mcp"
    )
    six = invoke("--print-config", "cursor", "--http", "--host", "::", "--port", "8125", env=env)
    assert json.loads(six.stdout)["mcpServers"]["viewfinder"]["url"] == "http://[::1]:8125/mcp"
    free = invoke("--print-config", "claude", "--http", "--port", "0")
    assert free.exit_code == 2
    assert "--port: 0 picks a free port when the server starts" in " ".join(free.output.split())


def test_print_config_over_http_never_writes_the_token_into_the_file() -> None:
    token = "the-secret-token-123"
    env = {"VIEWFINDER_MCP_TOKEN": token}
    claude = invoke("--print-config", "claude", "--http", "--port", "8123", env=env)
    cursor = invoke("--print-config", "cursor", "--http", "--port", "8123", env=env)
    vscode = invoke("--print-config", "vscode", "--http", "--port", "8123", env=env)
    for result in (claude, cursor, vscode):
        assert result.exit_code == 0, result.output
        assert token not in result.stdout
    entry = json.loads(claude.stdout)["mcpServers"]["viewfinder"]
    assert entry == {
        "type": "http",
        "url": "http://127.0.0.1:8123/mcp",
        "headers": {"Authorization": "Bearer ${VIEWFINDER_MCP_TOKEN}"},
    }
    entry = json.loads(cursor.stdout)["mcpServers"]["viewfinder"]
    assert entry["url"] == "http://127.0.0.1:8123/mcp"
    assert entry["headers"]["Authorization"] == "Bearer ${env:VIEWFINDER_MCP_TOKEN}"
    config = json.loads(vscode.stdout)
    assert config["servers"]["viewfinder"]["headers"]["Authorization"].endswith(
        "${input:viewfinder-token}"
    )
    assert config["inputs"][0]["password"] is True
    no_token = json.loads(
        invoke("--print-config", "vscode", "--http", env={"VIEWFINDER_MCP_TOKEN": ""}).stdout
    )
    assert "headers" not in no_token["servers"]["viewfinder"] and "inputs" not in no_token


def test_the_command_is_listed_by_viewfinder_help() -> None:
    result = runner.invoke(build_app(), ["--help"])
    assert result.exit_code == 0
    assert "mcp" in result.output


@pytest.mark.parametrize(
    ("client", "profile"),
    [
        ("claude", "claude-code"),
        ("claude-code", "claude-code"),
        ("claude-desktop", "claude-desktop"),
        ("cursor", "cursor"),
        ("vscode", "generic"),
    ],
)
def test_print_config_writes_the_result_budget_of_its_client(client: str, profile: str) -> None:
    config = json.loads(invoke("--print-config", client).stdout)
    entry = (config.get("mcpServers") or config["servers"])["viewfinder"]
    assert entry["args"][entry["args"].index("--client") + 1] == profile
    chosen = json.loads(invoke("--print-config", client, "--client", "generic").stdout)
    entry = (chosen.get("mcpServers") or chosen["servers"])["viewfinder"]
    assert entry["args"][entry["args"].index("--client") + 1] == "generic"
