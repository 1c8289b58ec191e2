"""matplotlib's font list, built once and copied into every worker's home.

Every worker has a fresh home directory, and matplotlib scans the system fonts to
build its font list (``fontlist-vNNN.json``) on first import in a new home, which
takes seconds. The list is built once here, in a subprocess (the parent never imports
matplotlib), and each new home gets a copy it may rewrite. Without matplotlib
installed there is nothing to do.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from viewfinder.core.lifetime import popen_dying_with_parent

log = logging.getLogger(__name__)

_BUILD_SCRIPT = "import matplotlib.font_manager"


class FontCache:
    """Builds matplotlib's font list in the background, then seeds homes with it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._files: list[Path] = []
        self._directory: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._closed = False

    def start(self) -> None:
        """Start building the font list (once); returns at once."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._build, name="viewfinder-font-cache", daemon=True
                )
                self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the build; True when a font list is ready to copy."""
        self.start()
        assert self._thread is not None
        self._thread.join(timeout)
        return bool(self._files)

    def _build(self) -> None:
        directory = Path(tempfile.mkdtemp(prefix="viewfinder-mplcache-"))
        with self._lock:
            self._directory = directory  # close() removes it, built or not
            if self._closed:
                shutil.rmtree(directory, ignore_errors=True)
                return
            env = {**os.environ, "MPLCONFIGDIR": str(directory), "MPLBACKEND": "Agg"}
            try:
                # a command that ends before the build (`viewfinder exec` of a quick
                # program) must not leave the build running on its own
                self._process = popen_dying_with_parent(
                    [sys.executable, "-c", _BUILD_SCRIPT],
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            except OSError as exc:
                log.debug("matplotlib font list not prebuilt: %s", exc)
                return
        try:
            status = self._process.wait(timeout=300)
        except subprocess.TimeoutExpired:
            self._process.kill()
            status = self._process.wait()
        if status != 0:
            # No matplotlib, or it failed: workers build their own list if they need one.
            log.debug("matplotlib font list not prebuilt: exit status %s", status)
            return
        self._files = sorted(directory.glob("fontlist-*.json"))

    def seed(self, home: Path, uid: int | None) -> None:
        """Copy the font list into ``home``'s matplotlib directory if it is built."""
        if not self._files:
            return
        target = home / ".matplotlib"
        target.mkdir(exist_ok=True)
        for source in self._files:
            shutil.copyfile(source, target / source.name)
        if uid is not None:
            for path in (target, *target.iterdir()):
                os.chown(path, uid, uid)

    def close(self) -> None:
        """Stop a build still running and remove the font list's folder."""
        with self._lock:
            self._closed = True
            process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        self._files = []
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)


_shared = FontCache()
atexit.register(_shared.close)


def shared_font_cache() -> FontCache:
    """The process-wide font cache (its build starts on first use)."""
    _shared.start()
    return _shared
