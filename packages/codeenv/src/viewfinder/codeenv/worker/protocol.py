"""Frames between the environment (parent) and its worker subprocess.

Each frame is an 8-byte header (two big-endian unsigned ints: the length of a JSON
object, the length of a binary payload), the JSON object, then the payload. Screenshots
travel as raw PNG bytes in the payload, so nothing is base64-encoded twice.

This module imports only the standard library: the worker imports it before it has
confined itself, and it must start fast.
"""

from __future__ import annotations

import json
import os
import struct
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_HEADER = struct.Struct(">II")
#: A JSON header larger than this is a protocol error, not a message.
MAX_HEADER_BYTES = 64 * 1024 * 1024
#: A payload (one PNG) larger than this is a protocol error.
MAX_PAYLOAD_BYTES = 256 * 1024 * 1024


class ProtocolError(Exception):
    """The other side sent something that is not a frame."""


class Frame:
    """One message: ``kind`` (the header's ``type``), the header and the payload."""

    # A plain class: dataclasses cost the worker import time at every start.
    __slots__ = ("header", "payload")

    def __init__(self, header: dict[str, Any], payload: bytes = b"") -> None:
        self.header = header
        self.payload = payload

    @property
    def kind(self) -> str:
        return str(self.header.get("type", ""))


def encode_frame(header: dict[str, Any], payload: bytes = b"") -> bytes:
    """The bytes of one frame."""
    body = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return _HEADER.pack(len(body), len(payload)) + body + payload


def write_frame(fd: int, header: dict[str, Any], payload: bytes = b"") -> None:
    """Write one frame to ``fd`` completely (blocking)."""
    data = memoryview(encode_frame(header, payload))
    while data:
        written = os.write(fd, data)
        data = data[written:]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks = []
    remaining = size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> Frame | None:
    """Read one frame from ``fd`` (blocking); None at end of file."""
    head = _read_exactly(fd, _HEADER.size)
    if head is None:
        return None
    header_len, payload_len = _HEADER.unpack(head)
    _check_sizes(header_len, payload_len)
    body = _read_exactly(fd, header_len + payload_len)
    if body is None:
        return None
    return Frame(_decode_header(body[:header_len]), body[header_len:])


def _check_sizes(header_len: int, payload_len: int) -> None:
    if header_len > MAX_HEADER_BYTES or payload_len > MAX_PAYLOAD_BYTES:
        raise ProtocolError(f"frame too large ({header_len} + {payload_len} bytes)")


def _decode_header(body: bytes) -> dict[str, Any]:
    try:
        header = json.loads(body)
    except ValueError as exc:
        raise ProtocolError(f"frame header is not JSON: {exc}") from exc
    if not isinstance(header, dict):
        raise ProtocolError("frame header is not a JSON object")
    return header


class FrameDecoder:
    """Splits a byte stream read in arbitrary pieces into frames (for non-blocking readers)."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Frame]:
        """Add bytes; return the frames now complete, in order."""
        self._buffer += data
        frames = []
        while len(self._buffer) >= _HEADER.size:
            header_len, payload_len = _HEADER.unpack_from(self._buffer)
            _check_sizes(header_len, payload_len)
            end = _HEADER.size + header_len + payload_len
            if len(self._buffer) < end:
                break
            body = bytes(self._buffer[_HEADER.size : end])
            del self._buffer[:end]
            frames.append(Frame(_decode_header(body[:header_len]), body[header_len:]))
        return frames

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held back."""
        return len(self._buffer)
