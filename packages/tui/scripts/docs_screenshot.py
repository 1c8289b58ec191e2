"""Make the screenshot in docs/tui.md from the app itself.

    uv run python packages/tui/scripts/docs_screenshot.py [--out docs/images]

Starts a real environment (an Xvfb display and a headless Chromium), runs a dev server,
a Tk window on the display and a test run, opens the served page in the browser, takes
a ``!shot`` of the display, and saves the terminal as ``tui.svg``; then renders that SVG
to ``tui.png`` with the same Chromium (through the cdp capture backend), which draws
the terminal fonts faithfully.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from viewfinder.core import get_backend
from viewfinder.tui.app import ViewfinderApp
from viewfinder.tui.config import parse_config
from viewfinder.tui.running import run_tui
from viewfinder.tui.testing import type_command, until

ROOT = Path(__file__).resolve().parents[3]
SIZE = (120, 36)
PAGE = """<!doctype html><title>viewfinder demo</title>
<body style="font-family: sans-serif; margin: 2em"><h1>Hello from the dev server</h1></body>
"""
TESTS = (
    "import time\n"
    "for i, name in enumerate(['capture', 'events', 'replay', 'cache', 'browser']):\n"
    "    print(f'tests/test_{name}.py::test_{i} PASSED', flush=True); time.sleep(0.05)\n"
    "print('5 passed in 0.31s')\n"
)


async def make_svg(svg: Path) -> None:
    site = Path(tempfile.mkdtemp(prefix="viewfinder-docs-site-"))
    (site / "index.html").write_text(PAGE)
    (site / "run_tests.py").write_text(TESTS)
    shutil.copy(ROOT / "examples" / "tk_shapes.py", site / "shapes.py")
    os.chdir(site)  # short relative paths in the picture
    config = parse_config(
        "[browser]\ncdp_url = 'auto'\n[display]\nenabled = true\nsize = '400x220'\n"
        "[tui]\ncursor_blink = false\nshots_dir = 'shots'\n"
    )

    async def scene(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, ViewfinderApp)
        processes = app.processes
        await processes.spawn(
            "python", ["-m", "http.server", "8765", "--bind", "127.0.0.1"], process_id="web"
        )
        await until(
            pilot,
            lambda: "Serving HTTP" in (processes.get("web").last_line or ""),
            "the dev server",
        )
        await processes.spawn("python", ["shapes.py"], process_id="gui")
        await asyncio.sleep(1.5)  # let Tk map its window
        await type_command(pilot, "!open http://127.0.0.1:8765/")
        await until(pilot, lambda: "loaded http" in "\n".join(app.transcript), "the page")
        await type_command(pilot, "!run python run_tests.py")
        await until(pilot, lambda: "1" in processes and not processes.get("1").running, "the tests")
        await type_command(pilot, "!shot display")
        await until(pilot, lambda: app.last_shot is not None, "the shot")
        await pilot.pause(0.5)
        app.save_screenshot(filename=svg.name, path=str(svg.parent))
        await pilot.press("ctrl+q")

    await run_tui(config, headless=True, auto_pilot=scene, size=SIZE)
    shutil.rmtree(site, ignore_errors=True)


def render_png(svg: Path, png: Path) -> None:
    """Draw the SVG in headless Chromium at its own size and save the page as PNG."""
    text = svg.read_text()
    view_box = text.split('viewBox="', 1)[1].split('"', 1)[0].split()
    width, height = (int(float(value)) + 1 for value in view_box[2:])
    with get_backend("cdp", url=svg.as_uri(), width=width, height=height) as backend:
        backend.capture().save(png)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    svg = args.out / "tui.svg"
    asyncio.run(make_svg(svg))
    render_png(svg, args.out / "tui.png")
    print(f"wrote {svg} and {args.out / 'tui.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
