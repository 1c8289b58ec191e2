"""Elements benchmark: reading accessibility trees, and what a snapshot costs a model.

    uv run python benchmarks/elements.py [--repeat N] [--out benchmarks/results/elements.md]

Side by side, round-robin, in one run:

- the GTK 3 form of the xvfb tests on an Xvfb display with its accessibility buses: a
  read by the ``atspi`` source (each level of the tree asked at once, one round trip per
  level) against the same questions asked one at a time;
- a page of 200 elements (buttons, fields, links) in headless Chromium: a read by the
  ``cdp`` source (accessibility tree and layout boxes) against the accessibility tree
  alone;
- starting a display with and without its accessibility buses;
- tokens of the compact snapshot against the whole tree as JSON, for both.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from viewfinder.cdp.elements import CdpElementSource
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import ElementTree, get_element_source, snapshot_text
from viewfinder.core.result_budget import estimate_tokens
from viewfinder.xvfb import Display
from viewfinder.xvfb.atspi import AtspiReader

ROOT = Path(__file__).resolve().parent.parent
GTK_FORM = ROOT / "plugins" / "xvfb" / "tests" / "gtk_form.py"


class OneAtATimeReader(AtspiReader):
    """The same reads, each question waiting for its answer before the next is sent."""

    def _exchange(self, messages: list[Any]) -> list[Any]:
        return [super(OneAtATimeReader, self)._exchange([message])[0] for message in messages]


def page_of_200() -> str:
    rows = []
    for index in range(50):
        rows.append(
            f"<div><button>Button {index}</button><input aria-label='Field {index}'>"
            f"<a href='#{index}'>Link {index}</a><span>Text {index}</span></div>"
        )
    return "<!doctype html><title>200</title><body>" + "".join(rows) + "</body>"


def timed(function: Any) -> float:
    start = time.perf_counter()
    function()
    return (time.perf_counter() - start) * 1000


def gtk_samples(repeat: int) -> tuple[dict[str, list[float]], ElementTree]:
    samples: dict[str, list[float]] = {"atspi, a level at a time": [], "one question at a time": []}
    with Display(640, 480, accessibility=True) as display:
        app = subprocess.Popen(
            ["/usr/bin/python3", str(GTK_FORM)],
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert app.stdout is not None and app.stdout.readline().strip() == "ready"
            with get_element_source("atspi", display=display.name) as source:
                tree = source.read()
                import viewfinder.xvfb.atspi as atspi

                for _ in range(repeat):
                    samples["atspi, a level at a time"].append(timed(source.read))
                    original = atspi.AtspiReader
                    atspi.AtspiReader = OneAtATimeReader  # type: ignore[misc]
                    try:
                        samples["one question at a time"].append(timed(source.read))
                    finally:
                        atspi.AtspiReader = original  # type: ignore[misc]
        finally:
            app.kill()
            app.wait()
    return samples, tree


def page_samples(repeat: int) -> tuple[dict[str, list[float]], ElementTree]:
    samples: dict[str, list[float]] = {"cdp, tree and boxes": [], "accessibility tree alone": []}
    with (
        serve_pages({"/page": page_of_200()}) as base,
        CdpElementSource(url=f"{base}/page", width=1280, height=4000) as source,
    ):
        tree = source.read()
        session = source.backend.session

        def tree_alone() -> None:
            source.backend.run(session.call("Accessibility.getFullAXTree"))

        for _ in range(repeat):
            samples["cdp, tree and boxes"].append(timed(source.read))
            samples["accessibility tree alone"].append(timed(tree_alone))
    return samples, tree


def start_samples(repeat: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"display": [], "display and accessibility buses": []}
    for _ in range(repeat):
        for name, accessibility in (("display", False), ("display and accessibility buses", True)):
            display = Display(320, 200, accessibility=accessibility)
            samples[name].append(timed(display.start))
            display.stop()
    return samples


def table(title: str, samples: dict[str, list[float]]) -> list[str]:
    medians = {name: statistics.median(values) for name, values in samples.items()}
    first = next(iter(medians.values()))
    lines = [f"| {title} | median ms | min-max ms | x first |", "|---|---:|---:|---:|"]
    for name, values in samples.items():
        lines.append(
            f"| {name} | {medians[name]:.1f} | {min(values):.1f}-{max(values):.1f} | "
            f"{medians[name] / first:.2f} |"
        )
    return lines


def tokens_row(name: str, tree: ElementTree) -> str:
    snapshot = snapshot_text(tree, max_tokens=25_000)
    shown = len(snapshot.splitlines()) - 1
    return (
        f"| {name} | {tree.count()} | {shown} | {estimate_tokens(snapshot)} | "
        f"{estimate_tokens(tree.model_dump_json(exclude={'read_at'}))} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    gtk, gtk_tree = gtk_samples(args.repeat)
    page, page_tree = page_samples(args.repeat)
    starts = start_samples(max(args.repeat // 4, 3))
    lines = [
        "## Elements: accessibility trees and snapshots",
        "",
        f"`uv run python benchmarks/elements.py --repeat {args.repeat}`: reads round-robin "
        f"in one run, {os.cpu_count()} cores. The GTK 3 form of the xvfb tests "
        f"({gtk_tree.count()} elements) read over AT-SPI with jeepney; a page of 200 "
        f"controls ({page_tree.count()} elements) in headless Chromium over CDP.",
        "",
        *table("GTK 3 form, AT-SPI", gtk),
        "",
        *table("200-control page, CDP", page),
        "",
        *table("start", starts),
        "",
        "| tree | elements | in the snapshot | snapshot tokens | whole tree as JSON, tokens |",
        "|---|---:|---:|---:|---:|",
        tokens_row("GTK 3 form", gtk_tree),
        tokens_row("200-control page", page_tree),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
