"""AT-SPI read benchmark: the ``atspi`` source against a direct libatspi read.

    uv run python benchmarks/atspi_read.py [--repeat N] [--out benchmarks/results/atspi_read.md]

Side by side, round-robin, in one run, on the same tree of the same app on an Xvfb
display with its accessibility buses:

- ~42 elements: ``gtk_many.py 19`` of the xvfb tests (a GTK 3 window of 19 rows and
  11 buttons);
- ~261 elements: ``gtk3-widget-factory`` (Debian's gtk-3-examples);
- ~1207 elements: ``gtk_many.py 1184``.

Each round reads once with ``get_element_source("atspi")`` (refs and all) and once
with libatspi (PyGObject's ``gi.repository.Atspi`` in the system Python, asking each
element what the source asks: benchmarks/libatspi_read.py), its cache cleared first
so that it asks the app; a third column is libatspi keeping its cache across reads
(what it answers without asking again).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from pathlib import Path

from viewfinder.core import get_element_source
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

ROOT = Path(__file__).resolve().parent.parent
GTK_MANY = ROOT / "plugins" / "xvfb" / "tests" / "gtk_many.py"
LIBATSPI_READ = ROOT / "benchmarks" / "libatspi_read.py"
SYSTEM_PYTHON = "/usr/bin/python3"
TREES = {
    "GTK window, 19 rows": [SYSTEM_PYTHON, str(GTK_MANY), "19"],
    "gtk3-widget-factory": ["gtk3-widget-factory"],
    "GTK window, 1184 rows": [SYSTEM_PYTHON, str(GTK_MANY), "1184"],
}


class LibatspiReader:
    """benchmarks/libatspi_read.py running in the system Python, reading on demand."""

    def __init__(self, env: dict[str, str], *, keep_cache: bool) -> None:
        env = {**env, "LIBATSPI_CACHE": "keep" if keep_cache else "clear"}
        self.process = subprocess.Popen(
            [SYSTEM_PYTHON, "-W", "ignore", str(LIBATSPI_READ)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def read(self) -> tuple[int, float]:
        """(elements, ms) of one read."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("read\n")
        self.process.stdin.flush()
        count, ms = self.process.stdout.readline().split()
        return int(count), float(ms)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def started(display: Display, command: list[str]) -> LoggedApp | subprocess.Popen[bytes]:
    if command[0] == SYSTEM_PYTHON:
        return LoggedApp(command, display.env())
    return subprocess.Popen(
        command, env=display.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def samples(command: list[str], repeat: int) -> tuple[int, dict[str, list[float]]]:
    rows: dict[str, list[float]] = {
        "atspi source (jeepney, a level at a time)": [],
        "libatspi, its cache cleared each read": [],
        "libatspi, its cache kept": [],
    }
    ours, cleared, kept = rows
    with Display(1280, 800, accessibility=True) as display:
        app = started(display, command)
        try:
            with get_element_source("atspi", display=display.name) as source:
                deadline = time.monotonic() + 30
                count = source.read().count()
                while time.monotonic() < deadline:  # until the whole tree is up
                    time.sleep(1.0)
                    again = source.read().count()
                    if again == count and count > 1:
                        break
                    count = again
                fresh = LibatspiReader(display.env(), keep_cache=False)
                cached = LibatspiReader(display.env(), keep_cache=True)
                try:
                    for _ in range(repeat):
                        start = time.perf_counter()
                        tree = source.read()
                        rows[ours].append((time.perf_counter() - start) * 1000)
                        elements, ms = fresh.read()
                        assert elements == tree.count(), (elements, tree.count())
                        rows[cleared].append(ms)
                        rows[kept].append(cached.read()[1])
                finally:
                    fresh.close()
                    cached.close()
        finally:
            if isinstance(app, LoggedApp):
                app.stop()
            else:
                app.kill()
                app.wait(timeout=10)
    return count, rows


def table(title: str, count: int, rows: dict[str, list[float]]) -> list[str]:
    medians = {name: statistics.median(values) for name, values in rows.items()}
    first = next(iter(medians.values()))
    lines = [
        f"| {title} ({count} elements) | median ms | min-max ms | x the atspi source |",
        "|---|---:|---:|---:|",
    ]
    for name, values in rows.items():
        lines.append(
            f"| {name} | {medians[name]:.1f} | {min(values):.1f}-{max(values):.1f} | "
            f"{medians[name] / first:.2f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    lines = [
        "## AT-SPI reads: the atspi source against libatspi",
        "",
        f"`uv run python benchmarks/atspi_read.py --repeat {args.repeat}`: round-robin in "
        "one run on a machine of 2 cores shared with other work; the last column is each "
        "row's median over the first row's (above 1: slower than the atspi source). "
        "libatspi runs in the system Python (PyGObject, gir1.2-atspi-2.0) and asks what "
        "the source asks; with its cache kept it answers part of each read from what it "
        "learnt before, without asking the app (so that part may be stale).",
        "",
    ]
    for title, command in TREES.items():
        count, rows = samples(command, args.repeat)
        lines += [*table(title, count, rows), ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
