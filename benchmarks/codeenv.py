"""Code env benchmark: what a step, a capture and a reset cost, and 16 sessions at once.

    uv run python benchmarks/codeenv.py [--steps N] [--resets N] [--sessions N] [--out FILE]

In one run, against a real server on loopback (uvicorn, WebSocket ``/ws``):

- the round trip of a step running ``x = 1`` over the WebSocket, against the same step
  on the environment in-process and on the bare worker (so the costs of the server, of
  the environment and of the worker show separately); target: under 5 ms;
- a step that opens a Tk window and captures it once;
- ``reset()``: a new session on a warm display pool, a reset within a session (same
  display, fresh worker) and a new session on a cold display (Xvfb started for it);
  target for the warm pool: under 150 ms;
- the same trivial snippets through openenv-core's local Python executor (smolagents'
  ``LocalPythonExecutor``, in-process and unsandboxed), as ratios;
- N concurrent sessions (default 16) each opening a Tk window and capturing, with the
  memory each session holds (its worker's processes and its Xvfb).

It prints the markdown section and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import PIL

from viewfinder.codeenv import CodeAction, CodeEnvConfig, CodeEnvironment, FreshDisplays
from viewfinder.codeenv.worker_process import WorkerProcess
from viewfinder.server import CodingEnv, LocalServer, ServerSettings
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
WIDTH, HEIGHT = 1280, 800
TK_CAPTURE = (
    "import tkinter as tk\n"
    "root = tk.Tk(); root.geometry('400x300+0+0')\n"
    "tk.Frame(root, background='#3366cc', width=400, height=300).pack()\n"
    "png = capture_screenshot()\n"
    "root.destroy()\n"
)
SNIPPETS = {
    "x = 1": "x = 1",
    "print": "print('hello')",
    "sum(range(10_000))": "y = sum(range(10_000))",
}


def ms(samples: list[float]) -> tuple[float, float, float]:
    """Median, 10th and 90th percentile, in milliseconds."""
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return statistics.median(ordered) * 1000, pick(0.1) * 1000, pick(0.9) * 1000


def timed(action: Callable[[], object], rounds: int, warmup: int = 3) -> list[float]:
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return samples


def row(name: str, samples: list[float], base: float | None = None, extra: str = "") -> str:
    median, low, high = ms(samples)
    ratio = f"{median / base:.2f}x" if base else "1.00x"
    return f"| {name} | {median:.2f} | {low:.2f}-{high:.2f} | {ratio} |{extra}"


def rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def bench_steps(server: LocalServer, rounds: int) -> tuple[list[str], dict[str, float]]:
    lines = ["### A step's round trip (ms)", ""]
    lines += ["| path | median | p10-p90 | vs bare worker |", "|---|---|---|---|"]
    with Display(WIDTH, HEIGHT) as display:
        worker = WorkerProcess(CodeEnvConfig(), display)
        try:
            counter = iter(range(1, 10**9))
            bare = timed(lambda: worker.run("x = 1", next(counter), 30), rounds)
        finally:
            worker.stop()
    with CodeEnvironment(CodeEnvConfig(width=WIDTH, height=HEIGHT)) as env:
        env.reset()
        direct = timed(lambda: env.step(CodeAction(code="x = 1")), rounds)
    with CodingEnv(server.base_url) as client:
        client.reset()
        wire = timed(lambda: client.step("x = 1"), rounds)
        base = ms(bare)[0]
        lines.append(row("bare worker (`WorkerProcess.run`)", bare, None))
        lines.append(row("environment in-process (`CodeEnvironment.step`)", direct, base))
        lines.append(row("**WebSocket step, `x = 1`** (target: < 5 ms)", wire, base))
        tk = timed(lambda: client.step(TK_CAPTURE), max(5, rounds // 10), warmup=2)
    lines += [
        "",
        "### A step that opens a Tk window and captures it once (ms)",
        "",
        "| path | median | p10-p90 | vs `x = 1` over the WebSocket |",
        "|---|---|---|---|",
        row("WebSocket step: Tk window 400x300, `capture_screenshot()`, destroy", tk, ms(wire)[0]),
        "",
        f"The capture reads the {WIDTH}x{HEIGHT} framebuffer through shared memory and "
        "encodes a PNG; the step also creates and destroys the Tk window (tkinter is "
        "imported by the warm-up steps).",
    ]
    return lines, {"wire": ms(wire)[0], "direct": ms(direct)[0], "tk": ms(tk)[0]}


def bench_resets(server: LocalServer, rounds: int) -> tuple[list[str], dict[str, float]]:
    warm_new, warm_again = [], []
    pool = server.app.state.pool
    for _ in range(rounds):
        pool.wait_warm(timeout=60)
        with CodingEnv(server.base_url) as client:
            client.connect()
            started = time.perf_counter()
            client.reset()
            warm_new.append(time.perf_counter() - started)
            started = time.perf_counter()
            client.reset()
            warm_again.append(time.perf_counter() - started)
    cold = []
    for _ in range(rounds):
        with CodeEnvironment(displays=FreshDisplays(WIDTH, HEIGHT)) as env:
            started = time.perf_counter()
            env.reset()
            cold.append(time.perf_counter() - started)
    base = ms(warm_new)[0]
    lines = [
        "### reset() (ms)",
        "",
        "| reset | median | p10-p90 | vs warm pool |",
        "|---|---|---|---|",
        row("**new session, warm display pool** (over the WebSocket; target: < 150 ms)", warm_new),
        row("reset within a session (same display, fresh worker)", warm_again, base),
        row("new environment on a cold display (Xvfb started for it, in-process)", cold, base),
        "",
        "A reset always starts a fresh worker (a new Python process that confines itself "
        "and answers ready); the pool spares the Xvfb start.",
    ]
    return lines, {"warm": base, "cold": ms(cold)[0]}


def bench_openenv(rounds: int) -> list[str]:
    lines = [
        "### The same snippets through OpenEnv's reference executor (ms)",
        "",
    ]
    try:
        from openenv.core.tools.local_python_executor import PyExecutor
    except ImportError as exc:
        missing = (
            f"Not measured: openenv-core's local Python executor could not be imported "
            f"({exc}); it needs `smolagents`, which is not installed here."
        )
        return [*lines, missing]
    executor = PyExecutor()
    lines += [
        "| snippet | OpenEnv `PyExecutor.run` | viewfinder in-process | viewfinder over WebSocket "
        "| in-process / OpenEnv | WebSocket / OpenEnv |",
        "|---|---|---|---|---|---|",
    ]
    with (
        CodeEnvironment(CodeEnvConfig(display=False)) as env,
        CodingEnv.local(
            ServerSettings(pool_size=1, display_width=320, display_height=240)
        ) as client,
    ):
        env.reset()
        client.reset()
        for name, code in SNIPPETS.items():
            theirs = ms(timed(lambda code=code: executor.run(code), rounds))[0]
            ours = ms(timed(lambda code=code: env.step(CodeAction(code=code)), rounds))[0]
            wire = ms(timed(lambda code=code: client.step(code), rounds))[0]
            lines.append(
                f"| `{name}` | {theirs:.3f} | {ours:.3f} | {wire:.3f} | "
                f"{ours / theirs:.1f}x | {wire / theirs:.1f}x |"
            )
    lines += [
        "",
        "OpenEnv's executor interprets the code in the calling process (an AST "
        "interpreter with an import allow-list; no process, no display, no limits); "
        "viewfinder runs it in a sandboxed worker process with its own display.",
    ]
    return lines


def bench_concurrent(server: LocalServer, sessions: int) -> list[str]:
    results: dict[int, float] = {}
    errors: list[BaseException] = []
    clients = [CodingEnv(server.base_url) for _ in range(sessions)]
    barrier = threading.Barrier(sessions)
    memory: dict[int, tuple[int, int]] = {}

    def run(number: int) -> None:
        client = clients[number]
        try:
            client.reset()
            client.step("x = 1")
            barrier.wait(timeout=300)
            started = time.perf_counter()
            observation = client.step(TK_CAPTURE).observation
            results[number] = time.perf_counter() - started
            assert observation.exit_code == 0, observation.stderr
        except BaseException as exc:  # reported below
            errors.append(exc)

    started = time.perf_counter()
    threads = [threading.Thread(target=run, args=(n,)) for n in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    registry = server.app.state.registry
    for number, session in enumerate(registry.sessions()):
        worker, display = session.env.worker, session.env.display
        memory[number] = (
            worker.memory_bytes() if worker is not None else 0,
            rss_bytes(display.pid) if display is not None and display.pid else 0,
        )
    for client in clients:
        client.close()
    if errors:
        raise errors[0]
    step = ms(list(results.values()))
    per_session = [w + x for w, x in memory.values()]
    workers = [w for w, _ in memory.values()]
    xvfbs = [x for _, x in memory.values()]
    mib = 1024 * 1024
    lines = [
        f"### {sessions} concurrent sessions on {os.cpu_count()} CPUs",
        "",
        f"Each session: reset (display from the pool, {WIDTH}x{HEIGHT}), a warm-up step, then "
        "all at once the Tk window + capture step.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| wall time, from the first reset to the last capture step | {wall:.2f} s |",
        f"| Tk + capture step under contention: median (p10-p90) | {step[0]:.0f} ms "
        f"({step[1]:.0f}-{step[2]:.0f}) |",
        f"| memory per session: median (min-max) | {statistics.median(per_session) / mib:.1f} MiB "
        f"({min(per_session) / mib:.1f}-{max(per_session) / mib:.1f}) |",
        f"| of which the worker (Python with Tk, and its children) | "
        f"{statistics.median(workers) / mib:.1f} MiB |",
        f"| of which its Xvfb | {statistics.median(xvfbs) / mib:.1f} MiB |",
        f"| all {sessions} sessions | {sum(per_session) / mib:.0f} MiB |",
        "",
        "Per session, resident memory (VmRSS) after the capture step:",
        "",
        "| session | worker MiB | Xvfb MiB |",
        "|---|---|---|",
    ]
    lines += [
        f"| {number + 1} | {w / mib:.1f} | {x / mib:.1f} |"
        for number, (w, x) in sorted(memory.items())
    ]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="rounds of the step timings")
    parser.add_argument("--resets", type=int, default=10, help="rounds of the reset timings")
    parser.add_argument("--sessions", type=int, default=16, help="concurrent sessions")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "codeenv.md")
    args = parser.parse_args()

    settings = ServerSettings(
        pool_size=2,
        display_width=WIDTH,
        display_height=HEIGHT,
        max_sessions=max(args.sessions, 4),
        codeenv=CodeEnvConfig(width=WIDTH, height=HEIGHT, timeout_s=300),
    )
    with LocalServer(settings) as server:
        server.app.state.pool.wait_warm(timeout=60)
        step_lines, steps = bench_steps(server, args.steps)
        reset_lines, resets = bench_resets(server, args.resets)
        openenv_lines = bench_openenv(max(20, args.steps // 4))
        concurrent_lines = bench_concurrent(server, args.sessions)
    load = os.getloadavg()[0]
    lines = [
        "## Code env",
        "",
        f"Python {platform.python_version()}, Pillow {PIL.__version__}, {os.cpu_count()} CPUs, "
        f"load average {load:.2f} at the end; `uv run python benchmarks/codeenv.py` "
        f"({args.steps} step rounds, {args.resets} resets, {args.sessions} sessions). Sessions run "
        f"as {'separate sandbox users' if os.geteuid() == 0 else 'this user (not root)'}.",
        "",
        f"Targets: step overhead {steps['wire']:.2f} ms (target < 5 ms: "
        f"{'met' if steps['wire'] < 5 else 'missed'}); reset on a warm pool "
        f"{resets['warm']:.0f} ms "
        f"(target < 150 ms: {'met' if resets['warm'] < 150 else 'missed'}).",
        "",
        *step_lines,
        "",
        *reset_lines,
        "",
        *openenv_lines,
        "",
        *concurrent_lines,
        "",
    ]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
