"""Logic without a display: key names, XWD headers, display names, the state directory."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from viewfinder.core import ActionError, CaptureError
from viewfinder.xvfb import registry
from viewfinder.xvfb.framebuffer import XwdHeader
from viewfinder.xvfb.keys import keysym_for_char, keysym_for_name


@pytest.mark.parametrize(
    ("name", "keysym"),
    [
        ("ctrl", 0xFFE3),
        ("Control_L", 0xFFE3),
        ("alt", 0xFFE9),
        ("shift", 0xFFE1),
        ("cmd", 0xFFEB),
        ("super", 0xFFEB),
        ("meta", 0xFFEB),
        ("enter", 0xFF0D),
        ("Return", 0xFF0D),
        ("return", 0xFF0D),
        ("esc", 0xFF1B),
        ("tab", 0xFF09),
        ("backspace", 0xFF08),
        ("delete", 0xFFFF),
        ("Up", 0xFF52),
        ("left", 0xFF51),
        ("F1", 0xFFBE),
        ("f12", 0xFFC9),
        ("Page_Down", 0xFF56),
        ("page_down", 0xFF56),
        ("pgup", 0xFF55),
        ("a", 0x61),
        ("A", 0x41),
        ("slash", 0x2F),
        ("/", 0x2F),
        ("space", 0x20),
        ("+", 0x2B),
    ],
)
def test_key_names(name: str, keysym: int) -> None:
    assert keysym_for_name(name) == keysym


def test_unknown_key_name() -> None:
    with pytest.raises(ActionError, match="unknown key 'hyperdrive'"):
        keysym_for_name("hyperdrive")


@pytest.mark.parametrize(
    ("char", "keysym"),
    [
        ("a", 0x61),
        ("Z", 0x5A),
        (" ", 0x20),
        ("é", 0xE9),
        ("€", 0x10020AC),
        ("\n", 0xFF0D),
        ("\t", 0xFF09),
        ("日", 0x10065E5),
    ],
)
def test_characters(char: str, keysym: int) -> None:
    assert keysym_for_char(char) == keysym


def test_control_characters_are_refused() -> None:
    with pytest.raises(ActionError, match="key chord"):
        keysym_for_char("\x03")


def _xwd(width: int = 4, height: int = 2, ncolors: int = 3, version: int = 7) -> bytes:
    fields = [0] * 25
    fields[0], fields[1], fields[2], fields[3] = 100, version, 2, 24
    fields[4], fields[5], fields[11], fields[12] = width, height, 32, width * 4
    fields[19] = ncolors
    return struct.pack(">25I", *fields)


def test_xwd_header() -> None:
    header = XwdHeader.parse(_xwd())
    assert (header.width, header.height, header.bits_per_pixel) == (4, 2, 32)
    assert header.pixel_offset == 100 + 3 * 12
    assert header.size == header.pixel_offset + 16 * 2
    assert header.raw_mode == "BGRX"


def test_xwd_header_rejects_other_files() -> None:
    with pytest.raises(CaptureError):
        XwdHeader.parse(b"\x89PNG")
    with pytest.raises(CaptureError, match="not an XWD"):
        XwdHeader.parse(_xwd(version=6))


@pytest.mark.parametrize(("text", "number"), [(":3", 3), ("3", 3), (":12.0", 12), (7, 7)])
def test_display_names(text, number) -> None:
    assert registry.parse_display_number(text) == number


def test_remote_display_names_are_refused() -> None:
    with pytest.raises(ValueError, match=":N"):
        registry.parse_display_number("otherhost:0")


def test_state_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("VIEWFINDER_STATE_DIR", str(tmp_path / "explicit"))
    assert registry.state_dir() == tmp_path / "explicit"
    monkeypatch.delenv("VIEWFINDER_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert registry.state_dir() == tmp_path / "xdg" / "viewfinder" / "displays"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert registry.state_dir() == tmp_path / "home" / ".local/state/viewfinder/displays"
