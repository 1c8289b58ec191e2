"""Code env under load: one session's big observations against another's trivial steps.

    uv run python benchmarks/codeenv_load.py [--steps N] [--out FILE]

In one run, against ``viewfinder serve`` as a process of its own (1920x1080 displays):

- the round trip of a trivial step (``x = 1``) over the WebSocket, alone, then while
  another session runs steps that each capture the full screen 64 times (a noisy
  picture, so the PNGs are large); the goal: its p99 within 2x of alone;
- the server's peak memory (its own process: workers and displays are others) while
  four sessions run such a step at once; the goal: under 1 GB;
- what those steps returned: captures kept and left out by the observation budget.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from viewfinder.server import CodingEnv

HERE = Path(__file__).parent
SIZE = (1920, 1080)
HEAVY = """
import tkinter as tk
from PIL import Image, ImageTk
root = tk.Tk()
root.overrideredirect(True)
root.geometry("1920x1080+0+0")
picture = ImageTk.PhotoImage(Image.effect_noise((1920, 1080), 40).convert("RGB"))
tk.Label(root, image=picture, bd=0).pack()
root.update()
for _ in range(64):
    capture_screenshot()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def trivial_steps(env: CodingEnv, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        env.step("x = 1")
        times.append((time.perf_counter() - start) * 1000)
    return times


class Heavy(threading.Thread):
    """A session running the 64-capture step, ``rounds`` times (0: until stopped)."""

    def __init__(self, base: str, rounds: int = 0) -> None:
        super().__init__(daemon=True)
        self.base, self.rounds = base, rounds
        self.stop = threading.Event()
        self.started_steps = threading.Event()
        self.results: list[dict[str, Any]] = []

    def run(self) -> None:
        with CodingEnv(self.base) as env:
            env.reset()
            done = 0
            while not self.stop.is_set() and (self.rounds == 0 or done < self.rounds):
                self.started_steps.set()
                observation = env.step(HEAVY).observation
                self.results.append(
                    {
                        "kept": len(observation.screenshots),
                        "dropped": observation.metadata.get("screenshots_dropped", {}).get(
                            "count", 0
                        ),
                        "bytes": sum(len(shot) for shot in observation.screenshots),
                        "exit": observation.exit_code,
                        "stderr": observation.stderr[-300:],
                    }
                )
                done += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "codeenv_load.md")
    args = parser.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "viewfinder.cli", "serve", "--port", str(port),
         "--size", f"{SIZE[0]}x{SIZE[1]}", "--pool-size", "5", "--max-sessions", "6"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{base}/health").is_success:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        with CodingEnv(base) as light:
            light.reset()
            trivial_steps(light, 20)  # warm-up
            alone = trivial_steps(light, args.steps)
            heavy = Heavy(base)
            heavy.start()
            heavy.started_steps.wait(60)
            time.sleep(1.0)
            loaded = trivial_steps(light, args.steps)
            heavy.stop.set()
            heavy.join(300)
        baseline = rss_mb(server.pid)
        peak = baseline
        four = [Heavy(base, rounds=1) for _ in range(4)]
        for each in four:
            each.start()
        while any(each.is_alive() for each in four):
            peak = max(peak, rss_mb(server.pid))
            time.sleep(0.02)
        results = heavy.results + [result for each in four for result in each.results]
    finally:
        server.terminate()
        server.wait(60)
    text = report(alone, loaded, baseline, peak, results, args.steps)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


def report(
    alone: list[float],
    loaded: list[float],
    baseline: float,
    peak: float,
    results: list[dict[str, Any]],
    steps: int,
) -> str:
    rows = []
    for name, samples in (("alone", alone), ("beside 64-capture steps", loaded)):
        rows.append(
            f"| {name} | {statistics.median(samples):.2f} | {percentile(samples, 0.99):.2f} | "
            f"{max(samples):.2f} | {percentile(samples, 0.99) / percentile(alone, 0.99):.2f}x |"
        )
    kept = statistics.median(result["kept"] for result in results)
    dropped = statistics.median(result["dropped"] for result in results)
    size = statistics.median(result["bytes"] for result in results) / 2**20
    lines = [
        "## Code env under load",
        "",
        f"`viewfinder serve` as its own process, {SIZE[0]}x{SIZE[1]} displays; Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs (the server, its workers, "
        f"their Xvfb and this client share them), load average {os.getloadavg()[0]:.2f} at "
        "the end; `uv run python benchmarks/codeenv_load.py`.",
        "",
        f"### A trivial step (`x = 1`) over the WebSocket, {steps} rounds (ms)",
        "",
        "| while | median | p99 | max | p99 vs alone |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "The other session runs, step after step, code that captures the full screen 64 "
        f"times (a noisy picture). Each of its {len(results)} steps returned {kept:g} "
        f"captures ({size:.1f} MiB of base64) and left out {dropped:g}, oldest first, to "
        "stay within the observation budget (`observation_bytes`, 32 MiB), with a "
        "`screenshots_dropped` note.",
        "",
        "### The server's memory with four such steps at once",
        "",
        "| server process | MiB |",
        "|---|---|",
        f"| resident before | {baseline:.0f} |",
        f"| peak (sampled every 20 ms) | {peak:.0f} |",
        "",
        "Workers and displays are processes of their own and are not counted; the goal "
        "is under 1 GB for the server.",
    ]
    if any(result["exit"] for result in results):
        failed = next(result for result in results if result["exit"])
        lines += ["", f"A heavy step failed: exit {failed['exit']}: {json.dumps(failed['stderr'])}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
