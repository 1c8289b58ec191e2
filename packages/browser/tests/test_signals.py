"""`browser exec` and `browser launch` ended by a signal leave no Chromium and no profile.

Each command runs as a real process with its own temporary folder; it is stopped by
SIGTERM, SIGHUP, SIGINT or SIGKILL while its Chromium runs; afterwards no process of
that Chromium and none of its folders is left.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.core.testing import wait_until

SIGNALS = ["SIGTERM", "SIGHUP", "SIGINT", "SIGKILL"]


@pytest.fixture
def folder() -> Iterator[Path]:
    """A short temporary folder of the command's own (Chromium's socket paths are short)."""
    path = Path(tempfile.mkdtemp(prefix="vfsig-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def chromium_of(folder: Path) -> list[int]:
    """Living processes whose command line names ``folder`` (Chromium's profile is in it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(folder).encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def start(command: list[str], folder: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "viewfinder.cli", "browser", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(folder)},
    )


def end(process: subprocess.Popen[str], name: str, folder: Path) -> int:
    process.send_signal(getattr(signal, name))
    status = process.wait(30)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    wait_until(lambda: not chromium_of(folder), f"Chromium to end after {name}", timeout=20)
    if name != "SIGKILL":  # a killed process removes nothing; its browser still dies
        assert list(folder.iterdir()) == [], f"left after {name}: {list(folder.iterdir())}"
    return status


@pytest.mark.parametrize("name", SIGNALS)
def test_launch_ended_by_a_signal_leaves_nothing(name: str, folder: Path) -> None:
    process = start(["launch"], folder)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("http://127.0.0.1:")
        assert chromium_of(folder)
        status = end(process, name, folder)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert status == {"SIGTERM": 143, "SIGHUP": 129, "SIGINT": 0, "SIGKILL": -9}[name]


@pytest.mark.parametrize("name", SIGNALS)
def test_exec_ended_by_a_signal_leaves_nothing(name: str, folder: Path) -> None:
    marker = folder.parent / f"{folder.name}-running"
    snippet = f"open({str(marker)!r}, 'w').close()\nimport asyncio\nawait asyncio.sleep(120)"
    process = start(["exec", snippet, "--url", "data:text/html,hi", "--timeout", "300"], folder)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), process.stderr.read() if process.stderr else ""
        marker.unlink()
        assert chromium_of(folder)
        status = end(process, name, folder)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert status != 0
