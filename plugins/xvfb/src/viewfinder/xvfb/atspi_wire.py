"""D-Bus messages on the wire for the AT-SPI reader: method calls out, replies in.

A tree read asks thousands of small questions. jeepney's general-purpose marshalling
took about 150 µs per question and a ``sendall`` each (most of a 1,200-element read);
here a call is packed straight from its few fields, every call of a batch leaves in
one write, and replies are unpacked by a small reader of exactly the D-Bus types
AT-SPI answers with. The connection itself (authentication, ``Hello``) stays jeepney's.
"""

from __future__ import annotations

import functools
import struct
from typing import Any

_METHOD_CALL, _METHOD_RETURN, _ERROR = 1, 2, 3
_FIELD_PATH, _FIELD_INTERFACE, _FIELD_MEMBER = 1, 2, 3
_FIELD_REPLY_SERIAL, _FIELD_DESTINATION, _FIELD_SIGNATURE = 5, 6, 8
_ALIGN = {"y": 1, "b": 4, "n": 2, "q": 2, "i": 4, "u": 4, "x": 8, "t": 8, "d": 8}
_ALIGN.update({"s": 4, "o": 4, "g": 1, "a": 4, "(": 8, "{": 8, "v": 1, "h": 4})
_FIXED = {"y": "B", "b": "I", "n": "h", "q": "H", "i": "i", "u": "I", "x": "q", "t": "Q"}
_FIXED.update({"d": "d", "h": "I"})


class WireError(ValueError):
    """A message that is not D-Bus (the bus connection is not usable after it)."""


def _string_field(code: int, type_code: bytes, value: str) -> bytes:
    raw = value.encode()
    # code, the variant's signature (1 byte length, code, NUL), then the string at 4
    return bytes((code, 1)) + type_code + b"\0" + struct.pack("<I", len(raw)) + raw + b"\0"


def method_call(
    serial: int,
    destination: str,
    path: str,
    interface: str,
    member: str,
    signature: str = "",
    body: bytes = b"",
) -> bytes:
    """One method call, little-endian, asking for a reply."""
    fields = bytearray(_string_field(_FIELD_PATH, b"o", path))
    fields += b"\0" * (-len(fields) % 8)  # each field is a struct: 8-aligned
    fields += _fixed_fields(destination, interface, member, signature)
    header = struct.pack("<cBBBIII", b"l", _METHOD_CALL, 0, 1, len(body), serial, len(fields))
    return header + fields + b"\0" * (-len(fields) % 8) + body


@functools.lru_cache(maxsize=256)
def _fixed_fields(destination: str, interface: str, member: str, signature: str) -> bytes:
    """The header fields after the path: the same for every call of one method, and
    8-aligned wherever they start (the path's field is padded to 8 before them)."""
    fields = bytearray()
    for code, type_code, value in (
        (_FIELD_INTERFACE, b"s", interface),
        (_FIELD_MEMBER, b"s", member),
        (_FIELD_DESTINATION, b"s", destination),
    ):
        fields += b"\0" * (-len(fields) % 8)
        fields += _string_field(code, type_code, value)
    if signature:
        fields += b"\0" * (-len(fields) % 8)
        raw = signature.encode()
        fields += bytes((_FIELD_SIGNATURE, 1)) + b"g\0" + bytes((len(raw),)) + raw + b"\0"
    return bytes(fields)


def strings_body(*values: str) -> bytes:
    """The body of a call taking strings only (``ss``: Properties.Get), from offset 0."""
    out = bytearray()
    for value in values:
        out += b"\0" * (-len(out) % 4)
        raw = value.encode()
        out += struct.pack("<I", len(raw)) + raw + b"\0"
    return bytes(out)


def message_size(data: bytes | bytearray, start: int) -> int | None:
    """The whole size of the message at ``start`` of ``data``, or None before 16 bytes."""
    if len(data) - start < 16:
        return None
    endian = {108: "<", 66: ">"}.get(data[start])
    if endian is None:
        raise WireError(f"not a D-Bus message (endianness byte {data[start]!r})")
    body, _, fields = struct.unpack_from(endian + "III", data, start + 4)
    return 16 + fields + (-fields % 8) + body


def reply(data: bytes | bytearray, start: int, size: int) -> tuple[int, bool, Any] | None:
    """``(reply serial, is a method return, body values)`` of the message at ``start``;
    None for anything that answers no call (a signal)."""
    message = memoryview(data)[start : start + size]
    endian = "<" if message[0] == 108 else ">"
    kind = message[1]
    if kind not in (_METHOD_RETURN, _ERROR):
        return None
    (fields_length,) = struct.unpack_from(endian + "I", message, 12)
    serial, signature = _reply_fields(message, endian, 16 + fields_length)
    if serial is None:
        return None
    if kind == _ERROR:
        return serial, False, None
    body_start = 16 + fields_length + (-fields_length % 8)
    fast = _FAST_BODIES.get(signature)
    if fast is not None:
        return serial, True, fast(message, endian, body_start)
    return serial, True, _Reader(message, endian, base=body_start).read_all(signature)


def _reply_fields(message: memoryview, endian: str, end: int) -> tuple[int | None, str]:
    """The reply serial and body signature among a message's header fields."""
    pos, serial, signature = 16, None, ""
    while pos < end:
        pos += -pos % 8
        code, length = message[pos], message[pos + 1]
        type_code = message[pos + 2]
        pos += 3 + length
        if type_code == 103:  # g: one byte of length
            size = message[pos]
            if code == _FIELD_SIGNATURE:
                signature = bytes(message[pos + 1 : pos + 1 + size]).decode()
            pos += 2 + size
        elif type_code in (115, 111):  # s, o: four bytes of length
            pos += -pos % 4
            (size,) = struct.unpack_from(endian + "I", message, pos)
            pos += 5 + size
        else:  # u (the serials, the count of passed descriptors)
            pos += -pos % 4
            if code == _FIELD_REPLY_SERIAL:
                (serial,) = struct.unpack_from(endian + "I", message, pos)
            pos += 4
    return serial, signature


def _string_body(message: memoryview, endian: str, start: int) -> tuple[Any, ...]:
    (length,) = struct.unpack_from(endian + "I", message, start)
    return (bytes(message[start + 4 : start + 4 + length]).decode(errors="replace"),)


def _uint_array_body(message: memoryview, endian: str, start: int) -> tuple[Any, ...]:
    (length,) = struct.unpack_from(endian + "I", message, start)
    return (list(struct.unpack_from(f"{endian}{length // 4}I", message, start + 4)),)


def _extents_body(message: memoryview, endian: str, start: int) -> tuple[Any, ...]:
    return (struct.unpack_from(endian + "iiii", message, start),)


_FAST_BODIES = {"s": _string_body, "au": _uint_array_body, "(iiii)": _extents_body}


class _Reader:
    """Unpacks D-Bus values from a message; ``base`` is where alignment counts from
    (a body's alignment is relative to the message's start, and a body starts 8-aligned)."""

    def __init__(self, data: memoryview, endian: str, base: int = 0) -> None:
        self.data = data
        self.endian = endian
        self.base = base

    def read_all(self, signature: str) -> tuple[Any, ...]:
        values, pos, index = [], self.base, 0
        while index < len(signature):
            end = _type_end(signature, index)
            value, pos = self.read(signature[index:end], pos)
            values.append(value)
            index = end
        return tuple(values)

    def read(self, type_: str, pos: int) -> tuple[Any, int]:
        code = type_[0]
        pos += -(pos - self.base) % _ALIGN[code]
        if code in _FIXED:
            (value,) = struct.unpack_from(self.endian + _FIXED[code], self.data, pos)
            return value, pos + struct.calcsize(_FIXED[code])
        if code in "so":
            (length,) = struct.unpack_from(self.endian + "I", self.data, pos)
            return bytes(self.data[pos + 4 : pos + 4 + length]).decode(errors="replace"), (
                pos + 5 + length
            )
        if code == "g":
            length = self.data[pos]
            return bytes(self.data[pos + 1 : pos + 1 + length]).decode(), pos + 2 + length
        if code == "v":
            signature, pos = self.read("g", pos)
            return self.read(signature, pos) if signature else (None, pos)
        if code == "(":
            values = []
            index = 1
            while type_[index] != ")":
                end = _type_end(type_, index)
                value, pos = self.read(type_[index:end], pos)
                values.append(value)
                index = end
            return tuple(values), pos
        if code == "a":
            (length,) = struct.unpack_from(self.endian + "I", self.data, pos)
            pos += 4
            item = type_[1:]
            pos += -(pos - self.base) % _ALIGN[item[0]]
            end = pos + length
            items = []
            while pos < end:
                value, pos = self.read(item, pos)
                items.append(value)
            if item[0] == "{":
                return dict(items), pos
            return items, pos
        if code == "{":
            key, pos = self.read(type_[1], pos)
            value, pos = self.read(type_[2:-1], pos)
            return (key, value), pos
        raise WireError(f"D-Bus type {code!r} is not read here")


def _type_end(signature: str, index: int) -> int:
    """The index just past the single complete type starting at ``index``."""
    code = signature[index]
    if code == "a":
        return _type_end(signature, index + 1)
    if code in "({":
        closing = ")" if code == "(" else "}"
        index += 1
        while signature[index] != closing:
            index = _type_end(signature, index)
        return index + 1
    return index + 1
