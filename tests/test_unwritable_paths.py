"""Every command that writes files says in one line when it cannot, and leaves nothing.

A folder that cannot be made (under /proc) or a file inside a file (/dev/null/...) is a
user's mistake: the answer is an `error:` line (or a usage error) naming the path, exit
status 1 or 2, never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.xvfb import Display

BAD = ["/proc/viewfinder-nope/out", "/dev/null/out"]


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(320, 200) as started:
        yield started


def viewfinder(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "viewfinder.cli", *args],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **(env or {})},
    )


def assert_one_clear_line(result: subprocess.CompletedProcess[str], path: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode in (1, 2), output
    assert "Traceback" not in output, output
    assert path.split("/")[1] in output, output  # the path, or its first part, is named


@pytest.mark.parametrize("bad", BAD)
def test_capture(display: Display, bad: str) -> None:
    result = viewfinder("capture", "--display", display.name, "-o", f"{bad}/shot.png")
    assert_one_clear_line(result, bad)
    assert result.stderr.startswith("error: cannot write")


@pytest.mark.parametrize("bad", BAD)
def test_exec(tmp_path: Path, bad: str) -> None:
    program = tmp_path / "p.py"
    program.write_text("print('hi')\n")
    assert_one_clear_line(viewfinder("exec", str(program), "--out", bad), bad)


@pytest.mark.parametrize("bad", BAD)
def test_record(display: Display, bad: str) -> None:
    assert_one_clear_line(viewfinder("record", "--display", display.name, "--out", bad), bad)


@pytest.mark.parametrize("bad", BAD)
def test_browser_shots(bad: str) -> None:
    result = viewfinder(
        "browser", "exec", "await page.screenshot()", "--url", "data:text/html,hi",
        "--shots", bad,
    )  # fmt: skip
    assert_one_clear_line(result, bad)


@pytest.mark.parametrize("bad", BAD)
def test_display_state(bad: str) -> None:
    result = viewfinder("display", "start", env={"VIEWFINDER_STATE_DIR": bad})
    assert_one_clear_line(result, bad)
