"""Desktop: a real Xvfb, the real Tk form, real process groups; nothing left after close."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.cdp.launcher import processes_mentioning
from viewfinder.core import Region
from viewfinder.core.testing import processes_with_argument, running, wait_until
from viewfinder.desktop.apps import (
    AppNotFoundError,
    AppStartError,
    DesktopConfigError,
    WindowTimeoutError,
    group_members,
)
from viewfinder.desktop.desktop import Desktop
from viewfinder.desktop.lease import parse_size
from viewfinder.xvfb import Display, DisplayPool
from viewfinder.xvfb.server import reap_abandoned
from viewfinder.xvfb.sockets import lock_path
from viewfinder.xvfb.testing import socket_left

GREY = (128, 128, 128)  # the form's swatch before any click
SWATCH = (180, 88)  # the middle of the swatch, on the screen (the window is at 0,0)


@pytest.fixture(scope="module")
def form_desktop(
    tmp_path_factory: pytest.TempPathFactory, form_app: Callable[..., list[str]]
) -> Iterator[tuple[Desktop, Path]]:
    """One desktop with the form, shared by the tests that only look at it."""
    state = tmp_path_factory.mktemp("form") / "state.json"
    with Desktop(size=(1024, 768), apps=[form_app(state)]) as desktop:
        yield desktop, state


def test_a_desktop_starts_its_display_and_apps_and_shows_their_windows(
    form_desktop: tuple[Desktop, Path], form_state: Callable[[Path], dict[str, Any]]
) -> None:
    desktop, state = form_desktop
    assert desktop.size == (1024, 768)
    assert desktop.display is not None and desktop.display.is_alive()
    assert desktop.display_name == desktop.display.name
    [app] = desktop.apps
    assert app.is_running() and app.window is not None
    # the form says where its widgets are once it is drawn; the frame shows them there
    layout = wait_until(lambda: form_state(state).get("layout"), "the form's layout")
    x, y, width, height = layout["swatch"]
    shot = wait_until(
        lambda: (s := desktop.screenshot()).pixel(x + width // 2, y + height // 2) == GREY and s,
        "the grey swatch on the screen",
    )
    assert (shot.width, shot.height) == (1024, 768)
    assert desktop.environment()["DISPLAY"] == desktop.display_name


def test_screenshot_of_a_region_is_that_part_of_the_screen(
    form_desktop: tuple[Desktop, Path], form_state: Callable[[Path], dict[str, Any]]
) -> None:
    desktop, state = form_desktop
    x, y, width, height = wait_until(lambda: form_state(state).get("layout"), "layout")["swatch"]
    part = desktop.screenshot(Region(x=x, y=y, width=width, height=height), format="webp")
    assert (part.width, part.height, part.format) == (width, height, "webp")
    whole = desktop.screenshot()
    assert part.to_pil().convert("RGB").getpixel((width // 2, height // 2)) == pytest.approx(
        whole.pixel(x + width // 2, y + height // 2), abs=3
    )


def test_launch_starts_another_app_and_waits_for_its_window(
    form_desktop: tuple[Desktop, Path],
) -> None:
    desktop, _ = form_desktop
    shapes = Path(__file__).resolve().parents[3] / "examples" / "tk_shapes.py"
    app = desktop.launch([sys.executable, str(shapes)], wait_for_window=True)
    try:
        assert app.window is not None
        # tk_shapes puts a blue rectangle at 20,20-180,120 of its window at 0,0
        wait_until(lambda: desktop.screenshot().pixel(100, 70) == (0, 0, 255), "blue rectangle")
        assert app in desktop.apps
    finally:
        app.stop()
    assert not app.is_running() and not group_members(app.pgid)


def test_an_app_without_a_window_times_out_with_a_clear_error(
    form_desktop: tuple[Desktop, Path],
) -> None:
    desktop, _ = form_desktop
    with pytest.raises(WindowTimeoutError, match=r"sleep 1007\.41.*showed no window"):
        desktop.launch("sleep 1007.41", wait_for_window=True, timeout=0.5)
    sleeper = desktop.apps[-1]
    sleeper.stop()
    assert not processes_with_argument("1007.41")


def test_close_leaves_no_app_no_child_of_an_app_and_no_display(
    tmp_path: Path, form_app: Callable[..., list[str]]
) -> None:
    state = tmp_path / "state.json"
    # the shell's background `sleep` is a grandchild of the desktop, in the app's group
    shell = [
        "sh",
        "-c",
        f"sleep 1007.42 & exec {sys.executable} -c 'import time; time.sleep(1007.43)'",
    ]
    desktop = Desktop(size=(640, 480), apps=[form_app(state), shell], wait_for_windows=False)
    desktop.start()
    display = desktop.display
    assert display is not None
    number, xvfb = display.number, display.pid
    pids = [app.pid for app in desktop.apps]
    wait_until(lambda: processes_with_argument("1007.42"), "the grandchild sleep")
    assert all(running(pid) for pid in pids)
    assert processes_with_argument(str(state))

    desktop.close()

    assert not processes_with_argument(str(state))
    assert not processes_with_argument("1007.42")
    assert not processes_with_argument("1007.43")
    assert not any(running(pid) for pid in pids)
    assert xvfb is not None and not running(xvfb)
    assert not lock_path(number).exists() and not socket_left(number)
    assert desktop.apps == [] and not desktop.started
    desktop.close()  # idempotent


def test_a_program_that_is_not_installed_is_named_before_anything_starts(
    form_app: Callable[..., list[str]], tmp_path: Path
) -> None:
    xvfbs_before = _xvfb_children()
    desktop = Desktop(apps=[form_app(tmp_path / "s.json"), ["viewfinder-no-such-app", "--flag"]])
    with pytest.raises(AppNotFoundError, match=r"viewfinder-no-such-app --flag.*no program"):
        desktop.start()
    assert not desktop.started and _xvfb_children() == xvfbs_before
    assert not processes_with_argument(str(tmp_path / "s.json"))
    with pytest.raises(AppNotFoundError, match="does not exist"):
        Desktop(apps=[["/no/such/dir/app"]]).start()


def test_an_app_that_exits_before_its_window_says_why_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    failing = [sys.executable, "-c", "import sys; print('no window today'); sys.exit(3)"]
    xvfbs_before = _xvfb_children()
    with pytest.raises(AppStartError, match=r"(?s)exited with code 3.*no window today"):
        Desktop(size=(320, 240), apps=[failing]).start()
    assert _xvfb_children() == xvfbs_before


@pytest.mark.parametrize(
    ("size", "message"),
    [
        ((0, 600), "width must be between 1 and 32767"),
        ((800, 40000), "height must be between 1 and 32767"),
        ("800by600", "not WIDTHxHEIGHT"),
        ((800,), r"not a \(width, height\) pair"),
        ((800.5, 600), "must be integers"),
    ],
)
def test_a_bad_size_is_a_typed_error(size: Any, message: str) -> None:
    with pytest.raises(DesktopConfigError, match=message):
        Desktop(size=size)


def test_bad_arguments_are_typed_errors_that_say_what_to_write() -> None:
    assert parse_size("1366x768") == (1366, 768)
    with pytest.raises(DesktopConfigError, match=r'apps=\[\["python", "form.py"\]'):
        Desktop(apps=["python", "form.py"])  # type: ignore[list-item]
    with pytest.raises(DesktopConfigError, match="empty"):
        Desktop(apps=[[]])
    with pytest.raises(DesktopConfigError, match="display or a pool, not both"):
        Desktop(":5", pool=_NoPool())
    with pytest.raises(DesktopConfigError, match="size= applies only"):
        Desktop(":5", size=(800, 600))
    with pytest.raises(DesktopConfigError, match="not a local display name"):
        Desktop("localhost:5")
    with pytest.raises(DesktopConfigError, match="acquire"):
        Desktop(pool=object())  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="not been started"):
        Desktop().screenshot()


def test_a_desktop_on_a_display_given_by_name_leaves_the_display_running(
    tmp_path: Path, form_app: Callable[..., list[str]], form_state: Callable[[Path], Any]
) -> None:
    state = tmp_path / "state.json"
    with Display(800, 600) as display:
        with Desktop(display.name, apps=[form_app(state)]) as desktop:
            assert desktop.size == (800, 600) and desktop.display is None
            [app] = desktop.apps
            wait_until(lambda: form_state(state).get("layout"), "the form drawn")
            assert desktop.screenshot().pixel(*SWATCH) == GREY
        assert display.is_alive()
        assert not app.is_running() and not processes_with_argument(str(state))
        # the form's window went with its client: the screen is empty again
        assert display.backend().capture().pixel(*SWATCH) != GREY


def test_a_desktop_from_a_pool_gives_the_display_back_clean(
    tmp_path: Path, form_app: Callable[..., list[str]], form_state: Callable[[Path], Any]
) -> None:
    state = tmp_path / "state.json"
    with DisplayPool(size=1, width=640, height=480) as pool:
        with Desktop(pool=pool, apps=[form_app(state)]) as desktop:
            assert pool.stats().in_use == 1
            assert desktop.display is not None and desktop.size == (640, 480)
            borrowed = desktop.display
            wait_until(lambda: form_state(state).get("layout"), "the form drawn")
        assert pool.stats().in_use == 0
        assert borrowed.is_alive()  # back in the pool, not stopped
        assert not processes_with_argument(str(state))
        again = pool.acquire(timeout=30)
        try:
            assert again is borrowed
            assert again.backend().capture().pixel(*SWATCH) != GREY
        finally:
            pool.release(again)


def test_the_window_manager_command_runs_first_and_stops_with_the_desktop(
    tmp_path: Path, form_app: Callable[..., list[str]]
) -> None:
    # no window manager is installed here: any long-running command stands in for one
    with Desktop(
        size=(640, 480),
        window_manager=["sleep", "1007.44"],
        apps=[form_app(tmp_path / "s.json")],
    ) as desktop:
        manager = desktop.window_manager
        assert manager is not None and manager.is_running()
        # the command, and the bubblewrap around it (its PID namespace), in one group
        running = processes_with_argument("1007.44")
        assert manager.pid in running and group_members(manager.pgid) == running
    assert not processes_with_argument("1007.44")


def test_browser_url_opens_chromium_on_the_display_and_close_stops_it() -> None:
    page = "data:text/html,<body style='margin:0;background:%2300c000'></body>"
    with Desktop(size=(800, 600), browser_url=page) as desktop:
        browser = desktop.browser
        assert browser is not None and browser.running
        # the page fills the window below Chromium's toolbar
        wait_until(lambda: desktop.screenshot().pixel(400, 500) == (0, 192, 0), "the page")
        root = str(browser.root)
    assert not browser.running
    assert not list(processes_mentioning(root))


def test_computer_is_made_once_per_options_and_acts_on_the_desktop(
    tmp_path: Path, form_app: Callable[..., list[str]], form_state: Callable[[Path], Any]
) -> None:
    state = tmp_path / "state.json"
    with Desktop(size=(1024, 768), apps=[form_app(state)]) as desktop:
        layout = wait_until(lambda: form_state(state).get("layout"), "the form drawn")
        tool = desktop.computer()
        assert desktop.computer() is tool
        assert desktop.computer(target="XGA") is not tool
        x, y, width, height = layout["button"]
        result = tool({"action": "left_click", "coordinate": [x + width // 2, y + height // 2]})
        assert not result.is_error, result.text
        wait_until(lambda: form_state(state)["swatch"]["clicks"] == 1, "the Apply click")
        assert result.screenshot is not None
        assert result.screenshot.pixel(*SWATCH) != GREY


ORPHAN = """
import sys, threading, time
from pathlib import Path
from viewfinder.desktop import Desktop

desktop = Desktop(size=(320, 240), apps=[["sleep", "1007.61"]], wait_for_windows=False)
starter = threading.Thread(target=desktop.start)
starter.start()
starter.join()
while Path(f"/proc/self/task/{starter.native_id}").exists():  # the thread is gone
    time.sleep(0.01)
print(desktop.apps[0].pid, desktop.display.pid, flush=True)
time.sleep(600)
"""


def test_apps_outlive_the_thread_that_started_them_but_not_a_killed_process() -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", ORPHAN], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert owner.stdout is not None
        app, xvfb = (int(word) for word in owner.stdout.readline().split())
        # the thread that called start() has ended; the app runs on
        # (with bubblewrap's namespace around it, the app is a group of processes)
        assert running(app)
        assert processes_with_argument("1007.61") and processes_with_argument(
            "1007.61"
        ) <= group_members(app)
        owner.kill()  # SIGKILL: no cleanup code runs in the owner
        owner.wait()
        wait_until(lambda: not processes_with_argument("1007.61"), "the app to die with its owner")
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
    # its Xvfb is left to the reaper of displays whose owner died
    reap_abandoned()
    assert not running(xvfb)


class _NoPool:
    def acquire(self, timeout: float | None = None) -> Display:
        raise AssertionError("not called")

    def release(self, display: Display) -> None:
        raise AssertionError("not called")


def _xvfb_children() -> set[int]:
    from viewfinder.core.testing import child_processes

    return child_processes("Xvfb", os.getpid())


def shells_running(script: str) -> set[int]:
    """The ``sh -c script`` processes that run (not the namespace init carrying the
    same words)."""
    found = set()
    for pid in processes_with_argument(script):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "sh":
                found.add(pid)
    return found


def test_a_launcher_that_exits_once_its_app_runs_still_gets_the_window(
    form_desktop: tuple[Desktop, Path],
) -> None:
    desktop, _ = form_desktop
    shapes = Path(__file__).resolve().parents[3] / "examples" / "tk_shapes.py"
    # the shell starts the Tk app in the background and exits at once
    command = ["sh", "-c", f"{sys.executable} {shapes} & exit 0"]
    launcher = desktop.launch(command, wait_for_window=True)
    try:
        assert launcher.window is not None
        wait_until(lambda: not shells_running(command[2]), "the launcher to exit")
        assert group_members(launcher.pgid)  # the app, in the launcher's group
    finally:
        launcher.stop()
    assert not group_members(launcher.pgid)
