"""Capture benchmark: viewfinder's xvfb backend against mss, ImageMagick ``import`` and scrot.

    uv run python benchmarks/capture.py [--repeat N] [--out benchmarks/results/capture.md]

In one run it starts, at 1280x800 and at 1920x1080, a plain ``Xvfb :N`` as a user or a
container would (a display viewfinder did not start), shows a busy, text-heavy frame
(``capture_scene.py``, a seeded Tk canvas) and times, on the same frame:

- viewfinder xvfb: grab only (MIT-SHM -> PIL image), grab + PNG, grab + PNG + base64
  (what an agent's tool result carries), and the same on a still screen (the previous
  encoding handed back when no pixel changed);
- mss: grab only, grab + ``mss.tools.to_png``;
- ImageMagick ``import -window root png:-`` and ``scrot`` (each a process per frame,
  as scripts use them);
- grab + PNG with viewfinder's encoder (unfiltered rows, libdeflate) at levels 1..9 on
  one thread and at levels 5..9 on every CPU (parts deflated at once and joined), and
  with Pillow's own PNG writer (adaptive row filters, zlib) at levels 1, 6 and 9, to
  choose viewfinder's PNG setting from measurement. (libdeflate's levels 10..12 take
  over ten times as long as level 6 and are left out.)
- on a display viewfinder started (``-fbdir``): reading the framebuffer file, the old
  path that could tear a frame, against the MIT-SHM grab that cannot.

It prints the markdown section and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mss
import mss.tools
import PIL
from PIL import Image

from viewfinder.core import imaging
from viewfinder.xvfb import Display, XvfbBackend
from viewfinder.xvfb.grab import ScreenGrab
from viewfinder.xvfb.testing import HandStartedXvfb

HERE = Path(__file__).parent
SIZES = ((1280, 800), (1920, 1080))
LEVELS = range(1, 10)  # libdeflate's levels on one thread
THREADED_LEVELS = range(1, 10)  # and on every CPU
FRONTIER_LEVELS = range(1, 8)  # grab + PNG + base64 on every CPU, against both targets
PILLOW_LEVELS = (1, 6, 9)
THREADS = imaging.png_threads()
GRAB_RAW = "viewfinder xvfb: grab only (MIT-SHM, raw pixels)"
GRAB_PNG_B64 = "viewfinder xvfb: grab + PNG + base64"
STILL = "viewfinder xvfb, still screen: grab + PNG + base64"
MSS_PNG = "mss: grab + to_png"
IMPORT = "ImageMagick import -window root"


@dataclass
class Timing:
    """Samples in milliseconds and the size of what the method produced."""

    samples: list[float]
    png_bytes: int | None

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> tuple[float, float]:
        """10th and 90th percentile."""
        if len(self.samples) < 2:
            return (self.samples[0], self.samples[0])
        deciles = statistics.quantiles(self.samples, n=10, method="inclusive")
        return (deciles[0], deciles[-1])


def pillow_png(image: Image.Image, level: int) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=level)
    return out.getvalue()


def check_round_trip(image: Image.Image) -> None:
    """viewfinder's PNG must decode to exactly the frame."""
    decoded = Image.open(io.BytesIO(imaging.encode_png(image))).convert("RGB")
    if decoded.tobytes() != image.tobytes():
        raise SystemExit("viewfinder's PNG encoder does not round-trip the frame")


def show_scene(
    display: Display | HandStartedXvfb, width: int, height: int
) -> subprocess.Popen[str]:
    """Start the busy frame on ``display``; return once it is drawn and steady."""
    scene = subprocess.Popen(
        [sys.executable, str(HERE / "capture_scene.py"), str(width), str(height)],
        env=display.env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert scene.stdout is not None
    ready, _, _ = select.select([scene.stdout], [], [], 60)
    if not ready or scene.stdout.readline().strip() != "ready":
        scene.kill()
        raise SystemExit("the benchmark scene did not start; is python3-tk installed?")
    # Tk has flushed its drawing; wait until two frames in a row are the same.
    with XvfbBackend(display.name) as backend:
        previous, deadline = b"", time.monotonic() + 30
        while time.monotonic() < deadline:
            frame = backend.grab().tobytes()
            if frame == previous:
                break
            previous = frame
    return scene


def bench_size(width: int, height: int, repeat: int) -> dict[str, Any]:
    """Time every method on one frame, round-robin, so load bursts hit all of them alike."""
    # (table, key) -> (action, size of its result)
    cases: dict[tuple[str, Any], tuple[Callable[[], Any], Callable[[Any], int | None]]] = {}
    b64_size = lambda text: len(base64.b64decode(text))  # noqa: E731
    with HandStartedXvfb(width, height) as display, Display(width, height) as ours:
        scenes = [show_scene(display, width, height), show_scene(ours, width, height)]
        try:
            backend = XvfbBackend(display.name, still_frames=False)
            still = XvfbBackend(display.name)
            ours_backend = XvfbBackend(ours)
            framebuffer = ours.framebuffer()
            sct = getattr(mss, "MSS", mss.mss)(display=display.name)  # MSS: mss >= 10.2
            monitor = sct.monitors[1]
            env = display.env()
            tmp = tempfile.TemporaryDirectory(dir="/dev/shm" if Path("/dev/shm").is_dir() else None)
            target = Path(tmp.name) / "scrot.png"

            def mss_png() -> bytes:
                shot = sct.grab(monitor)
                data = mss.tools.to_png(shot.rgb, shot.size)
                assert data is not None
                return data

            def import_png() -> bytes:
                command = ["import", "-window", "root", "png:-"]
                return subprocess.run(command, env=env, capture_output=True, check=True).stdout

            def scrot() -> int:
                command = ["scrot", "-o", str(target)]
                subprocess.run(command, env=env, check=True, capture_output=True)
                return target.stat().st_size

            check_round_trip(backend.grab())
            if backend.grab_path != "shm":
                raise SystemExit(f"expected a MIT-SHM grab, got {backend.grab_path}")
            methods = "methods"
            screen = ScreenGrab(display.name)
            cases[methods, GRAB_RAW] = (screen.raw, lambda _: None)
            cases[methods, "viewfinder xvfb: grab to a PIL image"] = (backend.grab, lambda _: None)
            cases[methods, "mss: grab only (MIT-SHM)"] = (
                lambda: sct.grab(monitor),
                lambda _: None,
            )
            cases[methods, "viewfinder xvfb: grab + PNG"] = (
                backend.capture,
                lambda shot: len(shot.data),
            )
            cases[methods, GRAB_PNG_B64] = (lambda: backend.capture().b64(), b64_size)
            cases[methods, STILL] = (lambda: still.capture().b64(), b64_size)
            cases[methods, MSS_PNG] = (mss_png, len)
            cases[methods, IMPORT] = (import_png, len)
            cases[methods, "scrot"] = (scrot, lambda size: size)
            cases["untorn", "framebuffer file (could tear)"] = (framebuffer.image, lambda _: None)
            cases["untorn", "MIT-SHM grab (one state)"] = (ours_backend.grab, lambda _: None)
            for level in LEVELS:
                cases["levels", level] = (
                    lambda level=level: imaging.encode_png(backend.grab(), level, threads=1),
                    len,
                )
            for level in THREADED_LEVELS:
                cases["threaded", level] = (
                    lambda level=level: imaging.encode_png(backend.grab(), level, THREADS),
                    len,
                )
            for level in FRONTIER_LEVELS:
                cases["frontier", level] = (
                    lambda level=level: base64.b64encode(
                        imaging.encode_png(backend.grab(), level, THREADS)
                    ),
                    b64_size,
                )
            for level in PILLOW_LEVELS:
                cases["pillow", level] = (
                    lambda level=level: pillow_png(backend.grab(), level),
                    len,
                )
            timings = measure_round_robin(cases, repeat)
            if still._still is None or still._still.reused < repeat:
                raise SystemExit("the still-screen case encoded frames again")
            for opened in (backend, still, ours_backend, screen):
                opened.close()
            sct.close()
            tmp.cleanup()
        finally:
            for scene in scenes:
                scene.kill()
                scene.wait()
    results: dict[str, Any] = {
        "methods": {},
        "levels": {},
        "threaded": {},
        "pillow": {},
        "frontier": {},
    }
    results["untorn"] = {}
    for (table, key), timing in timings.items():
        results[table][key] = timing
    return results


def measure_round_robin(
    cases: dict[Any, tuple[Callable[[], Any], Callable[[Any], int | None]]],
    repeat: int,
    warmup: int = 2,
) -> dict[Any, Timing]:
    samples: dict[Any, list[float]] = {key: [] for key in cases}
    last: dict[Any, Any] = {}
    for round_number in range(warmup + repeat):
        for key, (action, _) in cases.items():
            start = time.perf_counter()
            last[key] = action()
            if round_number >= warmup:
                samples[key].append((time.perf_counter() - start) * 1000)
    return {key: Timing(samples[key], size_of(last[key])) for key, (_, size_of) in cases.items()}


def fmt_ms(value: float) -> str:
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def render(all_results: dict[tuple[int, int], dict[str, Any]], repeat: int) -> str:
    lines = [
        "## Capture: viewfinder xvfb vs mss, import, scrot",
        "",
        f"`uv run python benchmarks/capture.py --repeat {repeat}`: {repeat} timed runs "
        "per method after 2 warm-up runs, round-robin, on the same busy, text-heavy frame "
        "(`benchmarks/capture_scene.py`) of a plain `Xvfb :N` started by hand (a display "
        "viewfinder did not start). Times in ms: median and p10-p90. "
        f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python "
        f"{platform.python_version()}, Pillow {PIL.__version__}, mss {mss.__version__}, "
        f"zlib {zlib.ZLIB_VERSION}; viewfinder PNG: unfiltered rows, libdeflate level "
        f"{imaging.PNG_COMPRESS_LEVEL} on {THREADS} threads.",
        "",
    ]
    for (width, height), results in all_results.items():
        methods: dict[str, Timing] = results["methods"]
        reference = methods["ImageMagick import -window root"].median
        lines += [
            f"### {width}x{height}",
            "",
            "| method | median ms | p10-p90 ms | PNG bytes | x faster than import |",
            "|---|---:|---:|---:|---:|",
        ]
        for name, timing in methods.items():
            low, high = timing.spread
            size = f"{timing.png_bytes:,}" if timing.png_bytes else "-"
            lines.append(
                f"| {name} | {fmt_ms(timing.median)} | {fmt_ms(low)}-{fmt_ms(high)} "
                f"| {size} | {reference / timing.median:.1f} |"
            )
        lines.append("")
    lines += untorn_table(all_results)
    lines += level_table(all_results)
    lines += verdict(all_results)
    return "\n".join(lines) + "\n"


def untorn_table(all_results: dict[tuple[int, int], dict[str, Any]]) -> list[str]:
    lines = [
        "### What a frame that is never torn costs",
        "",
        "On a display viewfinder started, grab only (to a PIL image): reading Xvfb's "
        "`-fbdir` framebuffer file while the server may draw into it (the old path; it "
        "tore 12 of 200 frames of a window repainting as fast as it can) against the "
        "MIT-SHM grab every capture now uses (0 of 200: the server answers one request "
        "at a time).",
        "",
        "| size | framebuffer file ms | MIT-SHM ms | MIT-SHM / framebuffer |",
        "|---|---:|---:|---:|",
    ]
    for (width, height), results in all_results.items():
        old = results["untorn"]["framebuffer file (could tear)"].median
        new = results["untorn"]["MIT-SHM grab (one state)"].median
        lines.append(f"| {width}x{height} | {fmt_ms(old)} | {fmt_ms(new)} | {new / old:.2f} |")
    lines.append("")
    return lines


def level_table(all_results: dict[tuple[int, int], dict[str, Any]]) -> list[str]:
    sizes = list(all_results)
    header = (
        "| PNG setting (grab + encode) | "
        + " | ".join(f"{w}x{h} ms | {w}x{h} bytes" for w, h in sizes)
        + " | beats mss+to_png at ≤ size |"
    )
    lines = [
        "### PNG settings",
        "",
        "Grab from the framebuffer plus PNG encoding: with viewfinder's encoder "
        "(`viewfinder.core.imaging.encode_png`: unfiltered rows, libdeflate) at each "
        f"level on one thread and on {THREADS} threads (the rows cut into parts that "
        "are deflated at once and joined into one stream), and with Pillow's PNG writer "
        "(adaptive row filters, zlib) for comparison. The last column says whether the "
        "setting is faster than mss grab + `to_png` while its file is no larger, at "
        "every size.",
        "",
        header,
        "|---|" + "---:|---:|" * len(sizes) + "---|",
    ]
    rows = [
        (f"viewfinder, libdeflate level {level}, 1 thread", "levels", level) for level in LEVELS
    ]
    rows += [
        (f"viewfinder, libdeflate level {level}, {THREADS} threads", "threaded", level)
        for level in THREADED_LEVELS
    ]
    rows += [(f"Pillow, zlib level {level}", "pillow", level) for level in PILLOW_LEVELS]
    for label, table, key in rows:
        cells, wins = [], True
        for size in sizes:
            timing: Timing = all_results[size][table][key]
            mss_timing: Timing = all_results[size]["methods"]["mss: grab + to_png"]
            cells.append(f"{fmt_ms(timing.median)} | {timing.png_bytes:,}")
            wins &= timing.median < mss_timing.median and (timing.png_bytes or 0) <= (
                mss_timing.png_bytes or 0
            )
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {'yes' if wins else 'no'} |")
    lines.append("")
    return lines


def winning_levels(all_results: dict[tuple[int, int], dict[str, Any]], table: str) -> list[int]:
    found = []
    for level in next(iter(all_results.values()))[table]:
        if all(
            results[table][level].median < results["methods"]["mss: grab + to_png"].median
            and results[table][level].png_bytes
            <= results["methods"]["mss: grab + to_png"].png_bytes
            for results in all_results.values()
        ):
            found.append(level)
    return found


def verdict(all_results: dict[tuple[int, int], dict[str, Any]]) -> list[str]:
    lines = ["### Verdict", ""]
    for (width, height), results in all_results.items():
        methods = results["methods"]
        imp = methods["ImageMagick import -window root"]
        ref = methods["mss: grab + to_png"]
        ours, still = methods[GRAB_PNG_B64], methods[STILL]
        grab, mss_grab = (
            methods[GRAB_RAW],
            methods["mss: grab only (MIT-SHM)"],
        )
        vs_import, vs_mss = imp.median / ours.median, ref.median / ours.median
        lines.append(
            f"- {width}x{height}, grab + PNG + base64 on a display viewfinder did not "
            f"start: {vs_import:.1f}x faster than `import` (target ≥ 15x: "
            f"{'met' if vs_import >= 15 else 'missed'}); {vs_mss:.2f}x the speed of mss + "
            f"to_png (target ≥ 2x: {'met' if vs_mss >= 2 else 'missed'}) with a "
            f"{'smaller or equal' if ours.png_bytes <= ref.png_bytes else 'larger'} PNG "
            f"({ours.png_bytes:,} vs {ref.png_bytes:,} bytes). Grab alone "
            f"{fmt_ms(grab.median)} ms against mss's {fmt_ms(mss_grab.median)} ms. On a "
            f"still screen: {fmt_ms(still.median)} ms, {imp.median / still.median:.0f}x "
            "faster than `import`."
        )
    for table, threads in (("levels", 1), ("threaded", THREADS)):
        winners = winning_levels(all_results, table)
        lines.append(
            f"- libdeflate levels at which viewfinder's encoder on {threads} "
            f"thread{'s' if threads > 1 else ''} is faster than mss + to_png at equal or "
            f"smaller size on every frame: {', '.join(map(str, winners)) or 'none'}."
        )
    lines += frontier(all_results)
    lines.append(
        f"- viewfinder's `PNG_COMPRESS_LEVEL` is {imaging.PNG_COMPRESS_LEVEL}; it deflates "
        f"on up to {imaging.PNG_MAX_THREADS} threads, {THREADS} here."
    )
    lines.append("")
    return lines


def listed(levels: list[int]) -> str:
    return ", ".join(map(str, levels)) or "none"


def frontier(all_results: dict[tuple[int, int], dict[str, Any]]) -> list[str]:
    """Which libdeflate levels meet both capture targets, frame by frame: grab + PNG +
    base64 at ≥ 15x the speed of `import`, and a PNG no larger than mss's."""
    lines = []
    for (width, height), results in all_results.items():
        imp = results["methods"][IMPORT].median
        mss_bytes = results["methods"][MSS_PNG].png_bytes or 0
        threaded: dict[int, Timing] = results["frontier"]
        fast = [level for level, timing in threaded.items() if imp / timing.median >= 15]
        small = [
            level for level, timing in threaded.items() if (timing.png_bytes or 0) <= mss_bytes
        ]
        both = sorted(set(fast) & set(small))
        lines.append(
            f"- {width}x{height}, libdeflate levels {FRONTIER_LEVELS.start}-"
            f"{FRONTIER_LEVELS.stop - 1} on {THREADS} threads: grab + PNG + base64 ≥ 15x "
            f"faster than `import` at levels {listed(fast)}; a PNG no larger than mss's at "
            f"levels {listed(small)}; both: {listed(both)}."
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per method")
    parser.add_argument(
        "--out",
        type=Path,
        default=HERE / "results" / "capture.md",
        help="where to write the markdown section",
    )
    args = parser.parse_args(argv)
    all_results = {}
    for width, height in SIZES:
        print(f"benchmarking {width}x{height} ...", file=sys.stderr, flush=True)
        all_results[(width, height)] = bench_size(width, height, args.repeat)
    text = render(all_results, args.repeat)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    print(f"written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
