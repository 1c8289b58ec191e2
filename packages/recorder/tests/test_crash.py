"""A recorder killed with SIGKILL mid-session leaves a session that reads whole."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from PIL import Image

from viewfinder.core import Event
from viewfinder.recorder import Recorder, load_session, read_session
from viewfinder.xvfb import Display


def check_whole(folder: Path) -> int:
    raw = (folder / "manifest.jsonl").read_bytes()
    assert raw.endswith(b"\n")
    seqs = []
    for line in raw.decode().splitlines():
        data = json.loads(line)  # every line is valid JSON...
        event = Event.from_manifest(data)  # ...and a valid event
        assert event.screenshot == f"screenshots/{data['seq']}.png"
        with Image.open(folder / event.screenshot) as image:  # ...whose frame is whole
            image.load()
        seqs.append(data["seq"])
    assert seqs == list(range(len(seqs)))
    return len(seqs)


def test_sigkill_mid_session_leaves_whole_lines_and_every_frame(
    tmp_path: Path, display: Display, kill_mid_session: Callable[..., int]
) -> None:
    folder = tmp_path / "session"
    kill_mid_session(folder, display, 60)
    count = check_whole(folder)
    session = read_session(folder)
    assert session.torn_bytes == 0 and session.missing_frames() == []
    assert session.metadata.status == "recording"  # it never got to say it stopped
    assert len(load_session(folder)) == count

    # Killed again after resuming: still whole, numbering carried on.
    kill_mid_session(folder, display, count + 40)
    assert check_whole(folder) >= count + 40

    with Recorder(
        folder, "xvfb", backend_options={"display": display.name}, resume=True
    ) as recorder:
        recorder.key("Return")
    summary = recorder.stop()
    assert summary.total_events == check_whole(folder)
    assert read_session(folder).metadata.status == "stopped"
