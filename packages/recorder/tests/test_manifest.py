"""The manifest file: whole lines only, even when a write fails; the ai_mime mapping."""

from __future__ import annotations

import errno
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from viewfinder.core import Event, EventKind, Point
from viewfinder.recorder import (
    ManifestWriter,
    SessionWriteError,
    from_ai_mime,
    read_manifest,
    to_ai_mime,
)
from viewfinder.recorder import manifest as manifest_module

WHEN = datetime(2025, 1, 5, 10, 0, 1, 250000, tzinfo=UTC)


def click(seq: int) -> Event:
    return Event(
        kind=EventKind.CLICK,
        position=Point(x=seq, y=2),
        timestamp=WHEN,
        screenshot=f"screenshots/{seq}.png",
    )


def test_lines_are_core_manifest_lines_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "manifest.jsonl"
    writer = ManifestWriter(path)
    for seq in range(3):
        writer.append(seq, click(seq))
    writer.close()
    first = json.loads(path.read_text().splitlines()[0])
    assert first == click(0).to_manifest(0)
    assert first == {
        "seq": 0,
        "kind": "click",
        "position": {"x": 0, "y": 2},
        "button": "left",
        "timestamp": "2025-01-05T10:00:01.250000Z",
        "screenshot": "screenshots/0.png",
    }
    manifest = read_manifest(path)
    assert [entry.event for entry in manifest.entries] == [click(n) for n in range(3)]
    assert manifest.next_seq == 3


def test_a_failed_write_leaves_no_half_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fault injection at the one place bytes go out: half the line, then a full disk.
    path = tmp_path / "manifest.jsonl"
    writer = ManifestWriter(path)
    writer.append(0, click(0))

    def half_then_full(fd: int, data: bytes) -> None:
        import os

        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(manifest_module, "write_whole", half_then_full)
    with pytest.raises(SessionWriteError, match="the disk is full"):
        writer.append(1, click(1))
    monkeypatch.undo()
    writer.append(1, click(1))  # space came back: the file goes on with whole lines
    writer.close()
    assert [entry.seq for entry in read_manifest(path).entries] == [0, 1]


def test_ai_mime_lines_map_both_ways() -> None:
    events = [
        click(0),
        Event(kind=EventKind.DOUBLE_CLICK, position=Point(x=5, y=6), timestamp=WHEN),
        Event(kind=EventKind.RIGHT_CLICK, position=Point(x=5, y=6), timestamp=WHEN),
        Event(kind=EventKind.TYPE, text="hello", timestamp=WHEN, screenshot="screenshots/3.png"),
        Event(kind=EventKind.KEY, keys=["ctrl", "s"], timestamp=WHEN),
        Event(kind=EventKind.KEY, keys=["Return"], timestamp=WHEN),
        Event(kind=EventKind.KEY, keys=["super", "space"], timestamp=WHEN),
        Event(kind=EventKind.KEY, keys=["Tab"], timestamp=WHEN),
        Event(kind=EventKind.SCROLL, position=Point(x=1, y=2), scroll_dy=3, timestamp=WHEN),
    ]
    lines = [to_ai_mime(event) for event in events]
    assert lines[0] == {
        "action_type": "click",
        "action_details": {"button": "Button.left", "x": 0, "y": 2, "pressed": True},
        "screenshot": "screenshots/0.png",
        "timestamp": WHEN.timestamp(),
    }
    assert lines[3]["action_details"] == {"text": "hello"}
    assert [line["action_details"]["key"] for line in lines[4:8]] == [
        "CTRL+S",
        "ENTER",
        "CMD+SPACE",
        "TAB",
    ]
    assert lines[8]["action_details"] == {"x": 1, "y": 2, "dx": 0, "dy": -3}  # pynput: up is +
    assert [from_ai_mime(line) for line in lines] == events


def test_lines_written_by_ai_mime_itself_are_read() -> None:
    line = {
        "action_type": "click",
        "action_details": {"button": "Button.left", "x": 516.38, "y": 263.48, "pressed": True},
        "screenshot": "screenshots/1.png",
        "voice_clip": None,
        "timestamp": 1767877126.540363,
    }
    event = from_ai_mime(line)
    assert (event.kind, event.position, event.screenshot) == (
        EventKind.CLICK,
        Point(x=516, y=263),
        "screenshots/1.png",
    )
    assert from_ai_mime(
        {"action_type": "key", "action_details": {"key": "ESC"}, "timestamp": 1.0}
    ).keys == ["Escape"]
    with pytest.raises(ValueError, match="cannot read ai_mime line"):
        from_ai_mime({"action_type": "click", "action_details": {}, "timestamp": 1.0})
