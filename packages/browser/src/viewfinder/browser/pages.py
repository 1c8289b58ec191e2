"""Which page of an attached browser the command line works on, from call to call.

``viewfinder browser exec --cdp-url URL`` is one process per call; for its calls to see
the same page (same target, same DOM), each one records the page it left, per browser,
in a small file, and the next one attaches to that page if it is still open. The file
lives in ``$XDG_STATE_HOME/viewfinder/browser-pages/`` (default
``~/.local/state/viewfinder/browser-pages/``), one per browser, named after the
browser's own websocket URL (it holds a fresh id for every Chromium that starts).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: Target types that are pages a snippet can work on.
PAGE_TYPES = ("page",)
#: URL schemes of pages that belong to the browser itself, never picked by default.
_INTERNAL = ("devtools://", "chrome-extension://", "chrome://")


def records_dir() -> Path:
    """The folder of page records (see the module docstring)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "viewfinder" / "browser-pages"


def _record_path(browser_ws_url: str) -> Path:
    name = hashlib.sha256(browser_ws_url.encode()).hexdigest()[:24]
    return records_dir() / f"{name}.json"


def remembered_page(browser_ws_url: str) -> str | None:
    """The target id the last call on this browser left, or None."""
    try:
        data = json.loads(_record_path(browser_ws_url).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    target = data.get("target_id") if isinstance(data, dict) else None
    return target if isinstance(target, str) and data.get("browser") == browser_ws_url else None


def remember_page(browser_ws_url: str, target_id: str) -> None:
    """Record ``target_id`` as this browser's current page. A record that cannot be
    written is logged, never raised: the call itself went fine."""
    path = _record_path(browser_ws_url)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(prefix=".page-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"browser": browser_ws_url, "target_id": target_id}, out)
        os.replace(temporary, path)
    except OSError as exc:
        log.warning("could not record the browser's current page in %s: %s", path, exc)
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(temporary)


def pick_page(targets: list[dict[str, Any]], remembered: str | None) -> str | None:
    """The page to attach to among ``Target.getTargets``'s ``targets``: the remembered one
    if it is still open, else the first ordinary page, else None (open a new one)."""
    pages = [
        target
        for target in targets
        if target.get("type") in PAGE_TYPES and not str(target.get("url", "")).startswith(_INTERNAL)
    ]
    for target in pages:
        if target.get("targetId") == remembered:
            return remembered
    return str(pages[0]["targetId"]) if pages else None
