"""The buses X11 apps publish their accessibility trees on, one pair per display.

An app built on GTK, Qt, Chromium or LibreOffice registers its tree with AT-SPI2 on the
*accessibility bus*, a D-Bus daemon of its own that the app finds through
``AT_SPI_BUS_ADDRESS``, the ``AT_SPI_BUS`` property of the X root window, or the
session bus. :class:`AccessibilityBus` starts a session bus and the accessibility bus
for one display, each ``dbus-daemon --nofork`` in a process group of its own that dies
with the thread that started it (:func:`~viewfinder.core.lifetime.popen_dying_with_parent`),
with its socket in the display's private directory. The AT-SPI registry
(``at-spi2-registryd``) is started by the accessibility bus when an app first
registers, in the bus's process group, and :meth:`stop` ends both groups.

``at-spi-bus-launcher`` (what a desktop session runs) is not used: it starts the
accessibility bus as a child that outlives it when it is killed, where a daemon of our
own dies with us.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from pathlib import Path

from viewfinder.core.errors import DependencyMissingError
from viewfinder.core.lifetime import popen_dying_with_parent
from viewfinder.xvfb.connection import close_quietly, open_display

SESSION_CONFIG = Path("/usr/share/dbus-1/session.conf")
ACCESSIBILITY_CONFIG = Path("/usr/share/defaults/at-spi2/accessibility.conf")
#: The X root window property AT-SPI clients read the accessibility bus address from.
ROOT_PROPERTY = "AT_SPI_BUS"
#: The accessibility bus's socket in the display's folder: where the element source
#: connects on a display viewfinder started, whatever the root window says.
BUS_SOCKET = "accessibility-bus"
#: The largest message the accessibility bus carries (a read's largest answer is a
#: long text's value: a few MB at most).
MAX_MESSAGE_BYTES = 8 * 1024 * 1024
INSTALL_HINT = "install them with `make setup` (Debian: dbus-daemon at-spi2-core)"


class AccessibilityBusError(RuntimeError):
    """A bus daemon did not start (its stderr is in the message)."""


def missing_parts() -> list[str]:
    """What this machine lacks to run the buses (empty when it has everything)."""
    missing = []
    if not _dbus_daemon():
        missing.append("dbus-daemon")
    for path in (SESSION_CONFIG, ACCESSIBILITY_CONFIG):
        if not path.exists():
            missing.append(str(path))
    return missing


def _dbus_daemon() -> str | None:
    import shutil

    return shutil.which("dbus-daemon")


class AccessibilityBus:
    """A session bus and an accessibility bus for X display ``display`` (see module)."""

    def __init__(self, display: str, directory: Path, *, start_timeout: float = 10.0) -> None:
        self.display = display
        self.directory = directory
        self.start_timeout = start_timeout
        self.session_address: str | None = None
        self.address: str | None = None
        self._processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> AccessibilityBus:
        """Start both daemons, publish the address on the root window; returns ``self``."""
        missing = missing_parts()
        if missing:
            raise DependencyMissingError(", ".join(missing), INSTALL_HINT)
        environment = {**os.environ, "DISPLAY": self.display}
        environment.pop("XAUTHORITY", None)
        try:
            self.session_address = self._daemon(SESSION_CONFIG, "session-bus", environment)
            # the registry the accessibility bus starts reads both from its environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = self.session_address
            self.address = self._daemon(self._bounded_config(), BUS_SOCKET, environment)
            self.publish()
        except BaseException:
            self.stop(timeout=1.0)
            raise
        return self

    def _bounded_config(self) -> Path:
        """AT-SPI's own bus configuration with one message capped at
        :data:`MAX_MESSAGE_BYTES` (it allows 1 GB): an app that answers a read with a
        name of hundreds of megabytes is disconnected by the bus, not read."""
        config = self.directory / "accessibility-bus.conf"
        config.write_text(
            '<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"'
            ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">\n'
            f"<busconfig><include>{ACCESSIBILITY_CONFIG}</include>"
            f'<limit name="max_message_size">{MAX_MESSAGE_BYTES}</limit></busconfig>\n'
        )
        return config

    def _daemon(self, config: Path, name: str, environment: dict[str, str]) -> str:
        socket = self.directory / name
        log_path = self.directory / f"{name}.log"
        with open(log_path, "wb") as log:
            process = popen_dying_with_parent(
                [
                    "dbus-daemon",
                    f"--config-file={config}",
                    "--nofork",
                    "--print-address=1",
                    f"--address=unix:path={socket}",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=environment,
                # its own group: stop() ends it with the services it started
                start_new_session=True,
            )
        self._processes.append(process)
        assert process.stdout is not None
        deadline = time.monotonic() + self.start_timeout
        received = b""
        while not received.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            ready = select.select([process.stdout], [], [], max(remaining, 0))[0]
            chunk = os.read(process.stdout.fileno(), 512) if ready else b""
            if not chunk:
                process.kill()
                reason = "exited" if ready else f"said nothing within {self.start_timeout:g}s"
                raise AccessibilityBusError(
                    f"dbus-daemon for the {name} of display {self.display} {reason}: "
                    f"{log_path.read_text(errors='replace').strip()[-500:]}"
                )
            received += chunk
        process.stdout.close()
        return received.decode().strip()

    def publish(self) -> None:
        """Set the root window's ``AT_SPI_BUS`` to the bus address (again, after a
        session's clients changed it or the display's state was restored)."""
        if self.address is None:
            return
        conn = open_display(self.display)
        try:
            root = conn.screen().root
            atom = conn.intern_atom(ROOT_PROPERTY)
            string = conn.intern_atom("STRING")
            root.change_property(atom, string, 8, self.address.encode())
            conn.sync()
        finally:
            close_quietly(conn)

    def env(self) -> dict[str, str]:
        """The variables an app needs to publish its tree on these buses."""
        if self.session_address is None or self.address is None:
            return {}
        return {
            "DBUS_SESSION_BUS_ADDRESS": self.session_address,
            "AT_SPI_BUS_ADDRESS": self.address,
            # Qt publishes only when asked to or when a screen reader runs
            "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
            "QT_ACCESSIBILITY": "1",
            # Java's bridge and some GTK 2 apps look at these
            "ACCESSIBILITY_ENABLED": "1",
            "GNOME_ACCESSIBILITY": "1",
        }

    @property
    def pids(self) -> list[int]:
        """The daemons' process ids (each leads its process group)."""
        return [process.pid for process in self._processes]

    def running(self) -> bool:
        return bool(self._processes) and all(p.poll() is None for p in self._processes)

    def stop(self, timeout: float = 5.0) -> None:
        """End both daemons and what they started (SIGTERM, SIGKILL after ``timeout``)."""
        processes, self._processes = self._processes, []
        for process in reversed(processes):  # the accessibility bus first
            _end_group(process, timeout)
        self.session_address = self.address = None


def _end_group(process: subprocess.Popen[bytes], timeout: float) -> None:
    group = process.pid  # start_new_session: the daemon leads its group
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, sig)
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        break
    # the registry may outlive the daemon by a moment: its group goes with it
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
