"""Recorder elements benchmark: what naming the element under a click costs.

    uv run python benchmarks/recorder_elements.py [--repeat N] [--out FILE]

Side by side, round-robin, in one run, on an Xvfb display with its accessibility buses
and the GTK 3 form of the xvfb tests: ``recorder.click()`` (frame frozen, line written
and fsync-ed) by a recorder that names the element under the click and by one told not
to (``elements=False``), and the lookup alone (an AT-SPI read of the tree, the element
at the point, the check that its window is the one in front).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from viewfinder.core import elements
from viewfinder.desktop.testing import LoggedApp
from viewfinder.recorder import Recorder
from viewfinder.recorder.pointer_elements import PointerElements
from viewfinder.xvfb import Display

ROOT = Path(__file__).resolve().parent.parent
GTK_FORM = ROOT / "plugins" / "xvfb" / "tests" / "gtk_form.py"


def timed(function: Any) -> float:
    start = time.perf_counter()
    function()
    return (time.perf_counter() - start) * 1000


def samples(repeat: int) -> tuple[dict[str, list[float]], int]:
    found: dict[str, list[float]] = {
        "recorder.click(), no element (elements=False)": [],
        "recorder.click(), naming the element": [],
        "the lookup alone": [],
    }
    with (
        Display(640, 480, accessibility=True) as display,
        LoggedApp(["/usr/bin/python3", str(GTK_FORM)], display.env()),
    ):
        tree = elements("atspi", display=display.name)
        (save,) = [e for e in tree.walk() if e.name == "Save"]
        assert save.box is not None
        x, y = save.box.center.x, save.box.center.y
        lookups, why = PointerElements.for_display(display.name)
        assert lookups is not None, why
        options = {"display": display.name}
        with tempfile.TemporaryDirectory() as folder:
            off = Recorder(Path(folder, "off"), "xvfb", backend_options=options, elements=False)
            on = Recorder(Path(folder, "on"), "xvfb", backend_options=options)
            with off, on:
                for _ in range(repeat):
                    found["recorder.click(), no element (elements=False)"].append(
                        timed(lambda: off.click(x, y))
                    )
                    found["recorder.click(), naming the element"].append(
                        timed(lambda: on.click(x, y))
                    )
                    found["the lookup alone"].append(timed(lambda: lookups.at(x, y)))
            lookups.close()
    return found, tree.count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    found, count = samples(args.repeat)
    medians = {name: statistics.median(values) for name, values in found.items()}
    first = next(iter(medians.values()))
    lines = [
        "## Recorder: the element under each click",
        "",
        f"`uv run python benchmarks/recorder_elements.py --repeat {args.repeat}`: round-robin "
        f"in one run, {os.cpu_count()} cores; the GTK 3 form of the xvfb tests "
        f"({count} elements) on a 640x480 Xvfb with its accessibility buses.",
        "",
        "| per click | median ms | p90 ms | x first |",
        "|---|---:|---:|---:|",
    ]
    for name, values in found.items():
        p90 = sorted(values)[int(len(values) * 0.9)]
        lines.append(f"| {name} | {medians[name]:.1f} | {p90:.1f} | {medians[name] / first:.2f} |")
    text = "\n".join([*lines, ""])
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
