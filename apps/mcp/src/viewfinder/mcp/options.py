"""What ``viewfinder mcp`` serves and how: the desktop of each session, the browser, the
screenshots' size for models, and where the server listens.

Everything a user can get wrong here is a :class:`McpOptionError` whose message names
the option and what it accepts, raised before anything starts.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from viewfinder.core.errors import ViewfinderError
from viewfinder.core.result_budget import CLIENT_BUDGETS, DEFAULT_CLIENT
from viewfinder.core.web_access import InvalidTokenError, checked_token, is_loopback

#: Where a token for the HTTP transport may come from besides --token / --token-file.
TOKEN_ENV = "VIEWFINDER_MCP_TOKEN"
#: The screen size of a desktop the server starts itself.
DEFAULT_SIZE = (1280, 800)
#: The largest screenshot a model gets by default: XGA, the size Anthropic recommends
#: for computer use (a larger screen is shrunk to fit, keeping its shape).
DEFAULT_MAX_SIZE = (1024, 768)
#: Seconds an HTTP session may go without a request before it is closed (the SDK's).
DEFAULT_IDLE_TIMEOUT = 1800.0
#: HTTP sessions open at once, by default (each may have a desktop and a sandbox).
DEFAULT_MAX_SESSIONS = 16
BROWSER_MODES = ("auto", "off")
#: Addresses that listen everywhere, and the one a client on this machine reaches them at.
_ANY_ADDRESS = {"0.0.0.0": "127.0.0.1", "::": "::1", "[::]": "::1"}
_SIZE = re.compile(r"\s*(\d+)\s*[xX]\s*(\d+)\s*")
_DISPLAY = re.compile(r":\d+(\.\d+)?")
_CDP_URL = re.compile(r"(wss?|https?)://[^\s/]+(/\S*)?")


class McpOptionError(ViewfinderError, ValueError):
    """An option of ``viewfinder mcp`` that cannot be used; ``option`` names it."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        super().__init__(f"{option}: {message}")


def parse_size(value: str, option: str) -> tuple[int, int]:
    """``"1280x800"`` -> ``(1280, 800)``; McpOptionError naming ``option`` otherwise."""
    match = _SIZE.fullmatch(value)
    if match is None:
        raise McpOptionError(option, f"{value!r} is not WIDTHxHEIGHT (e.g. 1280x800)")
    width, height = int(match[1]), int(match[2])
    if not (16 <= width <= 32767 and 16 <= height <= 32767):
        raise McpOptionError(option, f"{value!r}: each side must be 16 to 32767 pixels")
    return width, height


def parse_max_size(value: str) -> tuple[int, int] | None:
    """``--max-size``: WIDTHxHEIGHT, or ``none`` / ``off`` for screenshots at full size."""
    if value.strip().lower() in ("none", "off", "full"):
        return None
    return parse_size(value, "--max-size")


def parse_browser(value: str) -> str:
    """``--browser``: ``auto``, ``off``, or the DevTools URL of a running browser."""
    mode = value.strip()
    if mode.lower() in BROWSER_MODES:
        return mode.lower()
    if _CDP_URL.fullmatch(mode):
        return mode
    raise McpOptionError(
        "--browser",
        f"{value!r} is not auto, off or a DevTools URL (ws://127.0.0.1:9222/devtools/browser/"
        "..., or http://127.0.0.1:9222 of a Chromium started with --remote-debugging-port)",
    )


def parse_display(value: str) -> str:
    """``--display``: a local display name, ``:N``."""
    name = value.strip()
    if _DISPLAY.fullmatch(name) is None:
        raise McpOptionError("--display", f"{value!r} is not a local display; write it as :N")
    return name


def parse_client(value: str) -> str:
    """``--client``: a client whose limits results are fitted to."""
    name = value.strip().lower()
    if name not in CLIENT_BUDGETS:
        raise McpOptionError("--client", f"{value!r} is not one of {', '.join(CLIENT_BUDGETS)}")
    return name


def parse_workdir(value: Path | None, *, cwd: Path | None = None) -> Path:
    """``--workdir`` (default: the current folder) as an absolute path, refused when it
    is the root folder or a home folder itself: the tools write and read files anywhere
    below it, and a client that starts the server in ``/`` (as Claude Desktop does)
    would otherwise hand the model the whole machine."""
    given = value is not None
    folder = (value if value is not None else (cwd or Path.cwd())).expanduser().resolve()
    homes = {Path.home().resolve(), Path("/home"), Path("/root")}
    if folder == Path(folder.anchor) or folder in homes:
        where = f"{folder}" if given else f"the current folder, {folder},"
        raise McpOptionError(
            "--workdir",
            f"{where} would give the tools every file below it; give a folder of their own "
            "(--workdir ~/viewfinder-work, say)",
        )
    return folder


def parse_apps(lines: Sequence[str], command: Sequence[str]) -> list[list[str]]:
    """The apps of each desktop: every ``--app 'CMD ARGS'`` (split as a shell would),
    then the COMMAND given after ``--``."""
    apps = []
    for line in lines:
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise McpOptionError("--app", f"{line!r} cannot be split: {exc}") from None
        if not words:
            raise McpOptionError("--app", "an app is empty; give a program and its arguments")
        apps.append(words)
    if command:
        apps.append(list(command))
    return apps


@dataclass(frozen=True)
class DesktopOptions:
    """The desktop each MCP session gets on its first tool call.

    ``display``: an X display someone else runs (``":N"``), used as it is and left
    running; None: the session starts an Xvfb display of ``size`` and stops it at the
    end. ``apps``: commands started on the display (each a list of words), stopped with
    the session. ``browser``: what ``browser_execute`` drives: ``"auto"`` (a Chromium of
    the session's own, started in its sandbox on first use), ``"off"`` (no browser tool)
    or the DevTools URL of a running browser. ``max_size``: the largest screenshot sent
    to the model (None: full size); actions' coordinates are mapped back to the screen.
    ``workdir``: the folder the tools' files (recordings, cache files) stay inside.
    ``client``: the client whose limits every result is fitted to
    (:data:`viewfinder.core.CLIENT_BUDGETS`). ``elements``: the display the session
    starts gets accessibility buses, its apps publish their elements there, and every
    ``computer`` result carries them (docs/elements.md).
    """

    display: str | None = None
    size: tuple[int, int] = DEFAULT_SIZE
    apps: tuple[tuple[str, ...], ...] = ()
    browser: str = "auto"
    max_size: tuple[int, int] | None = DEFAULT_MAX_SIZE
    workdir: Path = field(default_factory=Path.cwd)
    client: str = DEFAULT_CLIENT
    elements: bool = False

    @property
    def browser_url(self) -> str | None:
        """The DevTools URL ``--browser`` names, or None for auto and off."""
        return None if self.browser in BROWSER_MODES else self.browser


@dataclass(frozen=True)
class HttpOptions:
    """Where the streamable HTTP transport listens and who may use it.

    Any ``host`` besides loopback needs a ``token`` (at least 8 characters), which every
    request must carry as ``Authorization: Bearer TOKEN``. ``idle_timeout`` closes a
    session (and its desktop) that had no request for that many seconds;
    ``max_sessions`` caps the sessions (each with a desktop) open at once.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    max_sessions: int = DEFAULT_MAX_SESSIONS
    path: str = "/mcp"

    def __post_init__(self) -> None:
        try:  # stripped: a token with a space around it is one no client sends
            object.__setattr__(self, "token", checked_token(self.token))
        except InvalidTokenError as exc:
            raise McpOptionError("--token", str(exc)) from None
        if not is_loopback(self.host) and not self.token:
            raise McpOptionError(
                "--host",
                f"listening on {self.host} lets other machines drive this machine's screens "
                f"and run code here; give a token (--token-file or ${TOKEN_ENV}) that every "
                "client must send, or listen on 127.0.0.1",
            )
        if not 0 <= self.port <= 65535:
            raise McpOptionError("--port", f"{self.port} is not a port (0 to 65535)")
        if self.max_sessions < 1:
            raise McpOptionError("--max-sessions", "must be at least 1")
        if self.idle_timeout <= 0:
            raise McpOptionError("--idle-timeout", "must be a positive number of seconds")

    def url(self, port: int | None = None) -> str:
        """The endpoint clients connect to (``port``: the one the server got for 0); a
        server listening on every address (0.0.0.0, ::) is reached on loopback here."""
        host = _ANY_ADDRESS.get(self.host, self.host)
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port if port is None else port}{self.path}"

    def client_url(self) -> str:
        """The URL a client's settings name, before the server runs: refused for
        ``--port 0``, whose port nobody knows until the server picks it."""
        if self.port == 0:
            raise McpOptionError(
                "--port",
                "0 picks a free port when the server starts, so no client settings can "
                "name it; give the port the server will listen on (--port 8765)",
            )
        return self.url()
