"""The live view: an X display streamed to pages as JPEG (or WebP) tiles over a WebSocket.

One :class:`LiveFeed` per display serves every page watching it. It sleeps until the
X server reports a repaint (the DAMAGE extension, :class:`viewfinder.recorder.damage.DamageWatch`),
so a still screen costs nothing; then it grabs the screen (MIT-SHM), compares it with
the last frame sent, and encodes only the rectangle that changed. At most ``max_fps``
frames a second: repaints that come faster are folded into the next frame.

A page that joins gets a whole frame first (a *key* frame), then the changed tiles.
Each page has a short queue of its own; a page that falls behind (a slow link) has its
queue emptied and gets a key frame instead, so it never shows a stale mix and never
holds the others back.

Messages are binary: a 4-byte big-endian length, a JSON header (``seq``, ``x``, ``y``,
``w``, ``h``, ``W``, ``H``, ``format``, ``key``, ``grabbed_at`` in ms since the epoch),
then the encoded image.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import struct
import threading
import time

from PIL import Image, ImageChops

from viewfinder.core.errors import DisplayGoneError
from viewfinder.core.imaging import image_from_raw
from viewfinder.recorder.damage import DamageWatch
from viewfinder.xvfb.grab import ScreenGrab

log = logging.getLogger(__name__)

#: Messages a page may have waiting before it is given a key frame instead.
QUEUE_LIMIT = 8
#: With no DAMAGE extension, how often the screen is compared (seconds).
POLL_INTERVAL_S = 0.1
#: On a still screen, how often the feed looks whether its display still runs (seconds):
#: a display that dies says nothing, its DAMAGE connection just closes.
LIVENESS_S = 0.5


class Subscriber:
    """One page watching a feed: its queue of messages, filled on the event loop."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=QUEUE_LIMIT)
        self.needs_key = True
        self.sent = 0
        self.dropped = 0
        #: why the feed ended (its display died), once it did: the last message queued
        self.ended: str | None = None

    def end(self, message: bytes, reason: str) -> None:
        """The feed ended: ``message`` (its error) replaces whatever was still queued."""
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(message)
        self.ended = reason

    def offer(self, message: bytes, key: bool) -> bool:
        """Queue ``message``; False when the page fell behind (it then waits for a key)."""
        if self.needs_key and not key:
            return True  # a tile is no use before the whole frame
        if self.queue.full():
            while not self.queue.empty():
                self.queue.get_nowait()
                self.dropped += 1
            self.needs_key = True
            return False
        self.queue.put_nowait(message)
        if key:
            self.needs_key = False
        return True


class LiveFeed:
    """The frames of X display ``display`` for every :class:`Subscriber` on ``loop``."""

    def __init__(
        self,
        display: str,
        loop: asyncio.AbstractEventLoop,
        *,
        fmt: str = "jpeg",
        quality: int = 80,
        max_fps: float = 30.0,
    ) -> None:
        self.display = display
        self.loop = loop
        self.fmt = fmt
        self.quality = quality
        self.max_fps = max_fps
        self.subscribers: set[Subscriber] = set()
        self.grab = ScreenGrab(display)  # DisplayGoneError now, not in the thread
        self.size = self.grab.size()
        self.frames = 0
        self.grabs = 0
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._key_wanted = threading.Event()
        self._seq = 0
        self._damage = DamageWatch(display, self._damaged)
        self._thread = threading.Thread(
            target=self._run, name=f"viewfinder-live {display}", daemon=True
        )
        self.damage_driven = False

    def start(self) -> LiveFeed:
        self.damage_driven = self._damage.start()
        self._thread.start()
        return self

    @property
    def alive(self) -> bool:
        """False once the grabbing thread ended (the display went away, or stop())."""
        return self._thread.is_alive()

    def add(self, subscriber: Subscriber) -> None:
        """Called on the loop: ``subscriber`` gets a key frame, then every change."""
        self.subscribers.add(subscriber)
        self.want_key()

    def remove(self, subscriber: Subscriber) -> None:
        self.subscribers.discard(subscriber)

    def want_key(self) -> None:
        """Send a whole frame soon (a page joined or fell behind)."""
        self._key_wanted.set()
        self._wake.set()

    def stop(self) -> None:
        """Stop grabbing and watching (idempotent)."""
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(5)
        self._damage.stop()
        self.grab.close()

    # -- the grabbing thread -------------------------------------------------------------

    def _damaged(self, _at: float) -> None:
        self._wake.set()

    def _run(self) -> None:
        previous: bytearray | None = None
        last = 0.0
        try:
            while not self._stopping.is_set():
                woken = self._wake.wait(LIVENESS_S if self.damage_driven else POLL_INTERVAL_S)
                if self._stopping.is_set():
                    break
                if self.damage_driven and not woken:
                    self._check_alive()
                    continue
                pause = last + 1.0 / self.max_fps - time.monotonic()
                if pause > 0 and self._stopping.wait(pause):
                    break
                self._wake.clear()  # repaints from here on bring another frame
                last = time.monotonic()
                previous = self._frame(previous)
        except Exception as exc:  # the display went away: pages are told, the feed ends
            if not self._stopping.is_set():
                log.info("live view of %s ended: %s", self.display, exc)
                reason = f"display {self.display} died: {exc}"
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    self.loop.call_soon_threadsafe(self._end, reason)

    def _check_alive(self) -> None:
        """Raise :class:`DisplayGoneError` when the display's DAMAGE connection closed."""
        ended = self._damage.ended
        if ended is not None:
            raise DisplayGoneError(f"its X server closed the connection ({ended})")

    def _frame(self, previous: bytearray | None) -> bytearray:
        raw, width, height = self.grab.raw()
        self.grabs += 1
        grabbed_at = time.time()
        key = self._key_wanted.is_set()
        self._key_wanted.clear()
        box = changed_box(previous, raw, width, height)
        if box is not None:
            x, y, w, h = box
            stride = width * 4
            band = image_from_raw(memoryview(raw)[y * stride : (y + h) * stride], width, h)
            self._publish(band.crop((x, 0, x + w, h)), box, (width, height), grabbed_at, key=False)
        if key:
            whole = image_from_raw(raw, width, height)
            self._publish(whole, (0, 0, width, height), (width, height), grabbed_at, key=True)
        return raw

    def _publish(
        self,
        tile: Image.Image,
        box: tuple[int, int, int, int],
        screen: tuple[int, int],
        grabbed_at: float,
        *,
        key: bool,
    ) -> None:
        x, y, w, h = box
        out = io.BytesIO()
        if self.fmt == "webp":
            tile.save(out, "WEBP", quality=self.quality, method=0)
        else:
            tile.save(out, "JPEG", quality=self.quality, subsampling=0)
        self._seq += 1
        header = {
            "seq": self._seq, "x": x, "y": y, "w": w, "h": h, "W": screen[0],
            "H": screen[1], "format": self.fmt, "key": key,
            "grabbed_at": round(grabbed_at * 1000, 1),
        }  # fmt: skip
        body = json.dumps(header, separators=(",", ":")).encode()
        self.frames += 1
        message = struct.pack(">I", len(body)) + body + out.getvalue()
        with contextlib.suppress(RuntimeError):  # the loop closed while we encoded
            self.loop.call_soon_threadsafe(self._deliver, message, key)

    def _end(self, reason: str) -> None:
        message = _error(reason)
        for subscriber in list(self.subscribers):
            subscriber.end(message, reason)

    def _deliver(self, message: bytes, key: bool) -> None:
        for subscriber in list(self.subscribers):
            if not subscriber.offer(message, key):
                self.want_key()


def changed_box(
    previous: bytearray | None, raw: bytearray, width: int, height: int
) -> tuple[int, int, int, int] | None:
    """The smallest rectangle holding every pixel of ``raw`` (BGRX rows) that differs from
    ``previous``; None when nothing does.

    Rows are compared as bytes (memcmp), from the top and from the bottom, sixteen at a
    time and then one by one; only the band between the first and the last changed row
    is decoded to find the columns. A small change on a large screen so costs a few row
    comparisons and a narrow band, not two whole frames.
    """
    if previous is None or len(previous) != len(raw):
        return (0, 0, width, height)
    if previous == raw:
        return None
    stride = width * 4
    top = _first_changed_row(previous, raw, stride, range(height))
    bottom = _first_changed_row(previous, raw, stride, range(height - 1, -1, -1))
    rows = slice(top * stride, (bottom + 1) * stride)
    band = bottom - top + 1
    old, new = memoryview(previous)[rows], memoryview(raw)[rows]
    # X's padding byte may differ where the pixels do not: compare the colours only
    found = ImageChops.difference(
        image_from_raw(old, width, band), image_from_raw(new, width, band)
    ).getbbox()
    if found is None:
        return None
    left, _, right, _ = found
    return (left, top, right - left, band)


def _first_changed_row(old: bytearray, new: bytearray, stride: int, order: range) -> int:
    """The first row, in ``order``, whose bytes differ (blocks of rows first, then rows).

    Slices of bytearrays compare with memcmp; memoryviews would compare byte by byte.
    """
    block = 16
    rows = list(order)
    start = 0
    while start < len(rows):
        chunk = rows[start : start + block]
        low, high = min(chunk), max(chunk) + 1
        if old[low * stride : high * stride] != new[low * stride : high * stride]:
            for row in chunk:
                if old[row * stride : (row + 1) * stride] != new[row * stride : (row + 1) * stride]:
                    return row
        start += block
    return rows[-1]


def _error(message: str) -> bytes:
    body = json.dumps({"error": message}).encode()
    return struct.pack(">I", len(body)) + body


class LiveFeeds:
    """The feeds of one server: made when the first page watches a display, stopped when
    the last one leaves."""

    def __init__(self, *, fmt: str, quality: int, max_fps: float) -> None:
        self.fmt, self.quality, self.max_fps = fmt, quality, max_fps
        self._feeds: dict[str, LiveFeed] = {}
        self._lock = asyncio.Lock()

    async def join(self, display: str, subscriber: Subscriber) -> LiveFeed:
        async with self._lock:
            feed = self._feeds.get(display)
            if feed is not None and not feed.alive:  # its display went away: start again
                del self._feeds[display]
                await asyncio.to_thread(feed.stop)
                feed = None
            if feed is None:
                loop = asyncio.get_running_loop()
                feed = await asyncio.to_thread(
                    lambda: LiveFeed(
                        display, loop, fmt=self.fmt, quality=self.quality, max_fps=self.max_fps
                    ).start()
                )
                self._feeds[display] = feed
            feed.add(subscriber)
            return feed

    async def leave(self, feed: LiveFeed, subscriber: Subscriber) -> None:
        async with self._lock:
            feed.remove(subscriber)
            if not feed.subscribers and self._feeds.get(feed.display) is feed:
                del self._feeds[feed.display]
                await asyncio.to_thread(feed.stop)

    def feeds(self) -> list[LiveFeed]:
        return list(self._feeds.values())

    async def close(self) -> None:
        async with self._lock:
            feeds, self._feeds = list(self._feeds.values()), {}
        for feed in feeds:
            await asyncio.to_thread(feed.stop)
