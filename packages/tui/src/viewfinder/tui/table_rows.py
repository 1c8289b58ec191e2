"""What the process table shows for a process, the browser and the display."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from viewfinder.tui.process import ProcessInfo
from viewfinder.tui.widgets.process_table import TableRow

if TYPE_CHECKING:
    from viewfinder.tui.environment import ViewfinderEnvironment

BROWSER_ROW = "browser"
DISPLAY_ROW = "display"
#: Process rows are keyed "p:<id>" so that no process id can clash with the fixed rows.
PROCESS_KEY_PREFIX = "p:"


def format_duration(duration: timedelta) -> str:
    """``7s``, ``3m05s``, ``2h04m``: short, and growing to the left."""
    seconds = int(duration.total_seconds())
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def process_row(info: ProcessInfo, now: datetime) -> TableRow:
    return TableRow(
        key=PROCESS_KEY_PREFIX + info.id,
        cells={
            "id": info.id,
            "command": info.command_line,
            "pid": str(info.pid),
            "time": format_duration(info.running_time(now)),
            "status": info.status,
            "output": info.last_line or "",
        },
    )


def browser_row(environment: ViewfinderEnvironment | None) -> TableRow:
    """CDP ready and the page's URL; or why there is no browser."""
    cells = {"id": BROWSER_ROW, "command": "", "pid": "", "time": "", "status": "off"}
    browser = environment.browser if environment is not None else None
    if browser is not None:
        cells["command"] = browser.endpoint
        cells["pid"] = str(browser.pid) if browser.pid is not None else "attached"
        cells["status"] = "CDP ready" if browser.ready else "CDP closed"
        cells["output"] = browser.url
    elif environment is not None and environment.browser_error:
        cells["status"] = "failed"
        cells["output"] = environment.browser_error.splitlines()[0]
    else:
        cells["output"] = 'no browser ([browser] cdp_url = "auto" or a URL)'
    return TableRow(BROWSER_ROW, cells)


def display_row(environment: ViewfinderEnvironment | None) -> TableRow | None:
    """The Xvfb display GUI processes draw on, when the environment has one."""
    display = environment.display if environment is not None else None
    if display is None:
        return None
    width, height = display.size
    return TableRow(
        DISPLAY_ROW,
        {
            "id": DISPLAY_ROW,
            "command": f"Xvfb {display.name}",
            "pid": str(display.pid or ""),
            "time": "",
            "status": "running" if display.is_alive() else "stopped",
            "output": f"{width}x{height}, DISPLAY={display.name} for processes",
        },
    )


def table_rows(
    processes: list[ProcessInfo], environment: ViewfinderEnvironment | None, now: datetime
) -> list[TableRow]:
    """Browser, display, then every process in the order they started."""
    rows = [browser_row(environment)]
    display = display_row(environment)
    if display is not None:
        rows.append(display)
    rows.extend(process_row(info, now) for info in processes)
    return rows
