"""What one replay check costs at 1080p, and what a build holds in memory: part of cache.py.

- A check before a step, on a real 1920x1080 Xvfb: capture the region, mask, hash and
  compare colours. A typing step used to hash the whole screen; now it is checked in
  the field its focusing click picked, like a click.
- ``cache build`` of recorder sessions of 100 and 1000 events at 1280x800, each in its
  own process: peak resident memory (``VmHWM``), which stays flat because frames are
  decoded one step at a time.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

from viewfinder.cache.checks import LiveScreen, VisualChecker
from viewfinder.cache.models import CacheFile, CacheMetadata, ToolUseBlock, VisualValidationSettings
from viewfinder.cache.regions import colour_signature
from viewfinder.core.testing import Canvas, CanvasBackend
from viewfinder.recorder import PairingSettings, Recorder
from viewfinder.xvfb import Display

ROUNDS = 30


def _ms(samples: list[float]) -> tuple[str, str]:
    cuts = statistics.quantiles(samples, n=10, method="inclusive")
    return (
        f"{statistics.median(samples) * 1000:.2f}",
        f"{cuts[0] * 1000:.2f}-{cuts[-1] * 1000:.2f}",
    )


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def check_rows(frame: Image.Image) -> list[list[str]]:
    """Per-step check cost at 1920x1080, through a real Xvfb capture."""
    cache = CacheFile(metadata=CacheMetadata(visual_validation=VisualValidationSettings()))
    steps = {
        "typing step, whole screen (before)": ToolUseBlock(
            id="t",
            name="computer",
            input={"action": "type", "text": "Ada"},
            visual_representation="0" * 16,
        ),
        "typing step, its field (now: hash + colour)": ToolUseBlock(
            id="f",
            name="computer",
            input={"action": "type", "text": "Ada"},
            visual_representation="0" * 16,
            visual_point=[400, 300],
            visual_colour=colour_signature(frame.crop((350, 250, 450, 350))),
        ),
        "typing step, its field, with a parameter mask": ToolUseBlock(
            id="m",
            name="computer",
            input={"action": "type", "text": "Ada"},
            visual_representation="0" * 16,
            visual_point=[400, 300],
            visual_colour=colour_signature(frame.crop((350, 250, 450, 350))),
            visual_mask=[[380, 240, 1540, 30]],
        ),
        "click step (hash + colour)": ToolUseBlock(
            id="c",
            name="computer",
            input={"action": "left_click", "coordinate": [400, 300]},
            visual_representation="0" * 16,
            visual_colour=colour_signature(frame.crop((350, 250, 450, 350))),
        ),
    }
    rows = []
    with Display(1920, 1080) as display, display.backend() as backend:
        checker = VisualChecker(cache)
        screen = LiveScreen(backend)
        for label, block in steps.items():
            checker.check(0, block, screen)  # warm
            samples = []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                checker.check(0, block, screen)
                samples.append(time.perf_counter() - started)
            rows.append([label, *_ms(samples)])
    region = frame.crop((350, 250, 450, 350))
    colour = []
    for _ in range(ROUNDS * 10):
        started = time.perf_counter()
        colour_signature(region)
        colour.append(time.perf_counter() - started)
    rows.append(["the colour signature alone (100 px region)", *_ms(colour)])
    return rows


def _session(folder: Path, events: int, frame: Image.Image) -> None:
    canvas = Canvas()
    canvas.image = frame
    with Recorder(folder, CanvasBackend(canvas), settings=PairingSettings(fsync=False)) as rec:
        for index in range(events):
            # the screen changes a little between steps, as a real one does
            canvas.image = frame.copy()
            canvas.image.paste((index % 256, 80, 160), (10, 10, 60, 60))
            rec.frames.refresh()
            rec.click(100 + index % 600, 100 + index % 400)


def _peak_mb(folder: Path, out: Path) -> float:
    # VmHWM is the peak of this process's own memory; ru_maxrss would also count the
    # memory of the parent it was forked from (Linux keeps it across exec).
    code = (
        "import sys; from viewfinder.cache import build_cache, save_cache_file; "
        "save_cache_file(build_cache(sys.argv[1]), sys.argv[2]); "
        "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(folder), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout.strip()) / 1024


def memory_rows(frame: Image.Image) -> list[list[str]]:
    """Peak memory of building from sessions of 100 and 1000 events at 1280x800."""
    small = frame.resize((1280, 800))
    rows = []
    with tempfile.TemporaryDirectory(prefix="viewfinder-bench-build-") as tmp:
        for events in (100, 1000):
            folder = Path(tmp) / f"s{events}"
            _session(folder, events, small)
            peak = _peak_mb(folder, Path(tmp) / f"c{events}.json")
            rows.append([str(events), f"{peak:.0f} MB"])
    return rows
