"""``viewfinder browser exec|launch``, in-process with CliRunner and as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from viewfinder.cdp import CDP_URL_ENV, ChromiumProcess
from viewfinder.cli.app import build_app
from viewfinder.core import Screenshot

runner = CliRunner()


def invoke(*args: str, input: str | None = None) -> Any:
    return runner.invoke(build_app(), list(args), input=input)


def test_browser_is_a_sub_command() -> None:
    result = invoke("browser", "--help")
    assert result.exit_code == 0, result.output
    assert "exec" in result.output and "launch" in result.output


def test_exec_prints_the_output_and_saves_the_screenshots(
    chromium: ChromiumProcess, site: str, tmp_path: Path, layout: Any
) -> None:
    result = invoke(
        "browser", "exec",
        "print(await page.title())\nawait page.screenshot()\nawait page.screenshot(format='jpeg')",
        "--url", f"{site}/color/blue",
        "--cdp-url", chromium.ws_url,
        "--shots", str(tmp_path),
        "--width", "320", "--height", "240",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["blue page", "[2 screenshots attached]"]
    saved = sorted(tmp_path.iterdir())
    assert [path.suffix for path in saved] == [".png", ".jpg"]
    assert all(path.name.startswith("cli-") for path in saved)
    assert f"saved {saved[0]}" in result.stderr
    shot = Screenshot.from_file(saved[0])
    assert shot.size == (320, 240)
    assert shot.pixel(*layout.inside_block()) == layout.colors["blue"]


def test_exec_reads_a_file_or_stdin_and_prints_json(
    chromium: ChromiumProcess, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv(CDP_URL_ENV, chromium.http_url)
    script = tmp_path / "snippet.py"
    script.write_text("return {'answer': await page.evaluate('6 * 7')}\n")
    from_file = invoke("browser", "exec", str(script), "--json")
    assert from_file.exit_code == 0, from_file.output
    summary = json.loads(from_file.stdout)
    assert summary["result"] == {"answer": 42}
    assert summary["session_id"] == "cli"
    assert summary["screenshots"] == []
    from_stdin = invoke("browser", "exec", "-", input="print('from stdin')")
    assert from_stdin.exit_code == 0, from_stdin.output
    assert from_stdin.stdout.startswith("from stdin\n")


def test_exec_exit_status_says_what_failed(chromium: ChromiumProcess, free_port: int) -> None:
    failed = invoke("browser", "exec", "1/0", "--cdp-url", chromium.ws_url)
    assert failed.exit_code == 2
    assert "ZeroDivisionError: division by zero" in failed.stdout
    unreachable = invoke("browser", "exec", "1", "--cdp-url", f"http://127.0.0.1:{free_port}")
    assert unreachable.exit_code == 1
    assert unreachable.stderr.startswith("error: cannot connect to a browser at")
    bad_timeout = invoke("browser", "exec", "1", "--cdp-url", chromium.ws_url, "--timeout", "0")
    assert bad_timeout.exit_code == 1
    assert "timeout must be a number of seconds from 1 to 600" in bad_timeout.stderr


def test_a_shots_folder_that_cannot_be_made_is_an_error_before_the_snippet_runs(
    chromium: ChromiumProcess, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    ran = tmp_path / "ran"
    result = invoke(
        "browser", "exec", f"open({str(ran)!r}, 'w').close()\nawait page.screenshot()",
        "--cdp-url", chromium.ws_url, "--shots", str(blocker / "shots"),
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: cannot write {blocker / 'shots'}")
    assert not ran.exists()


def test_exec_fails_when_the_screenshots_cannot_be_saved(
    chromium: ChromiumProcess, tmp_path: Path
) -> None:
    shots = tmp_path / "shots"
    # the folder is there when the command starts; the snippet puts a file in its place
    snippet = (
        f"import os\nos.rmdir({str(shots)!r})\nopen({str(shots)!r}, 'w').close()\n"
        "await page.screenshot()"
    )
    result = invoke("browser", "exec", snippet, "--cdp-url", chromium.ws_url, "--shots", str(shots))
    assert result.exit_code == 3, result.output
    assert "error: screenshot 1 was not written to" in result.stderr


def test_launch_prints_the_cdp_url_and_stops_after_its_duration(
    no_chromium_left_behind: Path,
) -> None:
    result = invoke("browser", "launch", "--duration", "0")
    assert result.exit_code == 0, result.output
    url = result.stdout.strip()
    assert url.startswith("http://127.0.0.1:")
    assert f"export {CDP_URL_ENV}={url}" in result.stderr


def test_launch_runs_until_ctrl_c_as_a_real_process(no_chromium_left_behind: Path) -> None:
    env = dict(os.environ, TMPDIR=str(no_chromium_left_behind))
    process = subprocess.Popen(
        [sys.executable, "-m", "viewfinder.cli", "browser", "launch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        attached = invoke("browser", "exec", "return 'attached'", "--cdp-url", url)
        assert attached.exit_code == 0, attached.output
        assert attached.stdout.startswith('Returned: "attached"')
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
