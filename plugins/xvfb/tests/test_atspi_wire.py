"""The AT-SPI reader's own D-Bus wire format, checked against jeepney's: a call packed
here is the call jeepney reads, and a reply jeepney packs is read back the same."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from jeepney import DBusAddress, new_method_return
from jeepney.low_level import HeaderFields, Message, MessageType, Parser

from viewfinder.xvfb import atspi_wire


def parsed(data: bytes) -> Message:
    messages = Parser().feed(data)
    assert len(messages) == 1
    return messages[0]


@pytest.mark.parametrize(
    ("interface", "member", "signature", "body", "values"),
    [
        ("org.a11y.atspi.Accessible", "GetChildren", "", b"", ()),
        ("org.a11y.atspi.Component", "GetExtents", "u", struct.pack("<I", 0), (0,)),
        ("org.a11y.atspi.Text", "GetText", "ii", struct.pack("<ii", 0, -1), (0, -1)),
        (
            "org.freedesktop.DBus.Properties",
            "Get",
            "ss",
            atspi_wire.strings_body("org.a11y.atspi.Accessible", "Name"),
            ("org.a11y.atspi.Accessible", "Name"),
        ),
    ],
)
def test_a_packed_call_is_the_call_jeepney_reads(
    interface: str, member: str, signature: str, body: bytes, values: tuple[Any, ...]
) -> None:
    path = "/org/a11y/atspi/accessible/12345"
    data = atspi_wire.method_call(7, ":1.42", path, interface, member, signature, body)
    message = parsed(data)
    fields = message.header.fields
    assert message.header.message_type == MessageType.method_call
    assert message.header.serial == 7
    assert fields[HeaderFields.path] == path
    assert fields[HeaderFields.interface] == interface
    assert fields[HeaderFields.member] == member
    assert fields[HeaderFields.destination] == ":1.42"
    assert fields.get(HeaderFields.signature, "") == signature
    assert message.body == values
    assert atspi_wire.message_size(data, 0) == len(data)


@pytest.mark.parametrize(
    ("signature", "values"),
    [
        ("s", ("push button",)),
        ("v", (("s", "Save"),)),
        ("v", (("d", 0.5),)),
        ("au", ([1 << 24 | 1 << 25, 1 << 8],)),
        ("a(so)", ([(":1.5", "/org/a11y/atspi/accessible/1"), (":1.5", "/a/b")],)),
        ("as", (["org.a11y.atspi.Accessible", "org.a11y.atspi.Text"],)),
        ("(iiii)", ((16, -4, 328, 34),)),
        ("a{sv}", ({"Name": ("s", "x"), "ChildCount": ("i", 3)},)),
    ],
)
def test_a_reply_jeepney_packs_is_read_back(signature: str, values: tuple[Any, ...]) -> None:
    call = parsed(atspi_wire.method_call(99, ":1.5", "/p", "i.f", "M"))
    call.header.fields[HeaderFields.sender] = ":1.5"
    reply = new_method_return(call, signature, values)
    data = b"junk" + reply.serialise(serial=3)
    size = atspi_wire.message_size(data, 4)
    assert size == len(data) - 4
    found = atspi_wire.reply(data, 4, size)
    assert found is not None
    serial, returned, body = found
    expected = tuple(v[1] if signature == "v" else v for v in values)
    if signature == "a{sv}":
        expected = ({key: value[1] for key, value in values[0].items()},)
    assert (serial, returned, body) == (99, True, expected)


def test_a_signal_answers_nothing_and_an_error_reply_is_not_a_return() -> None:
    from jeepney import new_error, new_signal

    signal = new_signal(DBusAddress("/org/freedesktop/DBus", interface="o.f.D"), "NameAcquired")
    data = signal.serialise(serial=1)
    assert atspi_wire.reply(data, 0, len(data)) is None
    call = parsed(atspi_wire.method_call(5, ":1.5", "/p", "i.f", "M"))
    call.header.fields[HeaderFields.sender] = ":1.5"
    error = new_error(call, "org.freedesktop.DBus.Error.UnknownMethod", "s", ("no",))
    data = error.serialise(serial=2)
    assert atspi_wire.reply(data, 0, len(data)) == (5, False, None)
