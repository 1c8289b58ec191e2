"""On a mismatch, a report shows the stored region, the live one, their difference."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.cache import (
    CacheExecutor,
    ExecutionSettings,
    RecordingSettings,
    ReplayStatus,
    build_from_messages,
)
from viewfinder.cache.report import _GAP, _LABEL_HEIGHT, PANEL
from viewfinder.core import Region
from viewfinder.core.testing import Canvas, CanvasBackend

BLUE, GREY = (30, 90, 200), (236, 236, 236)


def panel_centre(sheet: Image.Image, number: int) -> tuple[int, ...]:
    """A pixel of panel ``number`` on the button, left of its label (10 %, 35 % into it)."""
    left = _GAP + number * (PANEL + _GAP)
    top = _GAP + _LABEL_HEIGHT
    pixel = sheet.getpixel((left + PANEL // 10, top + PANEL * 35 // 100))
    assert isinstance(pixel, tuple)
    return pixel


def replay_on_moved_form(
    tmp_path: Path,
    form: Callable[..., Image.Image],
    history: Callable[..., list[dict[str, Any]]],
    layout: dict[str, Region],
    *,
    thumbnails: bool,
) -> Any:
    frame, submit = form(), layout["submit"].center
    cache = build_from_messages(
        history(frame, [({"action": "left_click", "coordinate": [submit.x, submit.y]}, frame)]),
        RecordingSettings(thumbnails=thumbnails),
    )
    canvas = Canvas()
    canvas.image = form(submit=Region(x=400, y=300, width=120, height=40))
    settings = ExecutionSettings(delay_time_between_actions=0, report_dir=tmp_path / "report")
    return CacheExecutor(CanvasBackend(canvas), settings).run(cache)


def test_mismatch_report_shows_stored_live_and_difference(
    tmp_path: Path, form: Any, history: Any, layout: dict[str, Region]
) -> None:
    result = replay_on_moved_form(tmp_path, form, history, layout, thumbnails=True)
    assert result.status is ReplayStatus.NEEDS_AGENT
    assert result.report == tmp_path / "report" / "step-0.html"
    assert result.report_image == tmp_path / "report" / "step-0.png"
    sheet = Image.open(result.report_image).convert("RGB")
    assert panel_centre(sheet, 0) == BLUE  # the button, as recorded
    assert panel_centre(sheet, 1) == GREY  # where it used to be, now
    assert panel_centre(sheet, 2) == (255, 255, 144)  # |blue - grey| x 4, clipped
    page = result.report.read_text()
    assert f"distance {result.distance} (threshold 10)" in page
    assert page.count("data:image/png;base64,") == 3 and "step-0.png" in page


def test_without_thumbnails_the_report_says_how_to_get_them(
    tmp_path: Path, form: Any, history: Any, layout: dict[str, Region]
) -> None:
    result = replay_on_moved_form(tmp_path, form, history, layout, thumbnails=False)
    sheet = Image.open(result.report_image).convert("RGB")
    assert panel_centre(sheet, 1) == GREY
    page = result.report.read_text()
    assert "--no-thumbnails" in page and page.count("data:image/png;base64,") == 1
