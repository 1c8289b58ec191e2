"""The configuration file: defaults, every section, and errors naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from viewfinder.core import ViewfinderError
from viewfinder.tui import ConfigError
from viewfinder.tui.config import default_config_path, load_config, parse_config


def test_defaults_when_the_default_file_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_config_path() == tmp_path / "viewfinder" / "config.toml"
    config = load_config()
    assert config.browser.mode == "none" and config.browser.timeout == 30
    assert not config.display.enabled and (config.display.width, config.display.height) == (
        1280,
        800,
    )
    assert config.tui.log_lines == 10_000 and config.tui.columns[2] == "pid"


def test_the_default_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    default_config_path().parent.mkdir()
    default_config_path().write_text('[browser]\ncdp_url = "auto"\n')
    assert load_config().browser.mode == "auto"


def test_every_section(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text(
        """
        [browser]
        cdp_url = "http://127.0.0.1:9222"
        timeout = 12.5

        [display]
        enabled = true
        size = "640x480"

        [tui]
        log_lines = 500
        buffer_lines = 2000
        refresh_interval = 0.1
        kill_timeout = 1
        shots_dir = "/tmp/shots"
        columns = ["id", "status"]
        cursor_blink = false
        """
    )
    config = load_config(file)
    assert config.browser.mode == "attach" and config.browser.cdp_url == "http://127.0.0.1:9222"
    assert config.browser.timeout == 12.5
    assert config.display.enabled and (config.display.width, config.display.height) == (640, 480)
    tui = config.tui
    assert (tui.log_lines, tui.buffer_lines, tui.refresh_interval, tui.kill_timeout) == (
        500,
        2000,
        0.1,
        1,
    )
    assert tui.shots_dir == Path("/tmp/shots") and tui.columns == ("id", "status")
    assert not tui.cursor_blink


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ('cdp_url = "auto"', "auto"),
        ('cdp_url = "AUTO"', "auto"),
        ('cdp_url = "none"', "none"),
        ('cdp_url = ""', "none"),
        ('cdp_url = "ws://127.0.0.1:9222/devtools/browser/x"', "attach"),
    ],
)
def test_browser_modes(text: str, mode: str) -> None:
    assert parse_config(f"[browser]\n{text}").browser.mode == mode


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[browser]\ntimeout = -1", "[browser] timeout: Input should be greater than 0 (got -1)"),
        ('[browser]\ncdp_url = "ftp://x"', "[browser] cdp_url: 'ftp://x' is not \"auto\""),
        ("[browser]\nport = 9222", "[browser] port: unknown key"),
        ('[display]\nsize = "big"', "[display] size: 'big' is not WIDTHxHEIGHT"),
        ('[display]\nsize = "0x10"', "[display] size: '0x10': width and height must be positive"),
        ("[tui]\nlog_lines = 1", "[tui] log_lines: Input should be greater than or equal to 10"),
        ('[tui]\ncolumns = ["id", "bogus"]', "[tui] columns: Input should be 'id'"),
        ("[tui]\nrefresh_interval = 0", "[tui] refresh_interval: Input should be greater than 0"),
        ("[windows]\nx = 1", "windows: unknown key"),
        ("browser = 3", "browser: Input should be a valid dictionary"),
        ("[browser", "not valid TOML"),
    ],
)
def test_bad_config_names_the_file_and_the_key(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / "bad.toml"
    file.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(file)
    assert str(caught.value).startswith(f"{file}: ")
    assert message in str(caught.value)
    assert isinstance(caught.value, ViewfinderError) and isinstance(caught.value, ValueError)


def test_a_missing_explicit_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file; check the path given to --config"):
        load_config(tmp_path / "missing.toml")


def test_a_file_that_is_not_text(tmp_path: Path) -> None:
    file = tmp_path / "binary.toml"
    file.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="cannot be read"):
        load_config(file)
