"""Session isolation: what it costs, on and off side by side in one run.

    uv run python benchmarks/isolation.py [--rounds N] [--out FILE]

Two code environments on one warm display pool, one with isolation (each worker in
bubblewrap: PID, mount and network namespaces, private /tmp) and one without, measured
interleaved: a reset (a fresh worker on a warm display), a step's overhead (``x = 1``),
a step that opens a Tk window and captures it, and the memory of a session's worker.
The targets: reset within 1.5x of isolation off, step overhead within 0.5 ms of it.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from viewfinder.codeenv import CodeAction, CodeEnvConfig, CodeEnvironment
from viewfinder.xvfb import DisplayPool

HERE = Path(__file__).parent
WIDTH, HEIGHT = 1280, 800
TK_CAPTURE = (
    "import tkinter as tk\nroot = tk.Tk()\nroot.geometry('400x300+0+0')\n"
    "tk.Label(root, text='isolated?', bg='white').pack(fill='both', expand=True)\n"
    "root.update()\ncapture_screenshot()\nroot.destroy()"
)


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def worker_rss_mib(env: CodeEnvironment) -> float:
    assert env.worker is not None and env.worker.pid is not None
    for line in Path(f"/proc/{env.worker.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "isolation.md")
    args = parser.parse_args()
    modes = {"on": True, "off": False}
    samples: dict[str, dict[str, list[float]]] = {
        mode: {"reset": [], "step": [], "tk": [], "rss": []} for mode in modes
    }
    reported: dict[str, object] = {}
    with DisplayPool(size=2, width=WIDTH, height=HEIGHT) as pool:
        envs = {
            mode: CodeEnvironment(
                CodeEnvConfig(width=WIDTH, height=HEIGHT, isolation=on), displays=pool
            )
            for mode, on in modes.items()
        }
        try:
            for env in envs.values():
                env.reset()
                env.step(CodeAction(code=TK_CAPTURE))  # imports tkinter and the capture
            for index in range(args.rounds):
                order = list(modes) if index % 2 == 0 else list(reversed(modes))
                for mode in order:
                    env = envs[mode]
                    samples[mode]["reset"].append(timed(env.reset))
                    env.step(CodeAction(code="x = 0"))
                    steps = [timed(lambda env=env: env.step(CodeAction(code="x = 1")))
                             for _ in range(10)]  # fmt: skip
                    samples[mode]["step"].append(statistics.median(steps))
                    samples[mode]["tk"].append(
                        timed(lambda env=env: env.step(CodeAction(code=TK_CAPTURE)))
                    )
                    samples[mode]["rss"].append(worker_rss_mib(env))
            worker = envs["on"].worker
            reported = worker.ready_info.get("isolation") or {} if worker is not None else {}
        finally:
            for env in envs.values():
                env.close()
    text = report(samples, args.rounds, reported)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


def report(samples: dict[str, dict[str, list[float]]], rounds: int, reported: object) -> str:
    def median(mode: str, key: str) -> float:
        return statistics.median(samples[mode][key])

    rows = [
        ("reset (fresh worker, warm display), ms", "reset", "{:.1f}"),
        ("step overhead (`x = 1`, median of 10 per round), ms", "step", "{:.2f}"),
        ("Tk window + `capture_screenshot()` step, ms", "tk", "{:.1f}"),
        ("worker memory (RSS after the Tk step), MiB", "rss", "{:.1f}"),
    ]
    lines = [
        "## Session isolation",
        "",
        f"One warm display pool ({WIDTH}x{HEIGHT}), one environment with isolation and one "
        f"without, interleaved, {rounds} rounds; Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end; "
        "`uv run python benchmarks/isolation.py`.",
        "",
        "| | isolation on | isolation off | on vs off |",
        "|---|---|---|---|",
    ]
    for name, key, number in rows:
        on, off = median("on", key), median("off", key)
        delta = f"{on / off:.2f}x" if key in ("reset", "tk") else f"{on - off:+.2f}"
        lines.append(f"| {name} | {number.format(on)} | {number.format(off)} | {delta} |")
    lines += [
        "",
        "Isolation on: each worker in bubblewrap (PID, mount and network namespaces), a "
        "private /tmp (tmpfs, 512 MiB), loopback only, and no capability kept "
        f"(the worker said: `{reported}`). Targets: reset within 1.5x of off, step "
        "overhead within 0.5 ms.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
