"""Viewer memory benchmark: what six thumbnail requests at once cost the viewer process.

    uv run python benchmarks/viewer_memory.py [--out FILE]

In one run, ``viewfinder view SESSION`` started as its own process for each kind of
frame (a fresh process each, so its peak is that kind's alone), then six thumbnail
requests sent at once, as a page scrolling a timeline does:

- frames of 1280x800 (an ordinary screen);
- frames of 7680x4320 (an 8K screen: the largest a thumbnail is made of);
- frames of 13000x13000, 0.5 MB PNGs that decode to 507 MB each (decompression bombs).

Reported: the process's peak resident memory (``VmHWM``), against the same process
idle (the session's JSON read, no thumbnail), the time until all six answered, and
the answers. The bombs must stay under 300 MB.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import PIL

from viewfinder.core.testing import huge_png

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from viewer import long_session, url_of, viewer, wait_for_answer  # noqa: E402

REQUESTS = 6
KINDS = {
    "idle (the session's JSON read)": None,
    "1280x800": (1280, 800),
    "7680x4320 (8K)": (7680, 4320),
    "13000x13000 (bombs, 0.5 MB each)": (13000, 13000),
}


def peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def session_of(folder: Path, size: tuple[int, int] | None) -> Path:
    """A six-step session whose frames are all of ``size`` (copies, not links)."""
    long_session(folder, REQUESTS)
    if size is not None:
        first = huge_png(folder / "screenshots" / "0.png", *size)
        for seq in range(1, REQUESTS):
            shutil.copyfile(first, folder / "screenshots" / f"{seq}.png")
    return folder


def measure(folder: Path, thumbnails: bool) -> dict[str, Any]:
    import httpx

    with viewer(str(folder)) as process:
        url = url_of(process)
        wait_for_answer(url)
        assert httpx.get(f"{url}/api/artifact", timeout=60).status_code == 200
        statuses: list[int] = []
        started = time.perf_counter()
        if thumbnails:

            def thumb(step: int) -> int:
                params = {"step": step, "size": "thumb"}
                return httpx.get(f"{url}/api/frame", params=params, timeout=300).status_code

            with ThreadPoolExecutor(REQUESTS) as pool:
                statuses = list(pool.map(thumb, range(REQUESTS)))
        elapsed = time.perf_counter() - started
        after = httpx.get(f"{url}/api/info", timeout=60).status_code  # still serving
        return {
            "peak": peak_mib(process.pid),
            "seconds": elapsed,
            "statuses": statuses,
            "after": after,
        }


def section(found: dict[str, dict[str, Any]]) -> str:
    idle = found[next(iter(KINDS))]["peak"]
    lines = [
        "## Viewer memory",
        "",
        f"`viewfinder view SESSION` as its own process, a fresh one per kind of frame; "
        f"{REQUESTS} thumbnail requests at once. Python {platform.python_version()}, "
        f"Pillow {PIL.__version__}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f} at the end; `uv run python benchmarks/viewer_memory.py`.",
        "",
        "| frames | peak resident memory (MiB) | x idle | all six answered (s) | answers |",
        "|---|---|---|---|---|",
    ]
    for kind, result in found.items():
        answers = ", ".join(f"{code} x{result['statuses'].count(code)}"
                            for code in sorted(set(result["statuses"]))) or "-"  # fmt: skip
        seconds = f"{result['seconds']:.2f}" if result["statuses"] else "-"
        lines.append(
            f"| {kind} | {result['peak']:.0f} | {result['peak'] / idle:.2f} | {seconds} "
            f"| {answers} |"
        )
    lines += [
        "",
        "A frame is measured from its header before it is decoded: past 33 megapixels (an "
        "8K screen) it gets a 422 saying so, not a thumbnail; smaller frames are decoded one "
        "at a time on a thread of the viewer's own, so six 8K frames cost one 8K decode at "
        "the peak, not six. The full frame is still served as it is, from its file.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "viewer_memory.md")
    args = parser.parse_args()
    found: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as work:
        for index, (kind, size) in enumerate(KINDS.items()):
            folder = session_of(Path(work) / f"s{index}", size)
            found[kind] = measure(folder, thumbnails=size is not None)
            assert found[kind]["after"] == 200, f"the viewer stopped serving after {kind}"
    text = section(found)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
