"""A replay returns once the app has handled what it did: a real Tk form on a real
Xvfb whose button takes half a second to handle a click.

The X server queues a click for the app and returns at once; a caller that reads what
the app did (its files, its screen) as soon as replay returns would read it too early.
Replay pings the app behind each step and waits for the answer.
"""

from __future__ import annotations

import select
from pathlib import Path

from viewfinder.cache import CacheExecutor, ExecutionSettings, ReplayStatus, build_cache
from viewfinder.xvfb import Display

from .test_replay_windows import HERE, form, record_pay_click


def test_replay_returns_once_the_app_handled_the_last_step(tmp_path: Path) -> None:
    with Display(640, 480) as display:
        folder = tmp_path / "session"
        assert record_pay_click(display, folder) == ["clicked Pay $10"]
        cache = build_cache(folder)
        settings = ExecutionSettings(delay_time_between_actions=0, settle_time=0.3)
        app = form(display, HERE / "pay_form.py", "slow")
        try:
            with display.backend() as screen:
                result = CacheExecutor(screen, settings).run(cache)
            assert app.process.stdout is not None
            # the app's line is there now, not half a second later
            said, _, _ = select.select([app.process.stdout], [], [], 0)
        finally:
            clicks = app.close()
        assert result.status is ReplayStatus.COMPLETED, result.message
        assert said, "replay returned before the app handled its click"
        assert clicks == ["clicked Pay $10"]
        assert [step.handled for step in result.steps] == [True]
        assert result.warnings == []


def test_an_app_still_busy_at_the_bound_is_a_warning(tmp_path: Path) -> None:
    with Display(640, 480) as display:
        folder = tmp_path / "session"
        assert record_pay_click(display, folder) == ["clicked Pay $10"]
        settings = ExecutionSettings(
            delay_time_between_actions=0, settle_time=0.3, handled_timeout=0.1
        )
        app = form(display, HERE / "pay_form.py", "slow")
        try:
            with display.backend() as screen:
                result = CacheExecutor(screen, settings).run(build_cache(folder))
        finally:
            clicks = app.close()
        assert result.status is ReplayStatus.COMPLETED, result.message
        assert clicks == ["clicked Pay $10"]
        assert [step.handled for step in result.steps] == [False]
        [warning] = result.warnings
        assert "had not handled it 0.1 s later" in warning
