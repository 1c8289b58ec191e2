"""Healing benchmark: a replay that heals moved targets against handing them to an agent.

    uv run python benchmarks/healing.py [--rounds N] [--out benchmarks/results/healing.md]

The GTK form of the healing tests (packages/cache/tests/heal_form.py) on an Xvfb
display with its accessibility buses is recorded once (click "Save", the painted "Go",
"Cancel"), then restarted in its moved layout ("Save" 120 px right, "Go" 120 px down)
and the task done again, two ways, alternating in one run:

- **healed**: one replay; "Save" is healed by element, "Go" by template;
- **handoff**: replays with ``heal=False``; each stops with ``NEEDS_AGENT`` at a moved
  step, and an agent step does it (a screenshot encoded as PNG, an accessibility tree
  read, the click), then the replay resumes after it. The model call an agent makes
  between the screenshot and the click is **not** measured: the handoff column is a
  lower bound of what a handoff costs.

Both use the same settings (no delay between steps, the default 0.6 s settle before a
step is called changed), and every round checks that the app saw the three clicks.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from viewfinder.cache import (
    CacheExecutor,
    ExecutionSettings,
    LiveScreen,
    ReplayStatus,
    build_from_trajectory,
    read_cache_file,
    save_cache_file,
)
from viewfinder.cache.checks import VisualChecker
from viewfinder.cache.heal import Healer
from viewfinder.cache.targets import LiveTargets
from viewfinder.core import Event, EventKind, Point, Trajectory, get_element_source, imaging
from viewfinder.xvfb import Display, XvfbBackend

ROOT = Path(__file__).resolve().parent.parent
FORM = ROOT / "packages" / "cache" / "tests" / "heal_form.py"
SYSTEM_PYTHON = "/usr/bin/python3"
SAVE, GO, CANCEL = Point(x=90, y=58), Point(x=85, y=257), Point(x=90, y=138)
#: where an agent that looked at the moved form clicks (what its model would answer)
MOVED = {0: Point(x=210, y=58), 1: Point(x=85, y=377)}
SENTINEL = Point(x=620, y=470)
EXPECTED = ["clicked Save", "clicked Go", "clicked Cancel"]


class App:
    def __init__(self, display: Display, layout: str) -> None:
        self.display = display
        self.process = subprocess.Popen(
            [SYSTEM_PYTHON, str(FORM), layout],
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready", "the form did not start"

    def close(self, screen: XvfbBackend) -> list[str]:
        # the sentinel click is printed after every click sent before it
        assert self.process.stdout is not None
        screen.act(Event(kind=EventKind.CLICK, position=SENTINEL))
        clicks = []
        for line in self.process.stdout:
            if line.strip() == "clicked canvas":
                break
            clicks.append(line.strip())
        self.process.terminate()
        self.process.wait(timeout=10)
        return clicks


def record(display: Display, screen: XvfbBackend, folder: Path) -> Path:
    app = App(display, "original")
    trajectory = Trajectory()
    with get_element_source("atspi", display=display.name) as source:
        for point in (SAVE, GO, CANCEL):
            frame = screen.capture()
            tree = source.read()
            under = tree.element_at(point.x, point.y)
            event = Event(
                kind=EventKind.CLICK,
                position=point,
                element=tree.anchor(under) if under is not None else None,
            )
            trajectory.append(event, frame=frame)
            screen.act(event)
    assert app.close(screen) == EXPECTED
    path = folder / "form.json"
    save_cache_file(build_from_trajectory(trajectory), path)
    return path


def healed(screen: XvfbBackend, cache: Path) -> float:
    settings = ExecutionSettings(delay_time_between_actions=0)
    start = time.perf_counter()
    result = CacheExecutor(screen, settings).run(cache, save=False)
    took = time.perf_counter() - start
    assert result.status is ReplayStatus.COMPLETED, result.message
    assert [step.healed for step in result.steps] == ["element", "template", None]
    return took


def searches(display: Display, screen: XvfbBackend, cache: Path) -> tuple[float, float]:
    """The heal searches alone on the moved form: by element (Save), by template (Go)."""
    model = read_cache_file(cache)
    checker, live = VisualChecker(model), LiveScreen(screen)
    targets = LiveTargets(display.name)
    healer = Healer(checker, live, targets)
    took = []
    try:
        for index in (0, 1):
            block = model.trajectory[index]
            check, _ = checker.check(index, block, live)
            assert not check.passed
            start = time.perf_counter()
            heal = healer.find(index, block, check)
            took.append(time.perf_counter() - start)
            assert heal is not None and heal.new == MOVED[index]
    finally:
        targets.close()
    return took[0], took[1]


def agent_step(display: Display, screen: XvfbBackend, index: int) -> None:
    """What an agent does after a handoff, but its model call: look, read, click."""
    shot = screen.capture()
    imaging.encode(shot.to_pil(), "png")  # the image a model would be sent
    with get_element_source("atspi", display=display.name) as source:
        source.read()
    screen.act(Event(kind=EventKind.CLICK, position=MOVED[index]))


def handed_off(display: Display, screen: XvfbBackend, cache: Path) -> tuple[float, float]:
    """The whole task by replay + agent steps; and the agent steps' share."""
    settings = ExecutionSettings(delay_time_between_actions=0, heal=False)
    start, agent, resume = time.perf_counter(), 0.0, 0
    while True:
        result = CacheExecutor(screen, settings).run(
            cache, start_from_step_index=resume, save=False
        )
        if result.status is ReplayStatus.COMPLETED:
            break
        assert result.status is ReplayStatus.NEEDS_AGENT and result.step_index is not None
        began = time.perf_counter()
        agent_step(display, screen, result.step_index)
        agent += time.perf_counter() - began
        resume = result.step_index + 1
    return time.perf_counter() - start, agent


def ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    heal_times: list[float] = []
    handoff_times: list[float] = []
    agent_times: list[float] = []
    element_times: list[float] = []
    template_times: list[float] = []
    folder = Path(tempfile.mkdtemp(prefix="viewfinder-healing-"))
    try:
        with Display(640, 480, accessibility=True) as display, display.backend() as screen:
            cache = record(display, screen, folder)
            thumbnail_bytes = [
                len(line) for line in cache.read_text().splitlines() if "visual_thumbnail" in line
            ]
            for _ in range(args.rounds):
                app = App(display, "moved")
                heal_times.append(healed(screen, cache))
                assert app.close(screen) == EXPECTED
                app = App(display, "moved")
                by_element, by_template = searches(display, screen, cache)
                element_times.append(by_element)
                template_times.append(by_template)
                total, agent = handed_off(display, screen, cache)
                assert app.close(screen) == EXPECTED
                handoff_times.append(total)
                agent_times.append(agent)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ratio = statistics.median(heal_times) / statistics.median(handoff_times)
    lines = [
        "## Healing: a replay that heals moved targets against NEEDS_AGENT and an agent step",
        "",
        f"`uv run python benchmarks/healing.py --rounds {args.rounds}`: alternating in one "
        f"run, {os.cpu_count()} cores. The GTK form of the healing tests, recorded once "
        "(click Save, the painted Go, Cancel), replayed on its moved layout (Save 120 px "
        "right: healed by element; Go 120 px down: healed by template). The handoff "
        "replays with `--no-heal`; at each stop an agent step takes a screenshot (PNG), "
        "reads the accessibility tree and clicks, then the replay resumes. **The model "
        "call between the screenshot and the click is not measured**: a real handoff adds "
        "it (seconds) twice. Both wait the default 0.6 s settle at each moved step before "
        "calling it changed. Medians in ms; every round checked that the app saw the "
        "three clicks.",
        "",
        "| the moved form, 3 steps | median ms | vs healed |",
        "|---|---:|---:|",
        f"| healed replay (element + template) | {ms(heal_times)} | 1.00x |",
        f"| NEEDS_AGENT + agent steps, no model call (2 handoffs) | {ms(handoff_times)} | "
        f"{1 / ratio:.2f}x |",
        f"| of which the 2 agent steps (screenshot, tree read, click) | {ms(agent_times)} | "
        f"{statistics.median(agent_times) / statistics.median(heal_times):.2f}x |",
        f"| heal search by element (Save: a new tree source, one read, locate) | "
        f"{ms(element_times)} | |",
        "| heal search by template (Go: the ±300 px window clipped to the screen, "
        "correlation, hash check) | "
        f"{ms(template_times)} | |",
        "",
        f"Healed / handoff: **{ratio:.2f}** before any model time: both wait the settle "
        "(2 x 0.6 s) at the moved steps, which is most of either column, and a heal's "
        "search costs about what the agent step's screenshot and tree read cost. What "
        "healing saves is the model calls (and the tokens of two screenshots and trees) "
        "that the handoff column leaves out. A stored region "
        f"(`visual_thumbnail`, 100 px) took {min(thumbnail_bytes)}-{max(thumbnail_bytes)} "
        "bytes of JSON per step in this file.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
