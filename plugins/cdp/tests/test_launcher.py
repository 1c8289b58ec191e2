"""Finding, launching and stopping Chromium."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from viewfinder.cdp import (
    ChromiumLaunchError,
    ChromiumProcess,
    connect,
    find_chromium,
    launch_chromium,
)
from viewfinder.cdp.launcher import processes_mentioning
from viewfinder.core import DependencyMissingError, ViewfinderError


def test_find_chromium_with_nothing_on_path_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("VIEWFINDER_CHROMIUM", raising=False)
    with pytest.raises(DependencyMissingError) as caught:
        find_chromium()
    assert "apt-get install chromium" in str(caught.value)
    assert "make setup" in str(caught.value)


def test_find_chromium_prefers_the_environment_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "my-chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("VIEWFINDER_CHROMIUM", str(fake))
    assert find_chromium() == str(fake)


def test_find_chromium_rejects_a_bad_environment_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("VIEWFINDER_CHROMIUM", str(tmp_path / "missing"))
    with pytest.raises(DependencyMissingError, match="VIEWFINDER_CHROMIUM"):
        find_chromium()


def test_find_chromium_searches_the_known_names_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "google-chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("VIEWFINDER_CHROMIUM", raising=False)
    assert find_chromium() == str(fake)


def test_the_shared_browser_is_up_on_loopback(browser: ChromiumProcess) -> None:
    assert browser.running
    assert browser.ws_url.startswith("ws://127.0.0.1:")
    assert browser.http_url == f"http://127.0.0.1:{browser.port}"
    assert browser.user_data_dir.is_dir()
    assert browser.pid == os.getpgid(browser.pid)  # leads its own process group


async def test_launch_report_version_and_stop_cleanly() -> None:
    async with launch_chromium(width=320, height=240) as launched:
        async with await connect(launched.ws_url) as connection:
            version = await connection.call("Browser.getVersion")
        assert "Chrome" in version["product"]
        assert version["protocolVersion"]
        root = launched.root
    assert not launched.running
    assert not root.exists()
    assert not list(processes_mentioning(str(root)))
    launched.stop()  # idempotent


def test_an_early_exit_is_reported_with_its_stderr(tmp_path: Path) -> None:
    failing = tmp_path / "broken-chromium"
    failing.write_text("#!/bin/sh\necho 'cannot open display: nothing here' >&2\nexit 3\n")
    failing.chmod(0o755)
    with pytest.raises(ChromiumLaunchError) as caught:
        launch_chromium(executable=str(failing), timeout=30)
    message = str(caught.value)
    assert "code 3" in message
    assert "cannot open display: nothing here" in message
    assert isinstance(caught.value, ViewfinderError)


def test_a_forgotten_browser_is_stopped_at_interpreter_exit(no_chromium_left_behind: Path) -> None:
    # A child Python launches Chromium and exits without stopping it; the atexit net must.
    script = textwrap.dedent(
        """
        from viewfinder.cdp import launch_chromium
        browser = launch_chromium(width=200, height=200)
        print(browser.root, flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TMPDIR": str(no_chromium_left_behind)},
    )
    assert done.returncode == 0, done.stderr
    root = done.stdout.strip()
    assert root.startswith(str(no_chromium_left_behind))
    assert not Path(root).exists()
    assert not list(processes_mentioning(root))
