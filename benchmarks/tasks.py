"""Tasks benchmark: how long a desktop episode takes to start, and what a suite run in
parallel buys over running its episodes one by one.

    uv run python benchmarks/tasks.py [--rounds N] [--episodes N] [--parallel N] [--out FILE]

On the starter suite (examples/tasks/starter.toml): a reset with a task (its folder, its
files, a warm display, its app started and the checker's first score) timed over
``--rounds``; then ``--episodes`` episodes (the suite's tasks repeated) played by the
scripted agent with ``viewfinder tasks run``'s runner, ``--parallel`` at a time, against
the same episodes one at a time, in one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from viewfinder.server.desktop_task import DesktopTask
from viewfinder.server.pool import EnvPool
from viewfinder.server.settings import ServerSettings
from viewfinder.server.tasks.model import Suite, load_tasks
from viewfinder.server.tasks.runner import load_agent, run_suite

ROOT = Path(__file__).resolve().parent.parent
STARTER = ROOT / "examples" / "tasks" / "starter.toml"


def episode_starts(suite: Suite, rounds: int) -> list[float]:
    """Milliseconds of each reset with the suite's first task, on one warm session."""
    task = suite.tasks[0]
    width, height = task.size or (1280, 800)
    settings = ServerSettings(
        allow_any_app=True, pool_size=1, display_width=width, display_height=height
    )
    samples = []
    with EnvPool(1, "local", "desktop", settings=settings) as pool:
        env = pool.envs[0]
        env.reset(DesktopTask(task=task))  # the first start warms the caches
        for _ in range(rounds):
            start = time.perf_counter()
            env.reset(DesktopTask(task=task))
            samples.append((time.perf_counter() - start) * 1000)
    return samples


def repeated(suite: Suite, episodes: int) -> Suite:
    """``episodes`` episodes: the suite's tasks over and over, each with an id of its own."""
    tasks = [
        suite.tasks[i % len(suite.tasks)].model_copy(
            update={"id": f"{suite.tasks[i % len(suite.tasks)].id}-{i}"}
        )
        for i in range(episodes)
    ]
    return Suite(name=f"{suite.name}x{episodes}", tasks=tasks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    suite = load_tasks(STARTER)
    starts = episode_starts(suite, args.rounds)
    many = repeated(suite, args.episodes)
    agent = load_agent("scripted")
    runs: dict[int, tuple[float, float]] = {}
    for parallel in (1, args.parallel):
        start = time.perf_counter()
        results = run_suite(many, agent, parallel=parallel)
        seconds = time.perf_counter() - start
        solved = sum(result.success for result in results)
        assert solved == len(results), [r.reason for r in results if not r.success]
        runs[parallel] = (seconds, statistics.median(r.seconds for r in results))
    one, many_at_once = runs[1][0], runs[args.parallel][0]
    lines = [
        "## Tasks: episode start, and a suite in parallel",
        "",
        f"`uv run python benchmarks/tasks.py --rounds {args.rounds} --episodes "
        f"{args.episodes} --parallel {args.parallel}`: {os.cpu_count()} cores, shared with "
        "other people's test runs while it ran, so the ratio is what a busy two-core "
        "machine gives, not what more cores would. The starter suite's Tk, GTK and "
        "Chromium apps on 640x480 Xvfb displays, played by the scripted agent.",
        "",
        "| a desktop episode's start (reset with a task, warm display) | ms |",
        "|---|---:|",
        f"| median of {len(starts)} | {statistics.median(starts):.0f} |",
        f"| min-max | {min(starts):.0f}-{max(starts):.0f} |",
        "",
        f"| {args.episodes} episodes (the starter suite's {len(suite.tasks)} tasks repeated) "
        "| wall s | median episode s | x one by one |",
        "|---|---:|---:|---:|",
        f"| one by one (`--parallel 1`) | {one:.1f} | {runs[1][1]:.2f} | 1.00 |",
        f"| `--parallel {args.parallel}` | {many_at_once:.1f} | {runs[args.parallel][1]:.2f} "
        f"| {one / many_at_once:.2f} faster |",
        "",
        "Every episode of both runs scored 1.0. An episode's wall time is mostly waiting (its "
        "app's start, each action's settle), not computing, so four at once gain more than "
        "the two cores would suggest.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
