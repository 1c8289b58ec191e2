"""Every image the ComputerTool returns fits its client's budget: a photo-like 4K screen,
its screenshot and a zoom on all of it, on a real Xvfb."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from viewfinder.core.result_budget import budget_for
from viewfinder.desktop import ComputerTool, ComputerToolOptionError

WIDTH, HEIGHT = 3840, 2160
BLUE = (20, 40, 220)
SHOW = (
    "import sys, tkinter as tk\n"
    "root = tk.Tk(); root.geometry('+0+0'); root.overrideredirect(True)\n"
    "image = tk.PhotoImage(file=sys.argv[1])\n"
    "tk.Label(root, image=image, borderwidth=0).pack()\n"
    "root.after(300, lambda: print('ready', flush=True)); root.mainloop()\n"
)


@pytest.fixture(scope="module")
def photo_screen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A 3840x2160 screen filled with noise (every PNG of it is megabytes), a blue
    square in the middle."""
    from viewfinder.xvfb import Display

    folder = tmp_path_factory.mktemp("photo")
    noise = Image.frombytes("RGB", (WIDTH, HEIGHT), os.urandom(WIDTH * HEIGHT * 3))
    noise.paste(BLUE, (WIDTH // 2 - 200, HEIGHT // 2 - 200, WIDTH // 2 + 200, HEIGHT // 2 + 200))
    path = Path(folder) / "noise.png"
    noise.save(path, compress_level=1)
    with Display(WIDTH, HEIGHT) as display:
        app = subprocess.Popen(
            [sys.executable, "-c", SHOW, str(path)],
            env=display.env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert app.stdout is not None and app.stdout.readline().strip() == "ready"
            yield display
        finally:
            app.kill()
            app.wait(10)


def near(colour: tuple[int, ...], expected: tuple[int, int, int]) -> bool:
    return all(abs(a - b) <= 24 for a, b in zip(colour, expected, strict=False))


def test_a_photo_like_screenshot_is_sent_as_jpeg_at_the_model_size(photo_screen: Any) -> None:
    budget = budget_for("claude-desktop")
    with ComputerTool(photo_screen) as tool:
        # 3840x2160 is too large for Claude: the model's space is the largest that fits
        assert tool.model_size == (1429, 804)
        assert max(tool.model_size) <= budget.image_long_edge
        assert tool.model_size[0] * tool.model_size[1] <= budget.image_max_pixels
        result = tool({"action": "screenshot"})
    shot = result.screenshot
    assert shot is not None
    assert shot.size == (1429, 804) and shot.format == "jpeg"
    assert len(shot.data) <= budget.image_bytes
    assert "screenshot 1429x804 JPEG of the 3840x2160 screen" in result.text
    assert near(shot.pixel(714, 402), BLUE)


def test_a_zoom_is_capped_by_the_budget_and_keeps_model_coordinates(photo_screen: Any) -> None:
    budget = budget_for("claude-desktop")
    with ComputerTool(photo_screen, target="XGA") as tool:
        result = tool({"action": "zoom", "region": [0, 0, 1024, 768]})  # the whole screen
    shot = result.screenshot
    assert shot is not None and not result.is_error
    assert max(shot.size) <= budget.image_long_edge
    assert shot.width * shot.height <= budget.image_max_pixels
    assert len(shot.data) <= budget.image_bytes
    assert "scaled by" in result.text and "JPEG" in result.text
    assert "coordinates of actions stay those of the 1024x768 screenshots" in result.text
    assert near(shot.pixel(shot.width // 2, shot.height // 2), BLUE)


def test_an_unknown_client_is_refused(photo_screen: Any) -> None:
    with pytest.raises(ComputerToolOptionError, match="no result budget for client 'claude-web'"):
        ComputerTool(photo_screen, client="claude-web")
