"""Sessions are isolated: own display, own user, own processes; nothing leaks after close."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from PIL import Image

from viewfinder.codeenv import CodeAction, CodeEnvConfig, CodeEnvironment, FreshDisplays
from viewfinder.codeenv.worker_process import interpreter_world_readable

PAINT = (
    "import tkinter as tk\n"
    "root = tk.Tk(); root.geometry('640x480+0+0')\n"
    "tk.Frame(root, background='{colour}', width=640, height=480).pack()\n"
    "shots = [capture_screenshot() for _ in range(5)]\n"
)


def test_two_sessions_stepping_concurrently_never_see_each_others_windows(
    make_env: Callable[..., CodeEnvironment], png: Callable[[str], Image.Image]
) -> None:
    envs = {"#ff0000": make_env(timeout_s=60), "#0000ff": make_env(timeout_s=60)}
    results: dict[str, list[str]] = {}
    errors: list[BaseException] = []

    def paint(colour: str, env: CodeEnvironment) -> None:
        try:
            obs = env.step(CodeAction(code=PAINT.format(colour=colour)))
            assert obs.exit_code == 0, obs.stderr
            results[colour] = obs.screenshots
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=paint, args=item) for item in envs.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not errors, errors
    red, blue = envs["#ff0000"], envs["#0000ff"]
    assert red.display is not None and blue.display is not None
    assert red.display.name != blue.display.name
    assert red.worker is not None and blue.worker is not None
    if os.geteuid() == 0:
        assert red.worker.uid != blue.worker.uid
    for colour, expected in (("#ff0000", (255, 0, 0)), ("#0000ff", (0, 0, 255))):
        assert len(results[colour]) == 5
        for shot in results[colour]:
            colours = {c for _, c in png(shot).getcolors(1 << 20)}  # type: ignore[union-attr]
            assert expected in colours
            other = (0, 0, 255) if expected == (255, 0, 0) else (255, 0, 0)
            assert other not in colours


def test_a_session_cannot_signal_another(make_env: Callable[..., CodeEnvironment]) -> None:
    assert os.geteuid() == 0, "sandbox users need root, as CI has"
    victim, attacker = make_env(), make_env()
    assert victim.worker is not None
    obs = attacker.step(
        CodeAction(code=f"import os, signal\nos.kill({victim.worker.pid}, signal.SIGKILL)")
    )
    # another user id (and, isolated, another PID namespace: the pid is not even there)
    assert "PermissionError" in obs.stderr or "ProcessLookupError" in obs.stderr
    assert victim.step(CodeAction(code="print('alive')")).stdout == "alive\n"


def test_sandbox_keeps_read_access_only_when_python_needs_it(
    env: CodeEnvironment,
) -> None:
    assert env.worker is not None
    info = env.worker.ready_info
    assert info["switched_user"] is (os.geteuid() == 0)
    # isolated, the interpreter's folder is made reachable without it (worker/isolation.py)
    reachable = (info.get("isolation") or {}).get("interpreter_reachable", False)
    needed = info["switched_user"] and not interpreter_world_readable() and not reachable
    assert info["kept_read_access"] is needed
    obs = env.step(CodeAction(code="import os\nopen('/etc/viewfinder-test', 'w')"))
    assert obs.exit_code == 1
    # another user id, and isolated, the machine's files are read-only as well
    assert "PermissionError" in obs.stderr or "Read-only file system" in obs.stderr


def test_close_and_reset_leave_no_worker_or_display(
    worker_gone: Callable[..., None],
) -> None:
    env = CodeEnvironment(CodeEnvConfig(width=320, height=240), displays=FreshDisplays(320, 240))
    env.reset()
    env.step(CodeAction(code="import subprocess\nsubprocess.Popen(['sleep', '600'])"))
    display = env.display
    first = env.worker
    assert display is not None and first is not None
    first_ids = (first.pid, first.uid, first.home)

    env.reset()  # a new worker on the same display; the old one is gone with its child
    worker_gone(*first_ids)
    assert env.display is display and display.is_alive()
    second = env.worker
    assert second is not None
    second_ids = (second.pid, second.uid, second.home)

    env.close()
    worker_gone(*second_ids)
    assert not display.is_alive()  # a display of its own is stopped on close
    assert env.closed
