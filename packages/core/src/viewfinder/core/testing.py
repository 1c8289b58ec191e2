"""A test kit for code around capture, for viewfinder's own tests and plugin authors.

:class:`CanvasBackend` is an in-process backend that "captures" a PIL image you draw on,
so logic around capture can be tested without a display. :func:`wait_until` waits for
asynchronous state with a deadline; :func:`child_processes` finds processes a test
left running; :class:`ScreenshotLog` keeps every capture the observers saw. The
pytest fixtures live in :mod:`viewfinder.core.pytest_plugin`.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from viewfinder.core.backend import CaptureBackend
from viewfinder.core.errors import CaptureNotSupportedError
from viewfinder.core.event import Event
from viewfinder.core.geometry import Region
from viewfinder.core.hookspecs import hookimpl
from viewfinder.core.imaging import ImageFormat
from viewfinder.core.screenshot import Screenshot


class Canvas:
    """A screen in memory: an RGB image plus the events performed on it."""

    def __init__(self, width: int = 640, height: int = 480, color: str = "white") -> None:
        self.image = Image.new("RGB", (width, height), color)
        self.events: list[Event] = []

    def fill(self, region: Region, color: str | tuple[int, int, int]) -> None:
        ImageDraw.Draw(self.image).rectangle(
            (region.x, region.y, region.right - 1, region.bottom - 1), fill=color
        )


class CanvasBackend(CaptureBackend):
    """A backend that captures a :class:`Canvas` held in memory; it never touches a display."""

    name = "canvas"
    priority = -1  # only when asked for by name

    def __init__(self, canvas: Canvas | None = None) -> None:
        self.canvas = canvas or Canvas()

    supports_act = True

    def _capture(
        self, *, region: Region | None, window: int | None, format: ImageFormat, quality: int | None
    ) -> Screenshot:
        if window is not None:
            raise CaptureNotSupportedError("the canvas backend has no windows; capture a region")
        image = self.canvas.image
        if region is not None:
            region.check_within(image.width, image.height)
            image = image.crop(region.box)
        return Screenshot.from_image(
            image, source=self.name, format=format, region=region, quality=quality
        )

    def screen_size(self) -> tuple[int, int]:
        return self.canvas.image.size

    def act(self, event: Event) -> None:
        self.canvas.events.append(event)


class ScreenshotLog:
    """A plugin that keeps every ``viewfinder_screenshot_captured`` call, in order.

    ``seen`` holds ``(screenshot, context)`` pairs (the context copied into a dict), so a
    test can check that each capture reached the observers once and with what context.
    """

    def __init__(self) -> None:
        self.seen: list[tuple[Screenshot, dict[str, Any]]] = []

    @hookimpl
    def viewfinder_screenshot_captured(
        self, screenshot: Screenshot, context: Mapping[str, Any]
    ) -> None:
        self.seen.append((screenshot, dict(context)))

    @property
    def screenshots(self) -> list[Screenshot]:
        return [screenshot for screenshot, _ in self.seen]

    @property
    def contexts(self) -> list[dict[str, Any]]:
        return [context for _, context in self.seen]


class CanvasPlugin:
    """A plugin object registering one :class:`CanvasBackend` bound to ``canvas``."""

    def __init__(self, canvas: Canvas) -> None:
        self.canvas = canvas

    @hookimpl
    def viewfinder_register_capture_backends(self, register: Callable[..., None]) -> None:
        # bound to this canvas; its options are CanvasBackend's (none)
        factory = functools.partial(CanvasBackend, canvas=self.canvas)
        factory.priority = CanvasBackend.priority  # type: ignore[attr-defined]
        register(CanvasBackend.name, factory)


def wait_until(
    predicate: Callable[[], Any], what: str, timeout: float = 30.0, max_interval: float = 0.1
) -> Any:
    """Poll ``predicate`` until it returns something truthy, and return that.

    Displays map windows, browsers paint and processes exit asynchronously; tests wait
    for the state they need with a deadline instead of sleeping. At the deadline this
    raises ``AssertionError`` naming ``what``. The default deadline is generous because
    test machines may be small and loaded.
    """
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 2, max_interval)


def child_processes(program: str, parent: int | None = None) -> set[int]:
    """Live (not zombie) processes running ``program`` whose parent is ``parent``.

    ``parent`` defaults to this process. Reads ``/proc``, so Linux only; used by leak
    checks ("no Xvfb started by the tests is still running").
    """
    parent = os.getpid() if parent is None else parent
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv0 = (entry / "cmdline").read_bytes().split(b"\0", 1)[0]
        except OSError:  # the process ended while we looked
            continue
        state, ppid = stat.rsplit(")", 1)[-1].split()[:2]
        if int(ppid) == parent and state != "Z" and os.path.basename(argv0) == program.encode():
            found.add(int(entry.name))
    return found


def processes_marked(variable: str, value: str, programs: Collection[str]) -> dict[int, str]:
    """Live processes running one of ``programs`` whose environment has ``variable=value``.

    Children inherit the environment even when they are detached or orphaned, so a
    marker set at the start of a test run finds every program the run started, wherever
    it ended up in the process tree. Reads ``/proc``; processes of other users are
    invisible unless running as root.
    """
    wanted = {name.encode() for name in programs}
    needle = f"{variable}={value}".encode()
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv0 = os.path.basename((entry / "cmdline").read_bytes().split(b"\0", 1)[0])
            if argv0 not in wanted:
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # ended while we looked, or not ours to read
            continue
        if state != "Z" and needle in environ:
            found[int(entry.name)] = argv0.decode()
    return found


def processes_with_argument(argument: str) -> set[int]:
    """Live (not zombie) processes with ``argument`` as one of their arguments, whoever
    their parent (a daemon that detached, a grandchild). Reads ``/proc``, Linux only.

    Start what a test must find with an argument no one else uses (``sleep 1007.25``).
    """
    wanted = argument.encode()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:  # the process ended while we looked
            continue
        if wanted in arguments and state != "Z":
            found.add(int(entry.name))
    return found


def running(pid: int) -> bool:
    """True when process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def escape_probe(secret: str | os.PathLike[str], port: int) -> str:
    """Python source that tries to read the file ``secret`` and to connect to
    ``127.0.0.1:port``, printing ``read refused: ...`` / ``connect refused: ...`` (or the
    file's text / ``connected``): run it in a sandbox to show what the sandbox keeps out.
    """
    return (
        "import socket\n"
        f"try:\n    print(open({os.fspath(secret)!r}).read())\n"
        "except OSError as exc:\n    print('read refused:', type(exc).__name__)\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {int(port)}), timeout=2)\n"
        "    print('connected')\n"
        "except OSError as exc:\n    print('connect refused:', type(exc).__name__)\n"
    )


def huge_png(path: str | os.PathLike[str], width: int, height: int) -> Path:
    """Write a black RGB PNG of ``width`` x ``height`` row by row, never holding its
    pixels: a decompression bomb (13000x13000 weighs about 0.5 MB and decodes to
    507 MB) for tests of whatever decodes images it is given."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" * (1 + 3 * width)  # filter byte "none", then black pixels
    packer = zlib.compressobj(9)
    rows_at_once = max(1, (8 << 20) // len(row))
    compressed = []
    for first in range(0, height, rows_at_once):
        compressed.append(packer.compress(row * min(rows_at_once, height - first)))
    compressed.append(packer.flush())
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    out = Path(path)
    out.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", b"".join(compressed))
        + chunk(b"IEND", b"")
    )
    return out
