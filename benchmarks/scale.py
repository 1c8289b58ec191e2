"""Scale: sessions as Ray actors (the ray provider) against sessions in this process (local).

    uv run python benchmarks/scale.py [--steps N] [--rounds N] [--out FILE]

In one run, on this machine:

- the round trip of one step through a provider session (``session.call("step")``),
  local and ray, for ``x = 1`` and for a step that opens a Tk window and captures it:
  the difference is what the ray provider adds per step;
- 16 sessions stepped together with ``EnvPool.step_all``: steps per second with the
  local provider, and with the ray provider on a cluster of 1 node and of 2 nodes of
  this same machine. Every node shares the same 2 cores, so this measures overhead,
  not a speed-up: a real second machine brings its own cores;
- 16 WebSocket sessions of ``viewfinder serve --provider ray`` on a 3-node cluster,
  opened at once and stepped 10 times each (``x = 1``, then a Tk capture), on this
  loaded machine: how many were lost (the goal: none), and how long it took;
- memory per session (proportional set size, PSS: shared pages divided among the
  processes sharing them; and RSS): the ray session's actor process, its Xvfb and its
  worker; the local session's Xvfb and worker (the server process holds the rest).

Every Ray node listens on 127.0.0.1 with no dashboard, one CPU and a 100 MB object
store (:func:`viewfinder.ray.testing.local_cluster`).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from viewfinder.codeenv import CodeAction, CodeEnvConfig
from viewfinder.core import open_provider
from viewfinder.ray.testing import descendants, local_cluster, session_actor_processes
from viewfinder.server import EnvError, EnvPool, ServerSettings
from viewfinder.server.provided import env_spec

HERE = Path(__file__).parent
SESSIONS = 16
SIZE = (1280, 800)
TRIVIAL = "x = 1"
TK_CAPTURE = """
import tkinter as tk
root = tk.Tk()
tk.Label(root, text="scale benchmark", font=("DejaVu Sans", 24)).pack(padx=40, pady=40)
root.update()
capture_screenshot()
root.destroy()
"""
SETTINGS = ServerSettings(
    pool_size=2,
    display_width=SIZE[0],
    display_height=SIZE[1],
    max_sessions=SESSIONS,
    codeenv=CodeEnvConfig(width=SIZE[0], height=SIZE[1], timeout_s=120),
)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def memory_mb(pid: int) -> tuple[float, float]:
    """(PSS, RSS) of process ``pid`` in MiB (0 when it is gone)."""
    pss = rss = 0.0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1]) / 1024
            elif line.startswith("Rss:"):
                rss = int(line.split()[1]) / 1024
    except OSError:
        pass
    return pss, rss


def tree_memory(pids: set[int]) -> tuple[float, float]:
    totals = [memory_mb(pid) for pid in pids]
    return sum(t[0] for t in totals), sum(t[1] for t in totals)


# -- one session's step round trip -------------------------------------------------------------


def step_times(provider_name: str, steps: int) -> dict[str, list[float]]:
    """Milliseconds per ``session.call("step")``, for each snippet, on one session."""
    options: dict[str, Any] = SETTINGS.provider_settings() if provider_name == "local" else {}
    provider = open_provider(
        provider_name, env_spec(SETTINGS.with_changes(provider=provider_name)), **options
    )
    try:
        session = provider.open(uuid.uuid4().hex)
        session.call("reset")
        found: dict[str, list[float]] = {}
        for name, code in (("x = 1", TRIVIAL), ("Tk window + capture", TK_CAPTURE)):
            action = CodeAction(code=code)
            for _ in range(3):  # warm-up
                session.call("step", action)
            samples = []
            for _ in range(steps):
                start = time.perf_counter()
                result = session.call("step", action)
                samples.append((time.perf_counter() - start) * 1000)
                assert result.exit_code == 0, result.stderr
            found[name] = samples
        return found
    finally:
        provider.close()


# -- 16 WebSocket sessions of a ray server ----------------------------------------------------


def server_sessions(address: str, steps: int) -> dict[str, Any]:
    """SESSIONS clients of ``viewfinder serve --provider ray``, opened at once, each
    stepping ``steps`` times per snippet: how many ended in an error, and which."""
    import socket
    import subprocess
    import sys
    import threading

    import httpx

    from viewfinder.server import CodingEnv

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "viewfinder.cli", "serve", "--port", str(port),
         "--size", f"{SIZE[0]}x{SIZE[1]}", "--max-sessions", str(SESSIONS),
         "--provider", "ray", "--ray-address", address],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    failures: list[str] = []
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)

        def one_client() -> None:
            try:
                with CodingEnv(base) as env:
                    env.reset()
                    for code in (TRIVIAL, TK_CAPTURE):
                        for _ in range(steps):
                            observation = env.step(code).observation
                            if observation.exit_code != 0:
                                raise RuntimeError(observation.stderr[-200:])
            except Exception as exc:
                failures.append(f"{type(exc).__name__}: {exc}"[:200])

        started = time.perf_counter()
        clients = [threading.Thread(target=one_client) for _ in range(SESSIONS)]
        for client in clients:
            client.start()
        for client in clients:
            client.join(900)
        took = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(120)
    return {"lost": len(failures), "took_s": took, "failures": failures[:3]}


# -- 16 sessions at once ------------------------------------------------------------------------


def pool_throughput(
    provider_name: str, rounds: int, measure_memory: Callable[[EnvPool], dict[str, float]] | None
) -> dict[str, Any]:
    """Steps per second of SESSIONS sessions stepped together, for each snippet."""
    opened = time.perf_counter()
    with EnvPool(SESSIONS, provider_name, "code", settings=SETTINGS) as pool:
        first = pool.reset_all()
        open_s = time.perf_counter() - opened
        assert not [r for r in first if isinstance(r, EnvError)], first
        report: dict[str, Any] = {"open_s": open_s, "nodes": len(set(pool.nodes))}
        for name, code in (("x = 1", TRIVIAL), ("Tk window + capture", TK_CAPTURE)):
            pool.step_all([code] * SESSIONS)  # warm-up
            start = time.perf_counter()
            for _ in range(rounds):
                results = pool.step_all([code] * SESSIONS)
                errors = [r for r in results if isinstance(r, EnvError) or r.exit_code != 0]
                assert not errors, errors
            report[name] = SESSIONS * rounds / (time.perf_counter() - start)
        if measure_memory is not None:
            report["memory"] = measure_memory(pool)
        return report


def ray_memory(_: EnvPool) -> dict[str, float]:
    per_session = [tree_memory({actor} | descendants(actor)) for actor in session_actor_processes()]
    actors = [memory_mb(actor) for actor in session_actor_processes()]
    return {
        "pss": statistics.median(p for p, _ in per_session),
        "rss": statistics.median(r for _, r in per_session),
        "actor_pss": statistics.median(p for p, _ in actors),
        "actor_rss": statistics.median(r for _, r in actors),
    }


def local_memory(_: EnvPool) -> dict[str, float]:
    # this process's children are the sessions' Xvfbs (pool included) and their workers
    children = descendants(os.getpid())
    pss, rss = tree_memory(children)
    return {"pss": pss / SESSIONS, "rss": rss / SESSIONS, "server_rss": memory_mb(os.getpid())[1]}


# -- the report ---------------------------------------------------------------------------------


def ms(samples: list[float]) -> str:
    low, high = percentile(samples, 0.1), percentile(samples, 0.9)
    return f"{statistics.median(samples):.1f} ({low:.1f}-{high:.1f})"


def report(
    steps: int,
    rounds: int,
    single: dict[str, dict[str, list[float]]],
    pools: dict[str, dict[str, Any]],
    server: dict[str, Any] | None = None,
) -> str:
    lines = [
        "## Scale: sessions as Ray actors (ray provider) vs in the server (local)",
        "",
        f"`uv run python benchmarks/scale.py --steps {steps} --rounds {rounds}`. Machine: "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}. Ray nodes are "
        "`ray.cluster_utils` nodes on this one machine (127.0.0.1, no dashboard, one CPU, "
        "100 MB object store each). **Every node shares the same 2 cores: the 2-node "
        "figures measure the overhead of spreading sessions, not a speed-up**; a real "
        "second machine brings its own cores and memory.",
        "",
        f"### One step through a provider session, {steps} rounds (ms: median, p10-p90)",
        "",
        "| step | local | ray | ray adds (median) |",
        "|---|---:|---:|---:|",
    ]
    for name in single["local"]:
        local, ray = single["local"][name], single["ray"][name]
        added = statistics.median(ray) - statistics.median(local)
        lines.append(f"| `{name}` | {ms(local)} | {ms(ray)} | {added:+.1f} |")
    lines += [
        "",
        "The ray round trip is an actor call: the action pickled to the actor, the "
        "observation back through Ray (captures as PNG bytes, not base64; large ones "
        "through the object store).",
        "",
        f"### {SESSIONS} sessions stepped together with `EnvPool.step_all`, {rounds} rounds "
        f"({SIZE[0]}x{SIZE[1]} displays)",
        "",
        "| provider | nodes | open + first reset (s) | `x = 1` steps/s | Tk + capture steps/s |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, found in pools.items():
        lines.append(
            f"| {label} | {found['nodes']} | {found['open_s']:.1f} | {found['x = 1']:.1f} | "
            f"{found['Tk window + capture']:.1f} |"
        )
    if server is not None:
        lines += [
            "",
            f"### {SESSIONS} WebSocket sessions of `viewfinder serve --provider ray`, 3 nodes",
            "",
            f"{SESSIONS} `CodingEnv` clients opened at once on a 3-node cluster of this "
            f"loaded machine, each stepping `x = 1` {server['steps']} times, then a Tk window "
            f"and capture {server['steps']} times: **{server['lost']} of {SESSIONS} "
            f"sessions lost**, {server['took_s']:.0f} s in all.",
        ]
        if server["failures"]:
            lines += ["", "First failures: " + "; ".join(f"`{f}`" for f in server["failures"])]
    ray_memory_found = pools["ray, 1 node"]["memory"]
    local_memory_found = pools["local"]["memory"]
    lines += [
        "",
        "### Memory per session, after the steps above (MiB)",
        "",
        "| provider | PSS | RSS | what it counts |",
        "|---|---:|---:|---|",
        f"| local | {local_memory_found['pss']:.0f} | {local_memory_found['rss']:.0f} | "
        "its Xvfb and worker (the pool's warm displays shared out); the server process "
        f"itself was {local_memory_found['server_rss']:.0f} MiB RSS in all |",
        f"| ray | {ray_memory_found['pss']:.0f} | {ray_memory_found['rss']:.0f} | its actor "
        f"process ({ray_memory_found['actor_pss']:.0f} PSS, "
        f"{ray_memory_found['actor_rss']:.0f} RSS), its Xvfb and worker (median of "
        f"{SESSIONS}) |",
        "",
        "Size a node from the ray row: slots = (memory to give sessions) / (PSS per "
        "session), and keep a core per 4-8 busy sessions (docs/scale.md).",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="rounds of the one-session steps")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the 16-session steps")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "scale.md")
    args = parser.parse_args()
    if args.steps < 1 or args.rounds < 1:
        parser.error("--steps and --rounds must be at least 1")

    single: dict[str, dict[str, list[float]]] = {}
    pools: dict[str, dict[str, Any]] = {}
    print("local: one session, then 16", flush=True)
    single["local"] = step_times("local", args.steps)
    pools["local"] = pool_throughput("local", args.rounds, local_memory)
    print("ray, 1 node: one session, then 16", flush=True)
    with local_cluster([{"viewfinder_display": SESSIONS}]):
        single["ray"] = step_times("ray", args.steps)
        pools["ray, 1 node"] = pool_throughput("ray", args.rounds, ray_memory)
    print("ray, 2 nodes: 16 sessions", flush=True)
    half = SESSIONS // 2
    with local_cluster([{"viewfinder_display": half}, {"viewfinder_display": half}]):
        pools["ray, 2 nodes"] = pool_throughput("ray", args.rounds, None)
    print("ray, 3 nodes: 16 WebSocket sessions of a server", flush=True)
    third = -(-SESSIONS // 3)
    with local_cluster([{"viewfinder_display": third}] * 3, connect=False) as cluster:
        server = {**server_sessions(cluster.address, 10), "steps": 10}
    text = report(args.steps, args.rounds, single, pools, server)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
