"""The disk dump: every collected screenshot also written to a folder, best-effort.

It is a second observer of the same tap as the collector (a call-result listener on
the call's view), not something the collector calls. The bytes are decoded and
written on a worker thread so that the snippet does not wait for the disk; the call
waits for its writes at its end (bounded), so when ``browser_execute`` returns its
files are there. A write that fails is logged and reported in the result's
``warnings``; it never fails the call.

Files are named ``<sessionID>-<startedAt>-<seq>.<ext>``: the session id made safe for
any file system, the call's start (UTC, to the microsecond) and the screenshot's
1-based position in the call.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import os
import re
import threading
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from viewfinder.browser.view import CAPTURE_METHOD
from viewfinder.core.imaging import sniff_format

log = logging.getLogger(__name__)

#: Environment variable naming the dump folder when no parameter does.
SCREENSHOT_DIR_ENV = "VIEWFINDER_SCREENSHOT_DIR"
#: How long the end of a call waits for its pending writes.
FLUSH_TIMEOUT = 10.0
_MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_EXTENSIONS = {"png": "png", "jpeg": "jpg", "webp": "webp"}


def safe_session_name(session_id: str) -> str:
    """``session_id`` as a file name part: only ``[A-Za-z0-9._-]``, no leading dot, at
    most 64 characters; an id that had to change gets a short hash of the original,
    so two different ids never share a name."""
    cleaned = _UNSAFE.sub("_", session_id).lstrip(".")[:_MAX_NAME] or "session"
    if cleaned == session_id:
        return cleaned
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned}-{digest}"


def dump_file_name(session_id: str, started_at: datetime, seq: int, extension: str) -> str:
    """``<sessionID>-<startedAt>-<seq>.<ext>``, e.g. ``agent_1-20250101T120000123456Z-001.png``."""
    stamp = started_at.strftime("%Y%m%dT%H%M%S%fZ")
    return f"{safe_session_name(session_id)}-{stamp}-{seq:03d}.{extension}"


def dump_directory(parameter: str | os.PathLike[str] | None) -> Path | None:
    """The folder to dump into: ``parameter``, else ``$VIEWFINDER_SCREENSHOT_DIR``, else None."""
    if parameter is not None and str(parameter) != "":
        return Path(parameter)
    configured = os.environ.get(SCREENSHOT_DIR_ENV, "").strip()
    return Path(configured) if configured else None


class ScreenshotDump:
    """Writes one call's screenshots under ``directory``; register :meth:`observe` with
    ``view.on_own_call_result`` on the call's loop."""

    def __init__(self, directory: Path, session_id: str, started_at: datetime) -> None:
        self.directory = directory
        self.session_id = session_id
        self.started_at = started_at
        self.files: list[str] = []
        self.warnings: list[str] = []
        self._seq = 0
        self._pending: list[asyncio.Future[None]] = []
        self._lock = threading.Lock()

    def observe(self, method: str, params: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        if method != CAPTURE_METHOD:
            return
        self._seq += 1
        encoded = result.get("data")
        loop = asyncio.get_running_loop()
        self._pending.append(loop.run_in_executor(None, self._write, self._seq, encoded))

    def _write(self, seq: int, encoded: Any) -> None:
        try:
            data = base64.b64decode(encoded or "", validate=True)
            extension = _EXTENSIONS.get(sniff_format(data) or "png", "png")
            path = self.directory / dump_file_name(self.session_id, self.started_at, seq, extension)
            self.directory.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".{path.name}.part")
            temporary.write_bytes(data)
            os.replace(temporary, path)
        except Exception as exc:  # best-effort: a dump never fails the call
            message = f"screenshot {seq} was not written to {self.directory}: {exc}"
            log.warning("screenshot dump: %s", message)
            with self._lock:
                self.warnings.append(message)
            return
        with self._lock:
            self.files.append(str(path))

    async def flush(self, timeout: float = FLUSH_TIMEOUT) -> None:
        """Wait (at most ``timeout`` seconds) for the writes started so far."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=timeout)
        if late:
            message = f"{len(late)} screenshot(s) still being written to {self.directory}"
            log.warning("screenshot dump: %s after %.0fs", message, timeout)
            with self._lock:
                self.warnings.append(message)
        with self._lock:
            self.files.sort()
