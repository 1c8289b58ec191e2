"""A replayed step acts only where the application it was recorded on is in front: a
real Tk form on a real Xvfb, no accessibility tree (Tk exposes none).

The form (pay_form.py) is recorded with the real recorder; the manifest names the
application in front at the click (its window's WM_CLASS). Replayed on the same form
the click lands; replayed on the same form started as another program (a copy under
another name: the same pixels, another app), the hash and the template match, and the
step is refused, with nothing clicked, as the app's own log says.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from viewfinder.cache import (
    CacheExecutor,
    ExecutionSettings,
    ReplayStatus,
    build_cache,
    save_cache_file,
)
from viewfinder.core import Point
from viewfinder.recorder import Recorder
from viewfinder.xvfb import Display

from .conftest import LoggedForm

HERE = Path(__file__).parent
PAY = Point(x=60 + 48, y=80 + 16)  # the middle of "Pay $10" (pay_form.py, original)
SENTINEL = Point(x=620, y=470)


def form(display: Display, script: Path, layout: str = "original") -> LoggedForm:
    return LoggedForm(sys.executable, script, display, layout, SENTINEL)


def record_pay_click(display: Display, folder: Path) -> list[str]:
    """Record a click on the original form's "Pay $10" into the session ``folder``;
    the clicks the form saw."""
    app = form(display, HERE / "pay_form.py")
    try:
        with (
            Recorder(folder, "xvfb", backend_options={"display": display.name}) as recorder,
            display.backend() as screen,
        ):
            screen.act(recorder.click(PAY.x, PAY.y))
    finally:
        clicks = app.close()
    return clicks


def test_a_step_is_replayed_only_on_the_application_it_was_recorded_on(
    tmp_path: Path,
) -> None:
    other = tmp_path / "look_alike.py"  # the same form, as another program
    shutil.copy(HERE / "pay_form.py", other)
    with Display(640, 480) as display:
        folder = tmp_path / "session"
        assert record_pay_click(display, folder) == ["clicked Pay $10"]
        [line] = (folder / "manifest.jsonl").read_text().splitlines()
        assert json.loads(line)["window"] == "pay_form.py (tk/Tk)"
        cache = build_cache(folder)
        assert cache.trajectory[0].visual_window == "pay_form.py (tk/Tk)"
        recorded = tmp_path / "pay.json"
        save_cache_file(cache, recorded)
        settings = ExecutionSettings(delay_time_between_actions=0.3, settle_time=0.3)

        for script, clicked in ((other, []), (HERE / "pay_form.py", ["clicked Pay $10"])):
            copy = tmp_path / f"replay-{script.stem}.json"
            shutil.copy(recorded, copy)
            app = form(display, script)
            try:
                with display.backend() as screen:
                    result = CacheExecutor(screen, settings).run(copy)
            finally:
                clicks = app.close()
            assert clicks == clicked, result.message
            if clicked:
                assert result.status is ReplayStatus.COMPLETED, result.message
            else:
                assert result.status is ReplayStatus.NEEDS_AGENT
                assert "'look_alike.py (tk/Tk)'" in result.message
                assert "'pay_form.py (tk/Tk)'" in result.message


def test_a_second_tk_app_on_the_display_is_named_as_the_first() -> None:
    # Tk calls the second app of a name "tk #2": the order apps started in names nothing
    from viewfinder.xvfb.connection import open_display
    from viewfinder.xvfb.top_window import application_at

    with Display(640, 480) as display:
        first = form(display, HERE / "pay_form.py")
        try:
            second = form(display, HERE / "pay_form.py")  # on top, at the same place
            try:
                conn = open_display(display.name)
                assert application_at(conn, PAY.x, PAY.y) == "pay_form.py (tk/Tk)"
                conn.close()
            finally:
                second.close()
        finally:
            first.close()
