"""The viewfinder demo: code that captures its own windows, then every capture backend.

Run with ``make demo`` (or ``uv run python examples/demo.py --out demo-output``).

First, the main job: ``viewfinder exec`` runs each program of ``examples/codeenv`` (Tk
shapes, progressive captures, a matplotlib plot, pygame) in a fresh code env, where the
program calls ``capture_screenshot()`` while its window is alive; the numbered PNGs,
stdout and stderr land in ``OUT/exec/<program>/``.

Then a scripted agent fills in the form of ``examples/desktop_form.py`` on a desktop
through ``ComputerTool`` (``examples/desktop_agent_anthropic.py --scripted``): each
action's settled, scaled screenshot lands in ``OUT/desktop/``, and the form's own state
says whether it was filled.

Last, it starts an Xvfb display, opens a Tk window with coloured shapes, captures it
through every available backend (the cdp one captures the same shapes drawn by a local
page), and writes one PNG and one timing line per backend to the output folder.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from viewfinder.core import Region, Screenshot, ViewfinderError, backend_specs, get_backend
from viewfinder.xvfb import Display

HERE = Path(__file__).resolve().parent
BLUE_AT = (100, 70)  # inside the blue rectangle, in window and page coordinates


def wait_for_window(display: Display, deadline_s: float = 30.0) -> None:
    """Wait until the blue rectangle is on the screen."""
    backend = get_backend("xvfb", display=display)
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        shot = backend.capture(region=Region(x=BLUE_AT[0], y=BLUE_AT[1], width=1, height=1))
        if shot.pixel(0, 0) == (0, 0, 255):
            return
        time.sleep(0.05)
    raise SystemExit("the Tk window did not appear on the display within 30 s")


def timed_captures(
    backend_name: str, options: dict[str, object], rounds: int
) -> tuple[Screenshot, list[float]]:
    timings = []
    with get_backend(backend_name, **options) as backend:
        shot = backend.capture()  # the first capture also warms up (launches Chromium for cdp)
        for _ in range(rounds):
            started = time.perf_counter()
            shot = backend.capture()
            timings.append((time.perf_counter() - started) * 1000)
    return shot, timings


#: Each code env example, and a pixel its first capture must show (in capture coordinates).
EXEC_EXAMPLES = {
    "tk_shapes.py": ((100, 70), (0, 0, 255)),
    "progressive.py": ((100, 70), (0, 0, 255)),
    "matplotlib_plot.py": None,  # checked by eye: a gold plot with a blue line
    "pygame_scene.py": ((100, 100), (0, 255, 255)),
}


def run_exec_examples(out: Path) -> list[str]:
    """``viewfinder exec`` on every code env example; one summary line per program."""
    lines = []
    for name, expected in EXEC_EXAMPLES.items():
        folder = out / "exec" / Path(name).stem
        started = time.perf_counter()
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "viewfinder.cli",
                "exec",
                str(HERE / "codeenv" / name),
                "--out",
                str(folder),
                "--size",
                "1280x800",
            ],
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - started
        captures = sorted(folder.glob("capture-*.png"))
        check = ""
        if expected is not None and captures:
            (x, y), colour = expected
            seen = Screenshot.from_file(captures[0]).pixel(x, y)
            check = (
                f", pixel {x},{y} {'as expected' if seen == colour else f'is {seen}, NOT {colour}'}"
            )
        lines.append(
            f"exec   {name:20} exit {result.returncode}, {len(captures)} capture(s) in "
            f"{elapsed:.1f} s{check} -> {folder}"
        )
        print(lines[-1])
        if result.returncode != 0:
            print(result.stdout + result.stderr)
    return lines


def run_desktop_agent(out: Path) -> list[str]:
    """A scripted agent fills in the desktop form through ComputerTool; frames in OUT/desktop."""
    folder = out / "desktop"
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            str(HERE / "desktop_agent_anthropic.py"),
            "--scripted",
            "--out",
            str(folder),
            "--state",
            str(folder / "form.json"),
        ],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    verdict = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else "no output"
    line = f"desktop agent: exit {result.returncode} in {elapsed:.1f} s: {verdict}"
    print(line)
    if result.returncode != 0:
        print(result.stdout + result.stderr)
    return [line]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("demo-output"))
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    lines = run_exec_examples(args.out)
    lines += run_desktop_agent(args.out)
    with Display(1280, 800) as display:
        print(f"display {display.name} started (1280x800)")
        window = subprocess.Popen([sys.executable, str(HERE / "tk_shapes.py")], env=display.env())
        try:
            wait_for_window(display)
            plans = {
                "xvfb": {"display": display},
                "mss": {"display": display.name},
                "cdp": {"url": (HERE / "demo_page.html").as_uri(), "width": 1280, "height": 800},
            }
            for name in backend_specs():
                options = plans.get(name, {})
                try:
                    shot, timings = timed_captures(name, options, args.rounds)
                except ViewfinderError as exc:
                    lines.append(f"{name:6} skipped: {exc}")
                    print(lines[-1])
                    continue
                path = shot.save(args.out / f"{name}.png")
                median = statistics.median(timings)
                seen = "yes" if shot.pixel(*BLUE_AT) == (0, 0, 255) else "NO"
                lines.append(
                    f"{name:6} {shot.width}x{shot.height} median {median:7.2f} ms "
                    f"(min {min(timings):.2f}, max {max(timings):.2f}, {len(timings)} captures), "
                    f"{len(shot.data)} bytes, blue rectangle seen: {seen} -> {path}"
                )
                print(lines[-1])
        finally:
            window.terminate()
            window.wait(timeout=10)
    (args.out / "timings.txt").write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}/timings.txt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
