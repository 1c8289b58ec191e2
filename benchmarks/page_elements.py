"""Page elements benchmark: the ``cdp`` source's read plus snapshot against Playwright's
``aria_snapshot`` of the same 5,000-element page.

    uv run python benchmarks/page_elements.py [--repeat N] [--out FILE]

Side by side, round-robin, in one run, on the same page served on loopback: one
headless system Chromium read by viewfinder's ``cdp`` source (``read()`` then
``snapshot_text``), one driven by Playwright (``page.locator("body").aria_snapshot()``)
through its ``executable_path`` (no browser is downloaded). Playwright comes from PyPI
into a venv of its own (``.venv-playwright``, made on first run), never the workspace's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from viewfinder.cdp import launch_chromium
from viewfinder.cdp.elements import CdpElementSource
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import snapshot_text

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-playwright"
CHROMIUM = "/usr/bin/chromium"
#: Playwright's side: one browser, the page loaded once, N timed aria snapshots, as JSON.
PLAYWRIGHT = """
import json, sys, time
from playwright.sync_api import sync_playwright
url, repeat = sys.argv[1], int(sys.argv[2])
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=sys.argv[3], args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url)
    page.locator("body").aria_snapshot()  # warm
    print("ready", flush=True)
    for line in sys.stdin:
        start = time.perf_counter()
        text = page.locator("body").aria_snapshot()
        print(json.dumps([time.perf_counter() - start, len(text)]), flush=True)
    browser.close()
"""


def page_of(count: int) -> str:
    """A page of ``count`` DOM elements: rows of a link, a button, a field and a text."""
    rows = "".join(
        f"<li><a href='#r{i}'>Row {i}</a> <button>Delete {i}</button>"
        f" <input aria-label='Note {i}' value='n{i}'> <span>text {i}</span></li>"
        for i in range(count // 5)
    )
    return f"<!doctype html><title>big</title><body><ul>{rows}</ul></body>"


def playwright_python() -> str:
    python = VENV / "bin" / "python"
    if not python.exists():
        uv = ["uv"] if subprocess.call(["which", "uv"], stdout=subprocess.DEVNULL) == 0 else []
        uv = uv or [sys.executable, "-m", "uv"]
        subprocess.run([*uv, "venv", "--quiet", "--python", "3.11", str(VENV)], check=True)
        subprocess.run(
            [*uv, "pip", "install", "--quiet", "--python", str(python), "playwright"], check=True
        )
    return str(python)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    ours: list[float] = []
    theirs: list[float] = []
    with (
        serve_pages({"/": page_of(5000)}) as base,
        launch_chromium() as browser,
        CdpElementSource(url=f"{base}/", cdp_url=browser.ws_url) as source,
    ):
        playwright = subprocess.Popen(
            [playwright_python(), "-c", PLAYWRIGHT, f"{base}/", str(args.repeat), CHROMIUM],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert playwright.stdin is not None and playwright.stdout is not None
        assert playwright.stdout.readline().strip() == "ready"
        tree = source.read()  # warm
        dom = source.backend.run(
            source.backend.session.evaluate("document.querySelectorAll('*').length")
        )
        for _ in range(args.repeat):  # round-robin: one of each in turn
            start = time.perf_counter()
            tree = source.read()
            text = snapshot_text(tree)
            ours.append(time.perf_counter() - start)
            playwright.stdin.write("go\n")
            playwright.stdin.flush()
            seconds, chars = json.loads(playwright.stdout.readline())
            theirs.append(seconds)
        playwright.stdin.close()
        playwright.wait(timeout=60)
    lines = [
        "## Page elements: the cdp source against Playwright's aria snapshot",
        "",
        f"`uv run python benchmarks/page_elements.py --repeat {args.repeat}`: round-robin in "
        f"one run, {os.cpu_count()} cores shared. A page of {dom} DOM elements (rows of a "
        "link, a button, a field and a text) on loopback; each side its own headless system "
        "Chromium. viewfinder: `CdpElementSource.read()` (one script in an isolated world: "
        "roles, names, states and boxes; boxes clipped) then `snapshot_text`; Playwright "
        "(`.venv-playwright`, PyPI): `page.locator('body').aria_snapshot()`.",
        "",
        "| read | median ms | p90 ms | elements / characters |",
        "|---|---:|---:|---:|",
        row("viewfinder cdp read + snapshot", ours, f"{tree.count()} elements"),
        row("Playwright aria_snapshot", theirs, f"{chars} characters"),
        "",
        f"Snapshot text: {len(text)} characters.",
    ]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)


def row(name: str, samples: list[float], size: str) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    median = statistics.median(samples)
    return f"| {name} | {median * 1000:.0f} | {p90 * 1000:.0f} | {size} |"


if __name__ == "__main__":
    main()
