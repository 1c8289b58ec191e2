"""Nothing a desktop started is left running, whatever ends it: close(), `desktop stop`,
a SIGKILL of the process holding it at each stage, a `desktop start` killed mid-way.

Every app here starts a daemon with ``setsid`` (its own session and process group, as
``nohup … &`` daemons and D-Bus helpers do), and the tests count by pid what is left.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from viewfinder.core.testing import child_processes, processes_with_argument, running, wait_until
from viewfinder.desktop import Desktop
from viewfinder.desktop.app_namespace import namespace_problem
from viewfinder.desktop.apps import launch_app
from viewfinder.xvfb import registry


def daemon_app(tag: str) -> list[str]:
    """An app that starts a setsid daemon (``sleep <tag>1``) and runs as ``sleep <tag>0``."""
    return ["sh", "-c", f"setsid sleep {tag}1 & exec sleep {tag}0"]


def both_running(tag: str) -> bool:
    return bool(processes_with_argument(f"{tag}0") and processes_with_argument(f"{tag}1"))


def nothing_left(tag: str) -> bool:
    return not processes_with_argument(f"{tag}0") and not processes_with_argument(f"{tag}1")


def test_apps_run_in_a_pid_namespace_here() -> None:
    # the rest of this file relies on it; bubblewrap is installed by `make setup`
    assert namespace_problem() == ""


def test_close_ends_a_daemon_an_app_started_with_setsid() -> None:
    with Desktop(size=(320, 240), apps=[daemon_app("1027.1")], wait_for_windows=False):
        wait_until(lambda: both_running("1027.1"), "the app and its daemon")
        [daemon] = processes_with_argument("1027.11")
        assert os.getsid(daemon) != os.getsid(next(iter(processes_with_argument("1027.10"))))
    wait_until(lambda: nothing_left("1027.1"), "the app and its daemon gone", timeout=10)


HOLDER = """
import sys
from viewfinder.desktop import Desktop

desktop = Desktop(size=(320, 240), apps=[{app!r}], wait_for_windows={wait}, window_timeout=600)
desktop.start()
print("started", flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("stage", ["waiting for a window", "running"])
def test_a_sigkilled_holder_leaves_nothing_once_the_next_desktop_starts(stage: str) -> None:
    tag = "1027.2" if stage == "running" else "1027.3"
    code = HOLDER.format(app=daemon_app(tag), wait=stage != "running")
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        wait_until(lambda: both_running(tag), "the app and its daemon")
        if stage == "running":
            assert holder.stdout is not None and holder.stdout.readline().strip() == "started"
        [xvfb] = child_processes("Xvfb", parent=holder.pid)
        holder.kill()  # SIGKILL: no cleanup runs in the holder
        holder.wait()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    wait_until(lambda: nothing_left(tag), "the app and its daemon to die with the holder")
    # The next desktop started anywhere on this machine stops it; under pytest-xdist that
    # may be another worker's, a moment before ours, so only "gone once ours starts" holds.
    with Desktop(size=(320, 240)):
        assert not running(xvfb)


@pytest.fixture
def state_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv(registry.STATE_DIR_ENV, str(folder))
    return folder


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "viewfinder.cli", "desktop", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_desktop_stop_ends_a_daemon_an_app_started_with_setsid(state_folder: Path) -> None:
    app = " ".join(daemon_app("1027.4")[:2]) + f" '{daemon_app('1027.4')[2]}'"
    started = cli("start", "--size", "320x240", "--no-wait", "--app", app, "--json")
    assert started.returncode == 0, started.stderr
    name = json.loads(started.stdout)["name"]
    wait_until(lambda: both_running("1027.4"), "the app and its daemon")
    stopped = cli("stop", name)
    assert stopped.returncode == 0, stopped.stderr
    assert nothing_left("1027.4")


def test_a_desktop_start_killed_while_waiting_leaves_a_record_stop_all_finds(
    state_folder: Path,
) -> None:
    app = " ".join(daemon_app("1027.5")[:2]) + f" '{daemon_app('1027.5')[2]}'"
    command = [sys.executable, "-m", "viewfinder.cli", "desktop", "start", "--app", app]
    starting = subprocess.Popen([*command, "--size", "320x240", "--timeout", "600"])
    try:
        # the app never shows a window: the command waits for one
        wait_until(lambda: both_running("1027.5"), "the app and its daemon")
        os.kill(starting.pid, signal.SIGKILL)
        starting.wait()
    finally:
        if starting.poll() is None:
            starting.kill()
            starting.wait()
    [record] = state_folder.glob("desktop-*.json")
    number = json.loads(record.read_text())["number"]
    display = registry.find_display(number)
    assert display is not None and running(display.pid)
    stopped = cli("stop", "--all")
    assert stopped.returncode == 0, stopped.stderr
    assert nothing_left("1027.5")
    assert not running(display.pid)
    assert not list(state_folder.glob("desktop-*"))


def test_the_lifeline_alone_ends_the_namespace(tmp_path: Path) -> None:
    """With bubblewrap's parent-death signal out of the picture (the holder lives on),
    the end of the lifeline pipe ends the app and its daemon: what covers a holder killed
    between bubblewrap's clone and its child's ``--die-with-parent``."""
    app = launch_app(daemon_app("1027.6"), display=":9", log_dir=tmp_path)
    try:
        wait_until(lambda: both_running("1027.6"), "the app and its daemon")
        assert app.lifeline is not None
        os.close(app.lifeline)
        app.lifeline = None
        wait_until(lambda: nothing_left("1027.6"), "the namespace to end with its lifeline")
    finally:
        app.stop()


RACING_HOLDER = """
import sys
from pathlib import Path
from viewfinder.desktop.apps import launch_app

print("launching", flush=True)
launch_app({app!r}, display=":9", log_dir=Path({logs!r}))
sys.stdin.read()
"""


def test_a_holder_killed_at_any_moment_of_an_app_start_leaves_nothing(tmp_path: Path) -> None:
    rng = random.Random(1027)
    for attempt in range(8):
        tag = f"1027.7{attempt}"
        code = RACING_HOLDER.format(app=daemon_app(tag), logs=str(tmp_path))
        holder = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "launching"
            time.sleep(rng.uniform(0, 0.06))  # anywhere from before bwrap to after the app
            holder.kill()
            holder.wait()
        finally:
            if holder.poll() is None:
                holder.kill()
                holder.wait()
        # a daemon started after the kill still starts and dies: wait long enough to see it
        time.sleep(0.3)
        wait_until(lambda tag=tag: nothing_left(tag), f"nothing of attempt {attempt}", timeout=10)
