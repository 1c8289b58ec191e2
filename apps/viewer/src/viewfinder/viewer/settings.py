"""Settings of ``viewfinder view``: what it shows, where it listens, who may look."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from viewfinder.core.web_access import InvalidTokenError, checked_token, is_loopback
from viewfinder.viewer.errors import ViewerSettingsError

TOKEN_ENV = "VIEWFINDER_VIEWER_TOKEN"


@dataclass(frozen=True)
class ViewerSettings:
    """How the viewer runs.

    - ``root``: the PATH it shows (an artifact, or a folder of them); None: live only.
      Nothing outside it is ever served.
    - ``live``: the X displays (``":1"``) the live view may show, and the only ones: an
      artifact that names a display offers a link to it, never the permission.
    - ``control``: clicks and keys in the live view reach the display.
    - ``screen``: what cache files are checked against: an X display (``":1"``) or a
      screenshot file; None: no check, only what the files say.
    - ``host`` / ``port``: where it listens; 127.0.0.1 by default. Any other address
      needs a ``token`` (as ``viewfinder serve``; stripped, at least 8 characters),
      which every request but the page's shell must carry: ``Authorization: Bearer
      TOKEN``, which the page sends from ``#token=TOKEN`` in its address (never a
      cookie). Other hosts and origins are refused whatever the token.
    - ``live_format`` / ``live_quality`` / ``live_fps``: how live frames are encoded
      and how many a second at most.
    """

    root: Path | None = None
    live: tuple[str, ...] = ()
    control: bool = False
    screen: str | None = None
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    live_format: Literal["jpeg", "webp"] = "jpeg"
    live_quality: int = 80
    live_fps: float = 30.0

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "token", checked_token(self.token))
        except InvalidTokenError as exc:
            raise ViewerSettingsError(str(exc)) from None
        if not is_loopback(self.host) and not self.token:
            raise ViewerSettingsError(
                f"listening on {self.host} lets other machines see these files and screens; "
                f"give a token (--token-file or ${TOKEN_ENV}) that every visitor must "
                "present, or listen on 127.0.0.1"
            )
        if not 1 <= self.live_fps <= 60:
            raise ViewerSettingsError(f"live_fps must be 1 to 60, got {self.live_fps:g}")
        if not 1 <= self.live_quality <= 100:
            raise ViewerSettingsError(f"live_quality must be 1 to 100, got {self.live_quality}")
        for name in self.live:
            _check_display_name(name)
        if self.root is None and not self.live:
            raise ViewerSettingsError("give a PATH to show, or --live :N, or both")

    def with_changes(self, **changes: Any) -> ViewerSettings:
        return replace(self, **changes)


def _check_display_name(name: str) -> None:
    """A ``--live`` name is a local X display (``:1``); anything else is said before serving."""
    from viewfinder.xvfb.registry import parse_display_number

    try:
        parse_display_number(name)
    except ValueError:
        raise ViewerSettingsError(
            f"--live {name!r} is not a local X display: write it as :N (e.g. :1); the live "
            "view shows displays of this machine only"
        ) from None
