"""Accessibility buses for a display started from a shell (``viewfinder display start
--accessibility``, ``viewfinder desktop start --elements``).

Such a display outlives the command that started it, and so must its buses. They are
kept by a small detached process (``python -m viewfinder.xvfb.display_buses :N DIR``):
it starts an :class:`~viewfinder.xvfb.accessibility_bus.AccessibilityBus` (sockets in
the display's framebuffer folder, its address on the root window), writes the
variables apps need to ``DIR/accessibility-env.json``, then holds an X connection to
the display; when the display stops, the connection closes and the buses are stopped
with it (and on SIGTERM).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from viewfinder.xvfb.accessibility_bus import AccessibilityBus, AccessibilityBusError

ENV_FILE = "accessibility-env.json"
#: The longest path a unix socket may have (sun_path, with its terminating NUL).
SOCKET_PATH_MAX = 107


def start_buses(display: str, directory: str | Path, *, timeout: float = 20.0) -> dict[str, str]:
    """Start the buses of ``display`` in a detached keeper; return the apps' variables.

    ``directory``: the display's framebuffer folder (its buses' sockets go there).
    Raises :class:`AccessibilityBusError` when they do not start within ``timeout``.
    """
    folder = Path(directory)
    if len(str(folder / "accessibility-bus")) > SOCKET_PATH_MAX:
        raise AccessibilityBusError(
            f"the accessibility buses of display {display} cannot have their sockets in "
            f"{folder}: the path is too long for a unix socket; set $VIEWFINDER_STATE_DIR "
            "to a shorter folder"
        )
    env_file = folder / ENV_FILE
    env_file.unlink(missing_ok=True)
    log_path = folder / "accessibility-keeper.log"
    with open(log_path, "wb") as log:
        keeper = subprocess.Popen(
            [sys.executable, "-m", "viewfinder.xvfb.display_buses", display, str(folder)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,  # it outlives this command, as the display does
        )
    deadline = time.monotonic() + timeout
    while not env_file.exists():
        if keeper.poll() is not None or time.monotonic() > deadline:
            if keeper.poll() is None:
                keeper.kill()
            raise AccessibilityBusError(
                f"the accessibility buses of display {display} did not start: "
                f"{log_path.read_text(errors='replace').strip()[-500:]}"
            )
        time.sleep(0.05)
    variables: dict[str, str] = json.loads(env_file.read_text())
    return variables


def buses_env(directory: str | Path) -> dict[str, str]:
    """The apps' variables of the buses kept for the display of ``directory`` ({} if none)."""
    try:
        variables: dict[str, str] = json.loads((Path(directory) / ENV_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return variables


def _keep(display: str, folder: Path) -> None:
    from viewfinder.xvfb.connection import close_quietly, open_display

    bus = AccessibilityBus(display, folder).start()

    def stop(*_: object) -> None:
        bus.stop()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    conn = open_display(display)
    partial = folder / (ENV_FILE + ".part")
    partial.write_text(json.dumps(bus.env()))
    os.replace(partial, folder / ENV_FILE)  # whole or not at all for the starter
    try:
        while True:  # nothing comes but the end of the connection when the display stops
            conn.next_event()
    except Exception:  # the display is gone: so are its buses
        pass
    finally:
        close_quietly(conn)
        bus.stop()


if __name__ == "__main__":
    _keep(sys.argv[1], Path(sys.argv[2]))
