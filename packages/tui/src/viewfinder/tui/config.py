"""The viewfinder configuration file: ``~/.config/viewfinder/config.toml``.

::

    [browser]
    cdp_url = "auto"           # "auto": launch a local headless Chromium;
                               # "ws://..." or "http://host:port": attach; "none": no browser
    timeout = 30               # seconds to launch or connect

    [display]
    enabled = true             # start an Xvfb display for GUI processes (DISPLAY is set)
    size = "1280x800"

    [tui]
    log_lines = 10000          # lines the log view keeps
    buffer_lines = 10000       # lines each process keeps
    refresh_interval = 0.05    # seconds between log and table updates
    kill_timeout = 5           # seconds between SIGTERM and SIGKILL
    shots_dir = "viewfinder-shots"
    columns = ["id", "command", "pid", "time", "status", "output"]
    cursor_blink = true
    history_size = 1000        # commands kept in the history file; 0 keeps none

The command history lives beside this file, in ``~/.config/viewfinder/history``
(:func:`default_history_path`; see :mod:`viewfinder.tui.history`).

Every key is optional. A missing default file means the defaults; a missing file given
with ``--config``, a file that is not TOML, an unknown key or a bad value is a
:class:`~viewfinder.tui.errors.ConfigError` naming the file and the key.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from viewfinder.tui.errors import ConfigError

Column = Literal["id", "command", "pid", "time", "status", "output"]
ALL_COLUMNS: tuple[Column, ...] = ("id", "command", "pid", "time", "status", "output")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BrowserSettings(_Section):
    """``[browser]``: which browser the environment drives, if any."""

    cdp_url: str | None = Field(
        default=None,
        description='"auto" launches a local headless Chromium; a ws:// or http:// URL '
        'attaches to a running browser; "none" (the default) means no browser.',
    )
    timeout: float = Field(default=30.0, gt=0, description="Seconds to launch or connect.")

    @field_validator("cdp_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = value.strip()
        if text.lower() in ("", "none", "off", "false"):
            return None
        if text.lower() == "auto":
            return "auto"
        if not text.startswith(("ws://", "wss://", "http://", "https://")):
            raise ValueError(
                f'{value!r} is not "auto", "none" or a ws://, wss://, http:// or https:// URL '
                '(e.g. "http://127.0.0.1:9222")'
            )
        return text

    @property
    def mode(self) -> Literal["none", "auto", "attach"]:
        if self.cdp_url is None:
            return "none"
        return "auto" if self.cdp_url == "auto" else "attach"


class DisplaySettings(_Section):
    """``[display]``: an Xvfb display for GUI processes."""

    enabled: bool = False
    size: str = Field(default="1280x800", description="WIDTHxHEIGHT of the display.")

    @field_validator("size")
    @classmethod
    def _size(cls, value: str) -> str:
        parse_size(value)
        return value

    @property
    def width(self) -> int:
        return parse_size(self.size)[0]

    @property
    def height(self) -> int:
        return parse_size(self.size)[1]


class TuiSettings(_Section):
    """``[tui]``: how the terminal app looks and behaves."""

    log_lines: int = Field(default=10_000, ge=10, description="Lines the log view keeps.")
    buffer_lines: int = Field(default=10_000, ge=10, description="Lines each process keeps.")
    refresh_interval: float = Field(
        default=0.05, gt=0, le=5, description="Seconds between log and table updates."
    )
    kill_timeout: float = Field(default=5.0, ge=0, description="Seconds from SIGTERM to SIGKILL.")
    shots_dir: Path = Field(default=Path("viewfinder-shots"), description="Where !shot saves.")
    columns: tuple[Column, ...] = Field(
        default=ALL_COLUMNS, min_length=1, description="Columns of the process table."
    )
    cursor_blink: bool = Field(default=True, description="Blink the command line's cursor.")
    history_size: int = Field(
        default=1000, ge=0, description="Commands the history file keeps; 0 keeps none."
    )


class ViewfinderConfig(_Section):
    """The whole configuration file."""

    browser: BrowserSettings = BrowserSettings()
    display: DisplaySettings = DisplaySettings()
    tui: TuiSettings = TuiSettings()


def parse_size(text: str) -> tuple[int, int]:
    """``"1280x800"`` → ``(1280, 800)``; ``ValueError`` saying what is wrong otherwise."""
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"{text!r} is not WIDTHxHEIGHT (e.g. 1280x800)") from None
    if width <= 0 or height <= 0:
        raise ValueError(f"{text!r}: width and height must be positive")
    return width, height


def default_config_dir() -> Path:
    """``$XDG_CONFIG_HOME/viewfinder``, by default ``~/.config/viewfinder``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "viewfinder"


def default_config_path() -> Path:
    """``config.toml`` in :func:`default_config_dir`."""
    return default_config_dir() / "config.toml"


def default_history_path() -> Path:
    """``history`` in :func:`default_config_dir`: the commands typed in the TUI."""
    return default_config_dir() / "history"


def load_config(path: str | os.PathLike[str] | None = None) -> ViewfinderConfig:
    """Read the configuration from ``path``, or from :func:`default_config_path`.

    Without ``path`` a missing file means the defaults; a ``path`` that does not exist
    is an error.
    """
    explicit = path is not None
    file = Path(path) if path is not None else default_config_path()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        if explicit:
            raise ConfigError(file, "no such file; check the path given to --config") from None
        return ViewfinderConfig()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(file, f"cannot be read ({exc})") from exc
    return parse_config(text, file)


def parse_config(text: str, source: str | os.PathLike[str] = "<config>") -> ViewfinderConfig:
    """Validate TOML ``text``; errors name ``source`` and the key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(Path(source), f"not valid TOML: {exc}") from exc
    try:
        return ViewfinderConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(Path(source), _problem(first), key=_key(first["loc"])) from exc


def _key(location: tuple[int | str, ...]) -> str:
    names = [str(part) for part in location if not isinstance(part, int)]
    if len(names) >= 2:
        return f"[{names[0]}] {'.'.join(names[1:])}"
    return names[0] if names else "(top level)"


def _problem(error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key; see docs/tui.md for the keys each section takes"
    message = str(error["msg"]).removeprefix("Value error, ")
    if "input" in error and not isinstance(error["input"], dict):
        given = repr(error["input"])
        if given not in message:
            return f"{message} (got {given})"
    return message
