"""Browser toolset benchmark: a 10-step form task through ``browser_toolset_20260801``
members (``BrowserToolset.run`` on SDK-shaped ``tool_use`` blocks) against the same
task driven by Playwright directly from Python.

    uv run python benchmarks/browser_toolset.py [--rounds N] [--out FILE]

Side by side, alternating, in one run: each side its own headless system Chromium
(``/usr/bin/chromium``; Playwright through ``executable_path``, nothing downloaded), the
same page on loopback, a 1280x800 viewport. Every round checks that the form arrived
with every value. The model's own time between steps is not measured: this is the
executor's part of each step.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from viewfinder.browser.toolset import BrowserToolset
from viewfinder.cdp.testing import serve_pages

CHROMIUM = "/usr/bin/chromium"
FORM = """<!doctype html><title>Order</title><main><h1>Order</h1>
<form action="/done">
<label>Email <input name="email"></label>
<label>Name <input name="name"></label>
<label>Plan <select name="plan"><option value="free">Free</option>
  <option value="pro">Pro</option></select></label>
<label><input type="checkbox" name="agree" value="yes"> I agree</label>
<label>Avatar <input type="file" name="avatar"></label>
<button>Submit</button></form></main>"""
DONE = """<!doctype html><title>Done</title><main><h1>Thanks</h1><p id="got"></p>
<script>document.getElementById('got').textContent =
  decodeURIComponent(location.search.slice(1)).replace(/&/g, ' ');</script></main>"""
STEPS = [
    "navigate to the form",
    "read the page (toolset: read_page interactive; Playwright: aria_snapshot)",
    "fill Email",
    "fill Name",
    "choose the Pro plan",
    "check I agree",
    "upload the avatar",
    "click Submit, wait for the next page",
    "read the page text",
    "screenshot",
]
EXPECTED = "email=ada@example.org name=Ada Lovelace plan=pro agree=yes avatar=avatar.png"


def toolset_task(browser: BrowserToolset, url: str, upload: str) -> list[float]:
    """The task as a model drives it: one member ``tool_use`` block per step."""
    ids = iter(range(1, 100))
    refs: dict[str, str] = {}

    def member(name: str, **arguments: Any) -> str:
        block = {
            "type": "tool_use",
            "id": f"toolu_{next(ids)}",
            "name": name,
            "toolset_name": "browser",
            "input": arguments,
        }
        result = browser.run(block)
        text = "\n".join(part["text"] for part in result["content"] if part["type"] == "text")
        assert not result.get("is_error"), text
        return text

    def target(name: str) -> dict[str, str]:
        return {"type": "ref", "ref": refs[name]}

    def read() -> None:
        tree = member("read_page", filter="interactive")
        for line in tree.splitlines():
            found = re.match(r'\s*(\w+) "([^"]*)" \[(ref_\d+)\]', line)
            if found:
                refs[found.group(2)] = found.group(3)

    steps: list[Callable[[], object]] = [
        lambda: member("navigate", url=url),
        read,
        lambda: member("form_input", target=target("Email"), value="ada@example.org"),
        lambda: member("form_input", target=target("Name"), value="Ada Lovelace"),
        lambda: member("form_input", target=target("Plan"), value="Pro"),
        lambda: member("form_input", target=target("I agree"), value=True),
        lambda: member("file_upload", target=target("Avatar"), paths=[upload]),
        lambda: member("left_click", target=target("Submit")),
        lambda: _check(member("get_page_text")),
        lambda: member("screenshot"),
    ]
    return _timed(steps)


def playwright_task(page: Any, url: str, upload: str) -> list[float]:
    """The same task in Playwright's Python API, by label and role."""
    steps: list[Callable[[], object]] = [
        lambda: page.goto(url),
        lambda: page.locator("body").aria_snapshot(),
        lambda: page.get_by_label("Email").fill("ada@example.org"),
        lambda: page.get_by_label("Name").fill("Ada Lovelace"),
        lambda: page.get_by_label("Plan").select_option(label="Pro"),
        lambda: page.get_by_label("I agree").check(),
        lambda: page.get_by_label("Avatar").set_input_files(upload),
        lambda: (
            page.get_by_role("button", name="Submit").click(),
            page.wait_for_load_state("load"),
        ),
        lambda: _check(page.inner_text("body")),
        lambda: page.screenshot(),
    ]
    return _timed(steps)


def _version() -> str:
    from importlib.metadata import version

    return version("playwright")


def _check(text: str) -> None:
    assert EXPECTED in text.replace("+", " "), text


def _timed(steps: list[Callable[[], object]]) -> list[float]:
    times = []
    for step in steps:
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    ours: list[list[float]] = []
    theirs: list[list[float]] = []
    with (
        tempfile.TemporaryDirectory() as folder,
        serve_pages({"/": FORM, "/done": DONE}) as base,
        BrowserToolset(configs={"file_upload": {"enabled": True}}) as browser,
        sync_playwright() as playwright,
    ):
        upload = str(Path(folder) / "avatar.png")
        Path(upload).write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(1000))
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = chromium.new_page(viewport={"width": 1280, "height": 800})
        toolset_task(browser, f"{base}/", upload)  # warm both
        playwright_task(page, f"{base}/", upload)
        for _ in range(args.rounds):  # alternating: one of each in turn
            ours.append(toolset_task(browser, f"{base}/", upload))
            theirs.append(playwright_task(page, f"{base}/", upload))
        chromium.close()
    report = _report(args.rounds, ours, theirs)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)


def _report(rounds: int, ours: list[list[float]], theirs: list[list[float]]) -> str:
    def median_ms(samples: list[float]) -> float:
        return statistics.median(samples) * 1000

    lines = [
        "## Browser toolset: a 10-step form task against Playwright",
        "",
        f"`uv run python benchmarks/browser_toolset.py --rounds {rounds}`: alternating in one "
        f"run, {os.cpu_count()} cores shared. viewfinder: `BrowserToolset.run()` on each "
        "member's `tool_use` block (refs from `read_page`, set by `form_input` and "
        "`file_upload`, Submit clicked by ref with the hit check, the load waited for, the "
        "`tool_result` built with its `browser_state`); "
        f"Playwright {_version()} from Python, by label and role. Each its own headless "
        "system Chromium, 1280x800. Every round checked that "
        "the next page got every value. Medians in ms; the model's time between steps is "
        "not in either column.",
        "",
        "| step | browser toolset | Playwright | ratio |",
        "|---|---:|---:|---:|",
    ]
    for index, step in enumerate(STEPS):
        mine = median_ms([run[index] for run in ours])
        other = median_ms([run[index] for run in theirs])
        lines.append(f"| {index + 1}. {step} | {mine:.1f} | {other:.1f} | {mine / other:.2f}x |")
    total_ours = median_ms([sum(run) for run in ours])
    total_theirs = median_ms([sum(run) for run in theirs])
    lines += [
        f"| **the task** | **{total_ours:.0f}** | **{total_theirs:.0f}** | "
        f"**{total_ours / total_theirs:.2f}x** |",
        "",
        f"Per step: {total_ours / len(STEPS):.1f} ms through the toolset, "
        f"{total_theirs / len(STEPS):.1f} ms with Playwright.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
