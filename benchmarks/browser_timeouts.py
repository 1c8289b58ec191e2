"""Timeouts that hold: how far past ``timeout=T`` a browser_execute call returns, and
whether the next call works, when the page or the browser misbehaves.

    uv run python benchmarks/browser_timeouts.py [--rounds N] [--out FILE.md]

Cases, each ``--rounds`` times with T = 2 s, in Chromiums of the benchmark's own:

- a script loop in the page (``while (true) {}``);
- ``alert()`` (answered at once: no timeout at all);
- a hung renderer (every renderer of the browser stopped with SIGSTOP);
- a hung browser we launched (its main process stopped with SIGSTOP);
- a hung attached browser (the same, but not ours to kill).

For the script loop, Playwright (async API over ``connect_over_cdp`` to the same kind
of browser) runs side by side: ``page.evaluate`` has no timeout of its own, so the
caller bounds it with ``asyncio.wait_for(..., T)``, as a user would; then its next
call is given 5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import time
from contextlib import suppress
from pathlib import Path

from playwright.async_api import async_playwright

from viewfinder.browser import BrowserSession
from viewfinder.cdp import launch_chromium
from viewfinder.cdp.testing import renderer_pids, stopped

HERE = Path(__file__).parent
T = 2.0
PAGE = "data:text/html,<title>t</title><p>timeouts</p>"


class Case:
    def __init__(self, name: str) -> None:
        self.name = name
        self.overrun: list[float] = []
        self.next_ok = 0
        self.next_s: list[float] = []
        self.says = ""

    def record(self, session: BrowserSession, code: str, after: str = "return 1") -> None:
        start = time.monotonic()
        result = session.execute(code, T)
        self.overrun.append(time.monotonic() - start - T)
        if result.error is not None:
            self.says = result.error.message.split(". ", 1)[-1]
        start = time.monotonic()
        try:
            nxt = session.execute(after, 30)
            self.next_ok += nxt.ok
        except Exception as exc:  # a failed next call is what is being counted
            self.says += f" (next call: {type(exc).__name__})"
        self.next_s.append(time.monotonic() - start)


def viewfinder_cases(rounds: int) -> list[Case]:
    loop, alert, renderer, ours, theirs = (
        Case("script loop (`while (true) {}`)"),
        Case("`alert()` (answered, no timeout)"),
        Case("hung renderer (SIGSTOP)"),
        Case("hung browser, launched by us (SIGSTOP)"),
        Case("hung browser, attached (SIGSTOP, continued before the next call)"),
    )
    with (
        launch_chromium(width=1280, height=800) as chrome,
        BrowserSession("b", cdp_url=chrome.ws_url, url=PAGE) as session,
    ):
        session.execute("return 1", 30)
        for _ in range(rounds):
            loop.record(session, "await page.evaluate('while (true) {}')")
            alert.record(session, "return await page.evaluate('alert(1); 2')")
            with stopped(renderer_pids(chrome)):
                renderer.record(session, "return await page.evaluate('1')")
            with stopped([chrome.pid]):
                start = time.monotonic()
                result = session.execute("return await page.evaluate('1')", T)
                theirs.overrun.append(time.monotonic() - start - T)
                theirs.says = (result.error.message if result.error else "").split(". ", 1)[-1]
            start = time.monotonic()
            theirs.next_ok += session.execute("return 1", 30).ok
            theirs.next_s.append(time.monotonic() - start)
    with BrowserSession("own", url=PAGE) as session:
        session.execute("return 1", 30)
        for _ in range(rounds):
            process = session.browser.process
            assert process is not None
            with stopped([process.pid]):
                ours.record(session, "return await page.evaluate('1')")
    return [loop, alert, renderer, ours, theirs]


async def playwright_loop(rounds: int) -> Case:
    case = Case("script loop, Playwright (`wait_for(page.evaluate(...), T)`)")
    with launch_chromium(width=1280, height=800) as chrome:
        async with async_playwright() as driver:
            for _ in range(rounds):
                browser = await driver.chromium.connect_over_cdp(chrome.http_url)
                page = await browser.new_page()
                await page.goto(PAGE)
                start = time.monotonic()
                with suppress(TimeoutError):
                    await asyncio.wait_for(page.evaluate("while (true) {}"), T)
                case.overrun.append(time.monotonic() - start - T)
                start = time.monotonic()
                try:
                    await asyncio.wait_for(page.evaluate("1"), 5)
                    case.next_ok += 1
                except TimeoutError:
                    case.says = "the page is still stuck in the loop: the next call got no answer"
                case.next_s.append(time.monotonic() - start)
                await page.close(run_before_unload=False)
                await browser.close()
    return case


def report(cases: list[Case], rounds: int) -> str:
    load = os.getloadavg()[0]
    lines = [
        "## Browser timeouts",
        "",
        f"`browser_execute(timeout={T:g})` against a page or browser that misbehaves; "
        f"{rounds} rounds per case, 1280x800, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {load:.2f} at the end; "
        "`uv run python benchmarks/browser_timeouts.py`. The contract: a call returns "
        "within T + 1 s, and the next call works.",
        "",
        "| case | past T: median | max | next call works | next call took (median) "
        "| what the result says |",
        "|---|---|---|---|---|---|",
    ]
    for case in cases:
        lines.append(
            f"| {case.name} | {statistics.median(case.overrun):+.2f} s | "
            f"{max(case.overrun):+.2f} s | {case.next_ok}/{len(case.overrun)} | "
            f"{statistics.median(case.next_s):.2f} s | {case.says or '-'} |"
        )
    lines += [
        "",
        "A negative figure is a call that ended before its timeout (the alert is answered "
        "at once). After a hung browser that we launched, the next call includes "
        "launching a new Chromium. A snippet that blocks its own event loop "
        "(`time.sleep`) is not in the table: it is noticed 2 s past its deadline, "
        "since the loop that would cancel it is the one it blocks.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "browser_timeouts.md")
    args = parser.parse_args()
    cases = viewfinder_cases(args.rounds)
    cases.insert(1, asyncio.run(playwright_loop(args.rounds)))
    text = report(cases, args.rounds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
