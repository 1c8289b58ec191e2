"""Code env under load: one session's big observations against another's trivial steps.

    uv run python benchmarks/codeenv_load.py [--rounds N] [--out FILE]

In one run, against ``viewfinder serve`` as a process of its own (1920x1080 displays):

- the round trip of a trivial step (``x = 1``) over the WebSocket, alone, and while
  another session (a client process of its own) runs a step that captures the full
  screen 64 times (a noisy picture, so the PNGs are large) and returns ~30 MiB; the two
  are interleaved, round after round, for as long as each heavy step takes, so what
  else runs on the machine weighs on both alike. The goal: the worst case (not only
  the p99) within 2x of alone, over at least 200 steps;
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
root.destroy()  # the next step of the session makes a root of its own
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


def trivial_steps_while(
    env: CodingEnv, going: threading.Event | None, seconds: float
) -> list[float]:
    """Trivial steps for ``seconds``, or while ``going`` is not set."""
    times = []
    end = time.monotonic() + seconds
    while (going is not None and not going.is_set()) or (going is None and time.monotonic() < end):
        start = time.perf_counter()
        env.step("x = 1")
        times.append((time.perf_counter() - start) * 1000)
    return times


#: Runs in a process of its own, so that reading ~30 MiB replies does not share this
#: process's interpreter with the trivial session being timed: one heavy step per
#: line on stdin, its result as a JSON line on stdout.
HEAVY_CLIENT = """
import json, sys
from viewfinder.server import CodingEnv, EnvServerError
with CodingEnv(sys.argv[1]) as env:
    env.reset()
    for _ in sys.stdin:
        try:
            observation = env.step(sys.argv[2]).observation
        except EnvServerError as exc:  # reported, and the next round starts afresh
            print(json.dumps({"exit": -1, "stderr": str(exc)[-300:]}), flush=True)
            env.reset()
            continue
        print(json.dumps({
            "kept": len(observation.screenshots),
            "dropped": observation.metadata.get("screenshots_dropped", {}).get("count", 0),
            "bytes": sum(len(shot) for shot in observation.screenshots),
            "exit": observation.exit_code,
            "stderr": observation.stderr[-300:],
        }), flush=True)
"""


def interleaved(
    light: CodingEnv, base: str, rounds: int
) -> tuple[list[float], list[float], list[dict[str, Any]]]:
    """Trivial steps alone and beside a heavy step, ``rounds`` times each, for as long
    as that heavy step took."""
    heavy = subprocess.Popen(
        [sys.executable, "-c", HEAVY_CLIENT, base, HEAVY],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert heavy.stdin is not None and heavy.stdout is not None
    alone: list[float] = []
    beside: list[float] = []
    results: list[dict[str, Any]] = []
    took = 2.0
    try:
        for _ in range(rounds):
            alone += trivial_steps_while(light, None, took)
            done = threading.Event()
            started = time.monotonic()

            runner = threading.Thread(target=heavy_step, args=(heavy, results, done), daemon=True)
            runner.start()
            beside += trivial_steps_while(light, done, 0)
            runner.join()
            took = time.monotonic() - started
    finally:
        heavy.stdin.close()
        heavy.wait(60)
    return alone, beside, results


def heavy_step(
    heavy: subprocess.Popen[str], results: list[dict[str, Any]], done: threading.Event
) -> None:
    """One step of the heavy client process; ``done`` is set once it returned."""
    assert heavy.stdin is not None and heavy.stdout is not None
    try:
        heavy.stdin.write("step\n")
        heavy.stdin.flush()
        line = heavy.stdout.readline()
        results.append(json.loads(line) if line else {"exit": -1, "stderr": "the client died"})
    finally:  # the trivial steps stop with it, whatever happened
        done.set()


class Heavy(threading.Thread):
    """A session running the 64-capture step once."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base = base
        self.results: list[dict[str, Any]] = []

    def run(self) -> None:
        with CodingEnv(self.base) as env:
            env.reset()
            observation = env.step(HEAVY).observation
            self.results.append(
                {
                    "kept": len(observation.screenshots),
                    "dropped": observation.metadata.get("screenshots_dropped", {}).get("count", 0),
                    "bytes": sum(len(shot) for shot in observation.screenshots),
                    "exit": observation.exit_code,
                    "stderr": observation.stderr[-300:],
                }
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
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
            alone, loaded, results = interleaved(light, base, args.rounds)
        baseline = rss_mb(server.pid)
        peak = baseline
        four = [Heavy(base) for _ in range(4)]
        for each in four:
            each.start()
        while any(each.is_alive() for each in four):
            peak = max(peak, rss_mb(server.pid))
            time.sleep(0.02)
        results += [result for each in four for result in each.results]
    finally:
        server.terminate()
        server.wait(60)
    text = report(alone, loaded, baseline, peak, results, args.rounds)
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
    rounds: int,
) -> str:
    rows = []
    for name, samples in (("alone", alone), ("beside a 64-capture step", loaded)):
        rows.append(
            f"| {name} | {len(samples)} | {statistics.median(samples):.2f} | "
            f"{percentile(samples, 0.99):.2f} | {max(samples):.2f} | "
            f"{percentile(samples, 0.99) / percentile(alone, 0.99):.2f}x | "
            f"{max(samples) / max(alone):.2f}x |"
        )
    whole = [result for result in results if "kept" in result] or [
        {"kept": 0, "dropped": 0, "bytes": 0}
    ]
    kept = statistics.median(result["kept"] for result in whole)
    dropped = statistics.median(result["dropped"] for result in whole)
    size = statistics.median(result["bytes"] for result in whole) / 2**20
    lines = [
        "## Code env under load",
        "",
        f"`viewfinder serve` as its own process, {SIZE[0]}x{SIZE[1]} displays; Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs (the server, its workers, "
        f"their Xvfb and this client share them), load average {os.getloadavg()[0]:.2f} at "
        "the end; `uv run python benchmarks/codeenv_load.py`.",
        "",
        f"### A trivial step (`x = 1`) over the WebSocket, {rounds} rounds (ms)",
        "",
        "| while | steps | median | p99 | max | p99 vs alone | max vs alone |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Each round times trivial steps alone, then while another session (a client "
        "process of its own) runs a step that captures the full screen 64 times (a noisy "
        "picture), for as long as that step takes; the next round's alone part lasts as "
        f"long. Each of the {len(results)} heavy steps (these and the four below) "
        f"returned {kept:g} "
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
