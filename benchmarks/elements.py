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
- tokens of the compact snapshot against the whole tree as JSON, for both;
- what the ComputerTool's screenshot result costs with its elements (``elements=True``,
  the XGA screenshot of a 1280x800 screen) against without, in tokens and time: on the
  GTK form, and on the page of 200 controls in Chromium shown on the display (its tree
  read over AT-SPI, ``--force-renderer-accessibility``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from viewfinder.cdp.elements import CdpElementSource
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import ElementTree, get_element_source, snapshot_text
from viewfinder.core.result_budget import estimate_tokens
from viewfinder.desktop import ComputerResult, ComputerTool
from viewfinder.desktop.testing import LoggedApp
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
    import viewfinder.xvfb.atspi as atspi

    with (
        Display(640, 480, accessibility=True) as display,
        LoggedApp(["/usr/bin/python3", str(GTK_FORM)], display.env()),
        get_element_source("atspi", display=display.name) as source,
        get_element_source("atspi", display=display.name) as one_at_a_time,
    ):
        tree = source.read()
        original = atspi.AtspiReader
        atspi.AtspiReader = OneAtATimeReader  # type: ignore[misc]
        try:
            one_at_a_time.read()  # its reader, kept for its reads, asks one at a time
        finally:
            atspi.AtspiReader = original  # type: ignore[misc]
        for _ in range(repeat):
            samples["atspi, a level at a time"].append(timed(source.read))
            samples["one question at a time"].append(timed(one_at_a_time.read))
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


def tool_samples(
    display: Display, repeat: int
) -> tuple[dict[str, list[float]], ComputerResult, ComputerResult]:
    """Screenshot results of a ComputerTool on ``display``, without and with elements."""
    samples: dict[str, list[float]] = {
        "screenshot, screen unchanged (its encoded frame reused)": [],
        "the same with elements (a tree read each time)": [],
    }
    plain_row, rich_row = samples
    with ComputerTool(display, target="XGA", elements=True) as tool:
        plain = tool({"action": "screenshot", "elements": False})
        rich = tool({"action": "screenshot"})
        for _ in range(repeat):
            samples[plain_row].append(
                timed(lambda: tool({"action": "screenshot", "elements": False}))
            )
            samples[rich_row].append(timed(lambda: tool({"action": "screenshot"})))
    return samples, plain, rich


def tool_on_gtk(repeat: int) -> tuple[dict[str, list[float]], ComputerResult, ComputerResult]:
    with (
        Display(1280, 800, accessibility=True) as display,
        LoggedApp(["/usr/bin/python3", str(GTK_FORM)], display.env()),
    ):
        return tool_samples(display, repeat)


def tool_on_chromium(repeat: int) -> tuple[dict[str, list[float]], ComputerResult, ComputerResult]:
    from viewfinder.cdp import launch_chromium
    from viewfinder.desktop.browser import BROWSER_FLAGS

    with (
        Display(1280, 800, accessibility=True) as display,
        serve_pages({"/page": page_of_200()}) as base,
    ):
        browser = launch_chromium(
            headless=False,
            width=1280,
            height=800,
            extra_args=[
                f"--display={display.name}",
                *BROWSER_FLAGS,
                "--force-renderer-accessibility",
                f"{base}/page",
            ],
            env=display.env(),  # Chromium joins the display's accessibility bus
        )
        try:
            deadline = time.monotonic() + 30
            with get_element_source("atspi", display=display.name) as source:
                while time.monotonic() < deadline:  # until the page's tree is on the bus
                    if any(e.name == "Button 49" for e in source.read().walk()):
                        break
                    time.sleep(0.5)
            return tool_samples(display, repeat)
        finally:
            browser.stop()


def tool_rows(name: str, plain: ComputerResult, rich: ComputerResult) -> str:
    assert plain.screenshot is not None and rich.elements is not None
    shot = plain.screenshot
    image_tokens = shot.width * shot.height // 750  # Anthropic's estimate for an image
    snapshot = rich.elements_text or ""
    shown = sum(1 for line in snapshot.splitlines()[1:] if line.lstrip().startswith("e"))
    return (
        f"| {name} | {shot.width}x{shot.height} | {image_tokens} | {rich.elements.count()} | "
        f"{shown} | {estimate_tokens(snapshot)} | {estimate_tokens(snapshot) / image_tokens:.2f} |"
    )


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
    gtk_tool, gtk_plain, gtk_rich = tool_on_gtk(max(args.repeat // 2, 3))
    page_tool, page_plain, page_rich = tool_on_chromium(max(args.repeat // 2, 3))
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
        "Snapshot tokens per screenshot: the ComputerTool's screenshot result with "
        "`elements=True` (XGA screenshot of a 1280x800 screen; the snapshot within its "
        "default budget, 2000 tokens), the page in Chromium on the display read over AT-SPI.",
        "",
        "| screen | screenshot | its tokens (w*h/750) | elements read | in the snapshot "
        "| snapshot tokens | x the image's |",
        "|---|---|---:|---:|---:|---:|---:|",
        tool_rows("GTK 3 form", gtk_plain, gtk_rich),
        tool_rows("200-control page in Chromium", page_plain, page_rich),
        "",
        *table("GTK 3 form, ComputerTool", gtk_tool),
        "",
        *table("200-control page in Chromium, ComputerTool", page_tool),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
