"""What the process table shows for processes, the browser and the display."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from viewfinder.tui.process import ProcessInfo
from viewfinder.tui.table_rows import browser_row, display_row, format_duration, table_rows

START = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def info(**changes: object) -> ProcessInfo:
    values: dict[str, object] = {
        "id": "web",
        "command": "python",
        "args": ("-m", "http.server"),
        "cwd": None,
        "pid": 4242,
        "started_at": START,
        "running": True,
    }
    values.update(changes)
    return ProcessInfo(**values)  # type: ignore[arg-type]


def test_format_duration() -> None:
    assert format_duration(timedelta(seconds=7.9)) == "7s"
    assert format_duration(timedelta(minutes=3, seconds=5)) == "3m05s"
    assert format_duration(timedelta(hours=2, minutes=4, seconds=59)) == "2h04m"


def test_process_rows() -> None:
    now = START + timedelta(seconds=75)
    running = info(last_line="Serving HTTP on 0.0.0.0 port 8000")
    ended = info(id="t", running=False, exit_code=2, ended_at=START + timedelta(seconds=3))
    killed = info(id="k", running=False, exit_code=-15, killed=True, ended_at=now)
    rows = table_rows([running, ended, killed], None, now)
    assert [row.key for row in rows] == ["browser", "p:web", "p:t", "p:k"]
    assert rows[1].cells == {
        "id": "web",
        "command": "python -m http.server",
        "pid": "4242",
        "time": "1m15s",
        "status": "running",
        "output": "Serving HTTP on 0.0.0.0 port 8000",
    }
    assert (rows[2].cells["time"], rows[2].cells["status"]) == ("3s", "failed 2")
    assert rows[3].cells["status"] == "killed"


def test_browser_and_display_rows_without_an_environment() -> None:
    row = browser_row(None)
    assert row.cells["status"] == "off" and "cdp_url" in row.cells["output"]
    assert display_row(None) is None
