"""capture_screenshot() inside the code: tkinter, progressive captures, errors, the hook."""

from __future__ import annotations

import base64
import io
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from viewfinder.codeenv import CodeAction, CodeEnvironment
from viewfinder.core.testing import ScreenshotLog, wait_until

BLUE, RED, GREEN, WHITE = (0, 0, 255), (255, 0, 0), (0, 192, 0), (255, 255, 255)
INSIDE_BLUE, INSIDE_RED, INSIDE_GREEN = (100, 70), (280, 70), (190, 170)


def test_one_capture_of_a_tk_window(
    env: CodeEnvironment, example: Callable[[str], str], png: Callable[[str], Image.Image]
) -> None:
    obs = env.step(CodeAction(code=example("tk_shapes.py")))

    assert obs.exit_code == 0, obs.stderr
    assert len(obs.screenshots) == 1
    assert obs.screenshot == obs.screenshots[0]
    image = png(obs.screenshot)
    assert image.size == (640, 480)
    assert image.getpixel(INSIDE_BLUE) == BLUE  # the blue rectangle is blue where drawn
    assert image.getpixel(INSIDE_RED) == RED
    assert image.getpixel(INSIDE_GREEN) == GREEN
    assert "captured" in obs.stdout


def test_progressive_captures_each_show_more(
    env: CodeEnvironment, example: Callable[[str], str], png: Callable[[str], Image.Image]
) -> None:
    obs = env.step(CodeAction(code=example("progressive.py")))

    assert obs.exit_code == 0, obs.stderr
    first, second, third = (png(shot) for shot in obs.screenshots)
    assert obs.screenshot == obs.screenshots[-1]
    assert [first.getpixel(INSIDE_BLUE), first.getpixel(INSIDE_RED)] == [BLUE, WHITE]
    # the red oval appears only from the second capture on
    assert [second.getpixel(INSIDE_RED), second.getpixel(INSIDE_GREEN)] == [RED, WHITE]
    assert [third.getpixel(INSIDE_RED), third.getpixel(INSIDE_GREEN)] == [RED, GREEN]


def test_capture_returns_base64_png_to_the_code(env: CodeEnvironment) -> None:
    obs = env.step(
        CodeAction(
            code="import base64, tkinter\n"
            "tkinter.Tk()\n"
            "data = base64.b64decode(capture_screenshot())\n"
            "print(data[:8] == b'\\x89PNG\\r\\n\\x1a\\n', type(capture_screenshot).__name__)\n"
        )
    )
    assert obs.exit_code == 0, obs.stderr
    assert obs.stdout == "True method\n"
    assert len(obs.screenshots) == 1


def test_region_and_window_captures(
    env: CodeEnvironment, png: Callable[[str], Image.Image]
) -> None:
    code = (
        "import tkinter as tk\n"
        "root = tk.Tk(); root.geometry('120x80+200+150')\n"
        "tk.Frame(root, background='#ff00ff', width=120, height=80).pack()\n"
        "capture_screenshot(region=(200, 150, 10, 10))\n"
        "capture_screenshot(window=root)\n"
        "inner = {'x': 5, 'y': 5, 'width': 20, 'height': 10}\n"
        "capture_screenshot(window=root.winfo_id(), region=inner)\n"
    )
    obs = env.step(CodeAction(code=code))

    assert obs.exit_code == 0, obs.stderr
    region, window, inside = (png(shot) for shot in obs.screenshots)
    assert region.size == (10, 10)
    assert window.size == (120, 80)
    assert inside.size == (20, 10)
    for image in (region, window, inside):
        assert image.getpixel((3, 3)) == (255, 0, 255)


def test_captures_are_published_once_each_with_session_and_step(
    env: CodeEnvironment, captured_screenshots: ScreenshotLog
) -> None:
    seen = captured_screenshots.seen
    env.step(CodeAction(code="x = 1"))
    obs = env.step(
        CodeAction(code="import tkinter\ntkinter.Tk()\ncapture_screenshot()\ncapture_screenshot()")
    )

    assert obs.exit_code == 0, obs.stderr
    assert [context["step"] for _, context in seen] == [2, 2]
    assert [context["capture_index"] for _, context in seen] == [1, 2]
    for _, context in seen:
        assert context["session_id"] == env.session_id
        assert context["backend"] == "xvfb"
        assert context["display"] == env.display.name  # type: ignore[union-attr]
    assert [shot.b64() for shot, _ in seen] == obs.screenshots


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("capture_screenshot(window=0x7ffffff)", "no window with id"),
        ("capture_screenshot(window=-1)", "no such window"),
        ("capture_screenshot(window=2**40)", "no such window"),
        (
            "import tkinter as tk\nr = tk.Tk()\nb = tk.Button(r)\nb.pack()\nr.update()\n"
            "b.destroy()\ncapture_screenshot(window=b)",
            "is gone",
        ),
        ("capture_screenshot(region=(600, 400, 100, 100))", "reaches past the 640x480 screen"),
        (
            "import tkinter as tk\nr = tk.Tk()\nr.withdraw()\ncapture_screenshot(window=r)",
            "is unmapped",
        ),
    ],
)
def test_capture_failures_raise_runtime_error_with_the_reason(
    env: CodeEnvironment, code: str, message: str
) -> None:
    obs = env.step(
        CodeAction(
            code=f"try:\n    {code.replace(chr(10), chr(10) + '    ')}\n"
            "except RuntimeError as exc:\n    print('RuntimeError', exc)\n"
        )
    )
    assert obs.exit_code == 0, obs.stderr
    assert obs.stdout.startswith("RuntimeError capture_screenshot(): ")
    assert message in obs.stdout
    assert obs.screenshots == []


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("capture_screenshot(region='everything')", "expected (x, y, width, height)"),
        ("capture_screenshot(region=(0, 0, 0, 5))", "positive size"),
        ("capture_screenshot(window='main')", "expected an X window id"),
    ],
)
def test_bad_arguments_raise_type_error(env: CodeEnvironment, code: str, message: str) -> None:
    obs = env.step(CodeAction(code=code))
    assert obs.exit_code == 1
    assert "TypeError: capture_screenshot(" in obs.stderr
    assert message in obs.stderr


def test_without_a_display_capture_raises_runtime_error(
    make_env: Callable[..., CodeEnvironment],
) -> None:
    env = make_env(display=False)
    obs = env.step(CodeAction(code="print('runs'); capture_screenshot()"))

    assert obs.exit_code == 1
    assert obs.stdout == "runs\n"
    assert "RuntimeError: capture_screenshot(): this environment runs without a display" in (
        obs.stderr
    )
    assert env.display is None


def test_capture_after_the_display_died_says_so(env: CodeEnvironment) -> None:
    assert env.display is not None
    env.display.stop()  # the X server goes away under the running worker
    obs = env.step(CodeAction(code="capture_screenshot()"))
    assert obs.exit_code == 1
    assert "is gone (its X server exited)" in obs.stderr


def test_capture_after_the_x_server_was_killed_says_so(env: CodeEnvironment) -> None:
    # Killed, and not yet reaped by its parent: a zombie still answers signal 0.
    assert env.display is not None and env.display.pid is not None
    os.kill(env.display.pid, signal.SIGKILL)
    wait_until(lambda: _state(env.display.pid) in ("Z", None), "the X server to die")  # type: ignore[union-attr]
    obs = env.step(CodeAction(code="capture_screenshot()"))
    assert obs.exit_code == 1
    assert "is gone (its X server exited)" in obs.stderr
    assert obs.screenshots == []


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def test_a_capture_from_another_thread_works_while_tk_is_alive(env: CodeEnvironment) -> None:
    obs = env.step(
        CodeAction(
            code="import base64, io, threading\nimport tkinter as tk\n"
            "root = tk.Tk()\nroot.geometry('200x100+0+0')\n"
            "tk.Frame(root, bg='#0000ff', width=200, height=100).pack()\nroot.update()\n"
            "shots = []\n"
            "thread = threading.Thread(target=lambda: shots.append(capture_screenshot()))\n"
            "thread.start()\nthread.join()\nprint(len(shots))\n"
        )
    )
    assert obs.exit_code == 0, obs.stderr
    assert obs.stdout == "1\n" and obs.stderr == ""
    (shot,) = obs.screenshots
    image = Image.open(io.BytesIO(base64.b64decode(shot))).convert("RGB")
    assert image.getpixel((100, 50)) == (0, 0, 255)


def test_capture_limit_per_step(make_env: Callable[..., CodeEnvironment]) -> None:
    env = make_env(max_captures=2)
    obs = env.step(CodeAction(code="for _ in range(3):\n    capture_screenshot()"))
    assert obs.exit_code == 1
    assert "already made 2 captures, the limit per step" in obs.stderr
    assert len(obs.screenshots) == 2


def test_legacy_flag_captures_the_window_left_alive_with_a_deprecation_note(
    env: CodeEnvironment, png: Callable[[str], Image.Image]
) -> None:
    code = (
        "import tkinter as tk\n"
        "root = tk.Tk(); root.geometry('150x90+100+100')\n"
        "tk.Frame(root, background='#00ffff', width=150, height=90).pack()\n"
    )
    obs = env.step(CodeAction(code=code, capture_screenshot=True))

    assert obs.exit_code == 0, obs.stderr
    assert "deprecated" in obs.metadata["deprecation"]
    assert len(obs.screenshots) == 1
    window = png(obs.screenshot)  # type: ignore[arg-type]
    assert window.size == (150, 90)  # the window, drawn: its event loop was pumped first
    assert window.getpixel((75, 45)) == (0, 255, 255)


def test_legacy_flag_without_a_window_captures_the_screen(
    env: CodeEnvironment, png: Callable[[str], Image.Image]
) -> None:
    obs = env.step(CodeAction(code="x = 1", capture_screenshot=True))
    assert png(obs.screenshot).size == (640, 480)  # type: ignore[arg-type]
    assert "deprecation" in obs.metadata
