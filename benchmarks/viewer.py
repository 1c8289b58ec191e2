"""Viewer benchmark: the live view's cost and speed, and opening a long session.

    uv run python benchmarks/viewer.py [--window S] [--repeat N] [--out FILE]

In one run, on a real Xvfb at 1280x800 with a Tk scene, ``viewfinder view --live :N``
started as its own process and watched by a real Chromium (Playwright):

- the viewer process's CPU (share of one core) on a still screen and with a square
  that changes colour 10 times a second, against a naive streamer (grab and encode the
  whole screen as JPEG 10 times a second, whatever changed) in a process of its own;
- frames a second the page drew while the screen changed 10 and 30 times a second;
- the time from a draw on the display (the root window painted through Xlib) to the
  page's canvas holding the new colour, measured by the page's own clock;
- the time from opening a 10,000-step session (and a 100-step one) to its first step's
  frame on the page, and how many thumbnails the page asked for by then.

CPU figures are the median of ``--repeat`` windows of ``--window`` seconds.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import PIL
from PIL import Image

from viewfinder.core import Event, EventKind, Point, ScreenSize
from viewfinder.recorder import SessionMetadata
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
WIDTH, HEIGHT = 1280, 800
CHROMIUM = "/usr/bin/chromium"

# A window with text and boxes; with a rate, a 120x120 square changes colour that many
# times a second (and nothing else moves).
SCENE = r"""
import sys, tkinter as tk
width, height, rate = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
root = tk.Tk(); root.geometry(f"{width}x{height}+0+0")
canvas = tk.Canvas(root, width=width, height=height, bg="#f4f6f9", highlightthickness=0)
canvas.pack()
for row in range(30):
    canvas.create_text(40, 30 + row * 24, anchor="w", font=("DejaVu Sans", 11),
                       text=f"row {row}: capture frame display region window pixel agent")
square = canvas.create_rectangle(900, 300, 1020, 420, fill="#ff0000", width=0)
colours = ["#ff0000", "#00a000", "#0000ff", "#ffaa00"]
count = [0]
def tick():
    count[0] += 1
    canvas.itemconfigure(square, fill=colours[count[0] % 4])
    root.after(int(1000 / rate), tick)
root.update()
if rate > 0:
    root.after(int(1000 / rate), tick)
print("ready", flush=True)
root.mainloop()
"""

# The naive contender: grab the whole screen and encode it as JPEG at a fixed rate.
NAIVE = r"""
import io, sys, time
from viewfinder.xvfb.grab import ScreenGrab
grab = ScreenGrab(sys.argv[1]); period = 1 / float(sys.argv[2])
print("ready", flush=True)
while True:
    started = time.monotonic()
    image = grab.image(); out = io.BytesIO(); image.save(out, "JPEG", quality=80)
    time.sleep(max(0.0, period - (time.monotonic() - started)))
"""


class Figure:
    def __init__(self, values: list[float]) -> None:
        self.values = sorted(values)
        self.median = statistics.median(values)

    def cell(self, digits: int = 2) -> str:
        return f"{self.median:.{digits}f}"

    def spread(self, digits: int = 2) -> str:
        return f"{self.values[0]:.{digits}f}-{self.values[-1]:.{digits}f}"


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_share(pid: int, window: float, repeat: int) -> Figure:
    shares = []
    for _ in range(repeat):
        cpu0, wall0 = process_cpu(pid), time.monotonic()
        time.sleep(window)
        shares.append(100 * (process_cpu(pid) - cpu0) / (time.monotonic() - wall0))
    return Figure(shares)


@contextmanager
def program(args: list[str], env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """A process that prints one first line when it is ready; killed afterwards."""
    process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        process.first_line = process.stdout.readline()  # type: ignore[attr-defined]
        yield process
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def scene(display: Display, rate: float) -> Any:
    return program([sys.executable, "-c", SCENE, str(WIDTH), str(HEIGHT), str(rate)], display.env())


def viewer(*args: str) -> Any:
    return program(
        [sys.executable, "-m", "viewfinder.cli", "view", *args, "--no-open", "--port", "0"]
    )


def url_of(process: Any) -> str:
    address = str(process.first_line.split(" on ", 1)[1].split()[0])
    return address.split("?", 1)[0].rstrip("/")


def wait_for_answer(url: str) -> None:
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/info", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"the viewer at {url} did not answer")


def live_page(browser: Any, url: str, display: Display) -> Any:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/?live={display.name}")
    page.wait_for_function(
        "window.viewfinderLive && window.viewfinderLive.frames > 0", timeout=30000
    )
    return page


def measure_live(display: Display, browser: Any, window: float, repeat: int) -> dict[str, Any]:
    found: dict[str, Any] = {}
    with viewer("--live", display.name) as process:
        url = url_of(process)
        wait_for_answer(url)
        for rate in (0.0, 10.0, 30.0):
            with scene(display, rate):
                time.sleep(0.5)
                page = live_page(browser, url, display)
                time.sleep(0.5)
                frames0, bytes0 = page.evaluate(
                    "[window.viewfinderLive.frames, window.viewfinderLive.bytes]"
                )
                started = time.monotonic()
                cpu = cpu_share(process.pid, window, repeat)
                elapsed = time.monotonic() - started
                frames1, bytes1 = page.evaluate(
                    "[window.viewfinderLive.frames, window.viewfinderLive.bytes]"
                )
                found[f"viewer {rate:g}"] = (
                    cpu,
                    (frames1 - frames0) / elapsed,
                    (bytes1 - bytes0) / 1024 / elapsed,
                )
                page.close()
        # no window over the root: the draws are the root's own repaints
        page = live_page(browser, url, display)
        found["latency"] = latency(display, page, 30)
        page.close()
    for rate in (0.0, 10.0):
        with (
            scene(display, rate),
            program([sys.executable, "-c", NAIVE, display.name, "10"]) as naive,
        ):
            time.sleep(0.5)
            sent = whole_frame_kib(display) * 10
            found[f"naive {rate:g}"] = (cpu_share(naive.pid, window, repeat), 10.0, sent)
    return found


def whole_frame_kib(display: Display) -> float:
    """KiB of one whole-screen JPEG at quality 80 (what the naive streamer makes a tick)."""
    from viewfinder.xvfb.grab import ScreenGrab

    with ScreenGrab(display.name) as grab:
        out = io.BytesIO()
        grab.image().save(out, "JPEG", quality=80)
    return len(out.getvalue()) / 1024


def latency(display: Display, page: Any, rounds: int) -> Figure:
    from Xlib.display import Display as XDisplay

    conn = XDisplay(display.name)
    root = conn.screen().root
    values = []
    colours = [(255, 0, 0), (0, 160, 0), (0, 0, 255), (255, 255, 0), (255, 0, 255)]
    try:
        for number in range(rounds):
            red, green, blue = colours[number % len(colours)]
            page.evaluate(
                "([x, y, rgb]) => window.viewfinderLive.watch(x, y, rgb, 40)",
                [WIDTH - 5, HEIGHT - 5, [red, green, blue]],
            )
            root.change_attributes(background_pixel=(red << 16) | (green << 8) | blue)
            root.clear_area(0, 0, 0, 0)
            conn.sync()
            drawn = time.time() * 1000
            page.wait_for_function("window.viewfinderLive.watched.seenAt !== null", timeout=10000)
            values.append(page.evaluate("window.viewfinderLive.watched.seenAt") - drawn)
            time.sleep(0.15)
    finally:
        conn.close()
    return Figure(values)


def long_session(folder: Path, steps: int) -> Path:
    (folder / "screenshots").mkdir(parents=True)
    started = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    SessionMetadata(
        screen=ScreenSize(width=WIDTH, height=HEIGHT), backend="xvfb", input_source="x11",
        interval_s=0.5, started_at=started, status="stopped",
    ).save(folder / "metadata.json")  # fmt: skip
    pictures = []
    for shade in range(16):
        out = io.BytesIO()
        image = Image.new("RGB", (WIDTH, HEIGHT), (shade * 15, 120, 200 - shade * 10))
        image.save(out, "PNG")
        pictures.append(out.getvalue())
    lines = []
    for seq in range(steps):
        (folder / "screenshots" / f"{seq}.png").write_bytes(pictures[seq % 16])
        event = Event(
            kind=EventKind.CLICK, position=Point(x=(seq * 37) % WIDTH, y=(seq * 53) % HEIGHT),
            timestamp=started + timedelta(seconds=seq * 0.5), screenshot=f"screenshots/{seq}.png",
        )  # fmt: skip
        lines.append(json.dumps(event.to_manifest(seq)))
    (folder / "manifest.jsonl").write_text("".join(line + "\n" for line in lines))
    return folder


def first_step(browser: Any, folder: Path, rounds: int) -> tuple[Figure, float, int, int, int]:
    """Page open to first frame shown (s), the artifact's first read (ms, the manifest
    read and every frame's file checked), thumbnails asked, the bytes of the page of
    steps the page asks for and of the whole artifact's JSON."""
    import httpx

    opened, thumbs = [], 0
    with viewer(str(folder)) as process:
        url = url_of(process)
        wait_for_answer(url)
        started = time.perf_counter()
        paged = httpx.get(f"{url}/api/artifact?offset=0&limit=200", timeout=120)
        cold = 1000 * (time.perf_counter() - started)
        whole = httpx.get(f"{url}/api/artifact", timeout=120)
        for _ in range(rounds):
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            asked: list[str] = []
            page.on("request", lambda request, asked=asked: asked.append(request.url))
            started = time.perf_counter()
            page.goto(url)
            page.wait_for_function(
                "document.getElementById('frame')?.complete"
                " && document.getElementById('frame').naturalWidth > 0",
                timeout=60000,
            )
            opened.append(time.perf_counter() - started)
            page.wait_for_timeout(1000)  # the timeline's lazy loading has had its turn
            thumbs = sum("size=thumb" in request for request in asked)
            context.close()
    return Figure(opened), cold, thumbs, len(paged.content), len(whole.content)


def section(live: dict[str, Any], sessions: dict[int, tuple[Figure, float, int, int, int]],
            window: float, repeat: int) -> str:  # fmt: skip
    load = os.getloadavg()[0]
    lines = [
        "## Viewer",
        "",
        f"Xvfb {WIDTH}x{HEIGHT} with a Tk scene; `viewfinder view --live :N` as its own process, "
        f"watched by one headless Chromium page (Playwright). Python {platform.python_version()}, "
        f"Pillow {PIL.__version__}, {os.cpu_count()} CPUs, load average {load:.2f} at the end; "
        f"`uv run python benchmarks/viewer.py` (CPU windows of {window:g} s x {repeat}).",
        "",
        "### Live view: CPU and frames delivered",
        "",
        "| screen | streamer | % CPU of one core (median) | min-max "
        "| frames/s drawn by the page | KiB/s sent |",
        "|---|---|---|---|---|---|",
    ]
    names = {
        0.0: "still",
        10.0: "a square changing 10 times/s",
        30.0: "a square changing 30 times/s",
    }
    for rate, name in names.items():
        cpu, fps, rate_kib = live[f"viewer {rate:g}"]
        lines.append(
            f"| {name} | viewer (damage-driven tiles) | {cpu.cell()} | {cpu.spread()} "
            f"| {fps:.1f} | {rate_kib:.0f} |"
        )
        if f"naive {rate:g}" in live:
            naive, _, sent = live[f"naive {rate:g}"]
            lines.append(
                f"| {name} | naive: grab + whole-screen JPEG 10 times/s | {naive.cell()} | "
                f"{naive.spread()} | 10 | {sent:.0f} (to make) |"
            )
    lat = live["latency"]
    p90 = lat.values[int(0.9 * (len(lat.values) - 1))]
    lines += [
        "",
        "The viewer sleeps until the X server reports a repaint (XDAMAGE), grabs the screen "
        "(MIT-SHM), and encodes only the rectangle that changed; the naive streamer encodes "
        "the whole screen on every tick (its KiB/s are the JPEGs it makes; it sends nothing, "
        "so its CPU leaves out what sending would cost). Frames are capped at 30 a second "
        "(`--live-fps`).",
        "",
        "### Live view: from a draw on the display to the page (ms)",
        "",
        "| what | median | p90 | min-max | rounds |",
        "|---|---|---|---|---|",
        f"| root window repainted (Xlib) -> the page's canvas holds the colour | {lat.cell(1)} | "
        f"{p90:.1f} | {lat.spread(1)} | {len(lat.values)} |",
        "",
        "Timed with the page's own clock (`performance.timeOrigin + now()` when the canvas "
        "holds the new pixel) against the wall clock at the draw; the same machine, so the "
        "clocks agree. The target is 300 ms.",
        "",
        "### Opening a long session: time to its first step",
        "",
        "| steps | page opened -> first frame shown (s, median) | min-max "
        "| x the 100-step one | the artifact's first read (ms) "
        "| JSON the page asks for (KiB) | the whole artifact's JSON (KiB) "
        "| thumbnails asked in the first second |",
        "|---|---|---|---|---|---|---|---|",
    ]
    base = min(sessions)
    for steps, (opened, served, thumbs, paged, whole) in sessions.items():
        ratio = opened.median / sessions[base][0].median
        lines.append(
            f"| {steps} | {opened.cell()} | {opened.spread()} | {ratio:.2f} | {served:.0f} "
            f"| {paged / 1024:.0f} | {whole / 1024:.0f} | {thumbs} |"
        )
    lines += [
        "",
        f"Frames are {WIDTH}x{HEIGHT} PNGs; the page is opened 5 times (the artifact is read "
        "once, then kept until its files change). The page asks for a page of 200 steps, "
        "keeps only the timeline's rows near the view in the document and loads a thumbnail "
        "only for those, so opening grows neither with the frames nor with the steps. The "
        "artifact's first read (every manifest line parsed, every frame's file resolved "
        "inside the folder) does grow with the steps: it is paid once per change of the "
        "files, before the first page is served.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "viewer.md")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory() as work,
        Display(WIDTH, HEIGHT) as display,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--headless"]
        )
        try:
            live = measure_live(display, browser, args.window, args.repeat)
            sessions = {
                steps: first_step(browser, long_session(Path(work) / f"s{steps}", steps), 5)
                for steps in (100, 10000)
            }
        finally:
            browser.close()
    text = section(live, sessions, args.window, args.repeat)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
