"""Browser benchmark: a screenshot through browser_execute vs Playwright vs a bare CDP call.

    uv run python benchmarks/browser.py [--rounds N] [--out benchmarks/results/browser.md]

In one run it launches one headless Chromium (1280x800) and serves one busy page on
loopback, then opens that page three times in that browser and takes screenshots,
png and jpeg (quality 85), round after round, the contenders interleaved:

- bare CDP: ``Page.captureScreenshot`` on viewfinder's CDP client plus the base64
  decode, timed inside the event loop (the floor: no tool around it);
- browser_execute: ``session.execute("await page.screenshot(...)")`` timed from the
  caller, so it includes the thread hop, running the snippet, the collector turning
  the tap's result into a Screenshot, the hook and the result;
- Playwright: ``page.screenshot(type=...)`` over ``connect_over_cdp`` to the same
  browser (its Node driver in between).

Then it measures the tap itself: what the collector's listener costs on a call that is
not a capture, and on a capture (decode, Screenshot, hook), against a capture's time.
It prints the markdown section and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import base64
import http.server
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import PIL
from playwright.sync_api import sync_playwright

from viewfinder.browser import BrowserSession, ScreenshotCollector
from viewfinder.browser.collector import screenshot_from_bytes
from viewfinder.browser.view import CURRENT_VIEW
from viewfinder.cdp import CDPSession, LoopThread, connect, launch_chromium
from viewfinder.cdp.listeners import ListenerList
from viewfinder.core import publish_screenshot
from viewfinder.core.imaging import DEFAULT_QUALITY

HERE = Path(__file__).parent
VIEWPORT = (1280, 800)
FORMATS = ("png", "jpeg")
CONTENDERS = ("bare CDP", "browser_execute", "Playwright")


def busy_page() -> str:
    """Text, colour blocks and a gradient: a page that compresses like a real one."""
    blocks = "".join(
        f'<div style="position:absolute; left:{(i * 97) % 1180}px; top:{(i * 53) % 700 + 60}px;'
        f" width:{40 + i % 7 * 10}px; height:{30 + i % 5 * 8}px;"
        f' background:hsl({i * 37 % 360}, 70%, 55%)"></div>'
        for i in range(80)
    )
    text = " ".join(f"word{i} lorem ipsum dolor sit amet" for i in range(300))
    return (
        "<!doctype html><title>bench</title><style>body{margin:0;font:14px sans-serif;"
        "background:linear-gradient(135deg,#fdfbfb,#e2ebf0)}</style>"
        f"<body><h1>viewfinder browser benchmark</h1><p>{text}</p>{blocks}</body>"
    )


@contextmanager
def serve(page: str) -> Iterator[str]:
    body = page.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Samples:
    ms: list[float] = field(default_factory=list)
    size: int = 0

    @property
    def median(self) -> float:
        return statistics.median(self.ms)

    @property
    def spread(self) -> tuple[float, float]:
        deciles = statistics.quantiles(self.ms, n=10, method="inclusive")
        return (deciles[0], deciles[-1])


def params(fmt: str) -> dict[str, Any]:
    return {"format": fmt} | ({"quality": DEFAULT_QUALITY} if fmt != "png" else {})


# -- the contenders -----------------------------------------------------------------------


class BareCdp:
    def __init__(self, ws_url: str, url: str) -> None:
        self.loop = LoopThread("bench-bare-cdp")
        self.connection = self.loop.run(connect(ws_url))
        self.page = self.loop.run(self._open(url))

    async def _open(self, url: str) -> CDPSession:
        # A window of its own, as browser_execute's pages have: a background tab is
        # not drawn and its captures hang.
        created = await self.connection.call(
            "Target.createTarget", {"url": "about:blank", "newWindow": True}
        )
        page = await CDPSession.attach(self.connection, created["targetId"])
        page.owns_target = True
        await page.set_viewport(*VIEWPORT)
        await page.navigate(url)
        return page

    def shot(self, fmt: str) -> tuple[float, int]:
        async def timed() -> tuple[float, int]:
            started = time.perf_counter()
            result = await self.page.call("Page.captureScreenshot", params(fmt))
            data = base64.b64decode(result["data"])
            return (time.perf_counter() - started) * 1000, len(data)

        return self.loop.run(timed())

    def evaluate(self) -> float:
        async def timed() -> float:
            started = time.perf_counter()
            await self.page.call("Runtime.evaluate", {"expression": "1", "returnByValue": True})
            return (time.perf_counter() - started) * 1000

        return self.loop.run(timed())

    def raw_result(self, fmt: str) -> dict[str, Any]:
        return self.loop.run(self.page.call("Page.captureScreenshot", params(fmt)))

    def close(self) -> None:
        self.loop.run(self.page.close())
        self.loop.run(self.connection.close())
        self.loop.stop()


class ViaBrowserExecute:
    def __init__(self, ws_url: str, url: str) -> None:
        self.session = BrowserSession(
            "bench", cdp_url=ws_url, url=url, width=VIEWPORT[0], height=VIEWPORT[1]
        )
        self.session.execute("return 1")  # opens the page

    def shot(self, fmt: str) -> tuple[float, int]:
        started = time.perf_counter()
        result = self.session.execute(f"await page.screenshot(format={fmt!r})")
        elapsed = (time.perf_counter() - started) * 1000
        assert result.ok and len(result.screenshots) == 1, result.output
        return elapsed, len(result.screenshots[0].data)

    def empty_call(self) -> float:
        started = time.perf_counter()
        result = self.session.execute("return 1")
        elapsed = (time.perf_counter() - started) * 1000
        assert result.result == 1, result.output
        return elapsed

    def evaluate(self) -> float:
        started = time.perf_counter()
        result = self.session.execute("return await page.evaluate('1')")
        elapsed = (time.perf_counter() - started) * 1000
        assert result.result == 1, result.output
        return elapsed

    def close(self) -> None:
        self.session.close()


class ViaPlaywright:
    def __init__(self, http_url: str, url: str) -> None:
        self.driver = sync_playwright().start()
        self.browser = self.driver.chromium.connect_over_cdp(http_url)
        context = self.browser.contexts[0]
        self.page = context.new_page()
        self.page.set_viewport_size({"width": VIEWPORT[0], "height": VIEWPORT[1]})
        self.page.goto(url)

    def shot(self, fmt: str) -> tuple[float, int]:
        started = time.perf_counter()
        if fmt == "png":
            data = self.page.screenshot(type="png")
        else:
            data = self.page.screenshot(type="jpeg", quality=DEFAULT_QUALITY)
        return (time.perf_counter() - started) * 1000, len(data)

    def close(self) -> None:
        self.page.close()
        self.browser.close()
        self.driver.stop()


# -- the tap ------------------------------------------------------------------------------


def per_call_us(fn: Callable[[], Any], repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - started) / repeat * 1e6


def tap_costs(bare: BareCdp) -> dict[str, float]:
    """Microseconds the collector's listener (with its attribution gate) takes: on a call
    that is not a capture, and on a capture, split into the base64 decode every client
    pays and the rest (image header, Screenshot, hook)."""
    collector = ScreenshotCollector({"backend": "cdp", "session_id": "bench", "call_id": "x"})
    marker = object()
    token = CURRENT_VIEW.set(marker)  # type: ignore[arg-type]

    def gated(method: str, p: dict[str, Any], result: dict[str, Any]) -> None:
        if CURRENT_VIEW.get() is marker:  # what view.on_own_call_result does
            collector.observe(method, p, result)

    async def dispatch(repeat: int) -> float:
        # The connection's own listener list, as call() runs it after every call.
        listeners = ListenerList("call-result")
        listeners.add(gated)
        CURRENT_VIEW.set(marker)  # type: ignore[arg-type]
        started = time.perf_counter()
        for _ in range(repeat):
            await listeners.emit("Runtime.evaluate", {}, {})
        return (time.perf_counter() - started) / repeat * 1e6

    costs = {"other call": bare.loop.run(dispatch(100_000))}
    for fmt in FORMATS:
        result, asked = bare.raw_result(fmt), params(fmt)
        data = base64.b64decode(result["data"], validate=True)

        def rest(data: bytes = data, asked: dict[str, Any] = asked) -> None:
            publish_screenshot(screenshot_from_bytes(data, asked), collector.context)

        costs[f"{fmt} decode"] = per_call_us(
            lambda r=result: base64.b64decode(r["data"], validate=True), 20
        )
        costs[f"{fmt} beyond decode"] = per_call_us(rest, 200)
        collector.screenshots.clear()
    CURRENT_VIEW.reset(token)
    return costs


# -- the run ------------------------------------------------------------------------------


OVERHEAD = (
    ("bare CDP: Runtime.evaluate('1')", "bare"),
    ("browser_execute: `return 1` (no CDP call)", "empty"),
    ("browser_execute: `return await page.evaluate('1')`", "evaluate"),
)


def run(
    rounds: int, warmup: int
) -> tuple[dict[tuple[str, str], Samples], dict[str, float], dict[str, Samples]]:
    samples = {(fmt, name): Samples() for fmt in FORMATS for name in CONTENDERS}
    overhead = {key: Samples() for _, key in OVERHEAD}
    with (
        serve(busy_page()) as url,
        launch_chromium(width=VIEWPORT[0], height=VIEWPORT[1]) as chromium,
    ):
        # Playwright first: its page opens in the browser's first window; the other two
        # get windows of their own, so no page is a background tab of another.
        playwright = ViaPlaywright(chromium.http_url, url)
        bare = BareCdp(chromium.ws_url, url)
        tool = ViaBrowserExecute(chromium.ws_url, url)
        contenders = {"bare CDP": bare, "browser_execute": tool, "Playwright": playwright}
        try:
            for index in range(warmup + rounds):
                for fmt in FORMATS:
                    # Rotate who goes first so no one always follows the same neighbour.
                    order = CONTENDERS[index % 3 :] + CONTENDERS[: index % 3]
                    for name in order:
                        elapsed, size = contenders[name].shot(fmt)
                        if index >= warmup:
                            samples[(fmt, name)].ms.append(elapsed)
                            samples[(fmt, name)].size = size
            for index in range(warmup + rounds * 4):
                timings = {
                    "bare": bare.evaluate(),
                    "empty": tool.empty_call(),
                    "evaluate": tool.evaluate(),
                }
                if index >= warmup:
                    for key, elapsed in timings.items():
                        overhead[key].ms.append(elapsed)
            taps = tap_costs(bare)
        finally:
            playwright.close()
            tool.close()
            bare.close()
    return samples, taps, overhead


def report(
    samples: dict[tuple[str, str], Samples],
    taps: dict[str, float],
    overhead: dict[str, Samples],
    rounds: int,
) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "## Browser tool",
        "",
        f"One headless Chromium, one busy page at {VIEWPORT[0]}x{VIEWPORT[1]} served on loopback, "
        f"opened once per contender; {rounds} interleaved rounds after warm-up. Python "
        f"{platform.python_version()}, Pillow {PIL.__version__}, {os.cpu_count()} CPUs, load "
        f"average {load:.2f} at the end; `uv run python benchmarks/browser.py`.",
        "",
        "### A screenshot, end to end (ms)",
        "",
        "| format | contender | median | p10-p90 | bytes | vs bare CDP | vs Playwright |",
        "|---|---|---|---|---|---|---|",
    ]
    for fmt in FORMATS:
        floor = samples[(fmt, "bare CDP")].median
        theirs = samples[(fmt, "Playwright")].median
        for name in CONTENDERS:
            s = samples[(fmt, name)]
            low, high = s.spread
            lines.append(
                f"| {fmt} | {name} | {s.median:.2f} | {low:.2f}-{high:.2f} | {s.size} | "
                f"{s.median / floor:.2f}x | {s.median / theirs:.2f}x |"
            )
    lines += [
        "",
        "Bare CDP is timed inside the event loop (call + base64 decode); browser_execute "
        "from the calling thread (thread hop, snippet, collector, hook, result); Playwright "
        "from its sync API (through its Node driver).",
        "",
        "### The tool's own cost, without a capture (ms)",
        "",
        "| call | median | p10-p90 |",
        "|---|---|---|",
        *(
            f"| {label} | {overhead[key].median:.3f} | "
            f"{overhead[key].spread[0]:.3f}-{overhead[key].spread[1]:.3f} |"
            for label, key in OVERHEAD
        ),
        "",
        "What browser_execute adds to the CDP calls a snippet makes: the thread hop to the "
        "session's loop, running the snippet (compiled once and cached), its session view "
        "and the result.",
        "",
        "### The tap (µs per call; target: under 1% of a capture)",
        "",
        "| what | µs | share of a bare CDP capture of the same format |",
        "|---|---|---|",
    ]
    png_floor_us = samples[("png", "bare CDP")].median * 1000
    lines.append(
        f"| tap on any call: listener dispatch + attribution gate | {taps['other call']:.2f} | "
        f"{taps['other call'] / png_floor_us * 100:.5f}% (of a png capture) |"
    )
    for fmt in FORMATS:
        floor_us = samples[(fmt, "bare CDP")].median * 1000
        beyond, decode = taps[f"{fmt} beyond decode"], taps[f"{fmt} decode"]
        lines.append(
            f"| {fmt} capture: collector's own work (image header, Screenshot, hook) | "
            f"{beyond:.1f} | {beyond / floor_us * 100:.3f}% |"
        )
        lines.append(
            f"| {fmt} capture: base64 decode of the image | {decode:.1f} | "
            f"{decode / floor_us * 100:.2f}% |"
        )
    lines += [
        "",
        "The decode turns CDP's base64 text into image bytes; every client pays it once "
        "(bare CDP's timing above includes it, Playwright does it too), and "
        "browser_execute pays it once per screenshot, in the collector (`page.screenshot()` "
        "reuses the collector's Screenshot). The hook row runs the "
        "`viewfinder_screenshot_captured` observers installed in this environment.",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "browser.md")
    args = parser.parse_args()
    samples, taps, overhead = run(args.rounds, args.warmup)
    text = report(samples, taps, overhead, args.rounds)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
