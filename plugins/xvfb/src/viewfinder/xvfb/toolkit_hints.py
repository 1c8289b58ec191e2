"""Why a window's process exposes no accessibility tree, told from the libraries it runs.

A read names the windows no application on the accessibility bus draws. Where the
process behind one is known (the X server's owner of the window), the libraries it
has mapped say why more precisely than a guess:

- Tk (``libtk``) implements no AT-SPI at all;
- a Qt 5 whose X11 platform library has no AT-SPI bridge compiled in (PyPI's PyQt5
  wheels: their ``libQt5XcbQpa`` names no ``org.a11y.Bus``) never publishes a tree,
  whatever its environment; a distribution's Qt 5 (Debian's python3-pyqt5) and Qt 6
  do.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

#: Bytes every Qt build with the AT-SPI bridge holds (the bus it looks the bridge up on).
_QT_BRIDGE_MARK = b"org.a11y.Bus"
_QT5_XCB = re.compile(r"/libQt5XcbQpa\.so[.\d]*$")
_TK = re.compile(r"/libtk[\d.]*\.so[.\d]*$")


def hint(pid: int | None) -> str:
    """A few words on why process ``pid`` exposes no tree, or "" when nothing is known."""
    if pid is None:
        return ""
    try:
        lines = Path(f"/proc/{pid}/maps").read_text(errors="replace").splitlines()
    except OSError:  # gone, or another user's
        return ""
    paths = {line.split(maxsplit=5)[-1] for line in lines if line.count(" ") >= 5}
    for path in sorted(paths):
        if _TK.search(path):
            return "Tk implements no AT-SPI"
        if _QT5_XCB.search(path) and not _has_bridge(path):
            return (
                f"its Qt 5 ({path}) is built without AT-SPI support, as PyPI's PyQt5 "
                "wheels are: run it with the distribution's Qt 5 (Debian: python3-pyqt5) "
                "or with Qt 6"
            )
    return ""


@functools.lru_cache(maxsize=16)
def _has_bridge(path: str) -> bool:
    try:
        return _QT_BRIDGE_MARK in Path(path).read_bytes()
    except OSError:
        return True  # unreadable: claim nothing
