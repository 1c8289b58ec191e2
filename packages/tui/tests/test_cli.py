"""``viewfinder tui`` through the real root command, and run_tui end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image
from textual.pilot import Pilot
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.tui.app import ViewfinderApp
from viewfinder.tui.config import parse_config
from viewfinder.tui.process_groups import group_members
from viewfinder.tui.running import run_tui
from viewfinder.tui.testing import console_text, type_command, until

runner = CliRunner()


def test_tui_is_a_subcommand() -> None:
    result = runner.invoke(build_app(), ["tui", "--help"])
    assert result.exit_code == 0
    assert "--config" in result.output and "--show-config" in result.output


def test_show_config(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text('[browser]\ncdp_url = "auto"\n[tui]\nlog_lines = 99\n')
    result = runner.invoke(build_app(), ["tui", "--config", str(file), "--show-config"])
    assert result.exit_code == 0, result.output
    header, _, body = result.output.partition("\n")
    assert header == f"# from {file}"
    settings = json.loads(body)
    assert settings["browser"]["cdp_url"] == "auto" and settings["tui"]["log_lines"] == 99


def test_a_bad_config_is_one_clear_line_and_exit_status_1(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text("[display]\nsize = 'wide'\n")
    result = runner.invoke(build_app(), ["tui", "-c", str(file)])
    assert result.exit_code == 1
    assert f"error: {file}: [display] size: 'wide' is not WIDTHxHEIGHT" in result.output
    missing = runner.invoke(build_app(), ["tui", "-c", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 1 and "no such file" in missing.output


async def test_run_tui_with_a_display_end_to_end(tmp_path: Path) -> None:
    shots = tmp_path / "shots"
    config = parse_config(
        f"[display]\nenabled = true\nsize = '160x100'\n[tui]\nshots_dir = '{shots}'\n"
        "cursor_blink = false\n"
    )
    seen: dict[str, Any] = {}

    async def drive(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, ViewfinderApp)
        environment = app.environment
        assert environment is not None and environment.display is not None
        seen["xvfb"] = environment.display.pid
        await until(pilot, lambda: app.table.row_count == 2, "the browser and display rows")
        assert str(app.table.get_cell("display", "status")) == "running"
        await type_command(pilot, "!run xsetroot -solid '#0000ff'")
        await until(
            pilot, lambda: "1" in app.processes and not app.processes.get("1").running, "xsetroot"
        )
        await type_command(pilot, "!run sh -c 'sleep 60 & sleep 60'")
        await until(pilot, lambda: "2" in app.processes, "the sleeper")
        seen["group"] = app.processes.get("2").pid
        await type_command(pilot, "!shot")
        await until(pilot, lambda: app.last_shot is not None, "the shot")
        seen["shot"] = app.last_shot
        assert "from xvfb" in console_text(app)
        await pilot.press("ctrl+q")

    await run_tui(config, headless=True, auto_pilot=drive)
    with Image.open(seen["shot"]) as shot:
        assert shot.size == (160, 100) and shot.convert("RGB").getpixel((80, 50)) == (0, 0, 255)
    assert group_members(seen["group"]) == []
    assert not Path(f"/proc/{seen['xvfb']}").exists()  # Xvfb stopped and reaped
