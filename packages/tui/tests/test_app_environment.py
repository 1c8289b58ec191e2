"""The TUI over a real environment: the browser row, !open and !shot of the page."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from viewfinder.tui.app import create_app
from viewfinder.tui.config import parse_config
from viewfinder.tui.environment import ViewfinderEnvironment
from viewfinder.tui.testing import SIZE, console_text, fixed_clock, table_cell, type_command, until

GREEN_PAGE = "data:text/html,<body style='margin:0;background:rgb(0,200,0)'></body>"


async def test_browser_row_open_and_shot(tmp_path: Path) -> None:
    config = parse_config(
        f"[browser]\ncdp_url = 'auto'\n[display]\nsize = '300x200'\n"
        f"[tui]\nshots_dir = '{tmp_path}'\ncursor_blink = false\n"
    )
    async with ViewfinderEnvironment(config) as environment:
        browser = environment.browser
        assert browser is not None
        app = create_app(environment=environment, clock=fixed_clock)
        async with app.run_test(size=SIZE) as pilot:
            assert table_cell(app, "browser", "status") == "CDP ready"
            assert table_cell(app, "browser", "command") == browser.endpoint
            assert table_cell(app, "browser", "pid") == str(browser.pid)
            await type_command(pilot, f"!open {GREEN_PAGE}")
            await until(pilot, lambda: f"loaded {GREEN_PAGE}" in console_text(app), "the page")
            await until(
                pilot, lambda: table_cell(app, "browser", "output") == GREEN_PAGE, "the URL"
            )
            await type_command(pilot, "!shot browser")
            await until(pilot, lambda: app.last_shot is not None, "the shot")
            assert app.last_shot is not None
            with Image.open(app.last_shot) as shot:
                assert shot.size == (300, 200)
                assert shot.convert("RGB").getpixel((150, 100)) == (0, 200, 0)
            await type_command(pilot, "!shot display")
            await until(pilot, lambda: "has no display" in console_text(app), "the error")


async def test_a_failed_browser_shows_in_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIEWFINDER_CHROMIUM", "/nonexistent/chromium")
    config = parse_config("[browser]\ncdp_url = 'auto'\n[tui]\ncursor_blink = false\n")
    async with ViewfinderEnvironment(config) as environment:
        app = create_app(environment=environment, clock=fixed_clock)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert table_cell(app, "browser", "status") == "failed"
            assert "chromium" in table_cell(app, "browser", "output").lower()
