"""Settle side by side: the ComputerTool against the loops people write, in one run.

    uv run python benchmarks/settle_peers.py [--actions N] [--loads 0,2] [--grace S] [--out FILE]

On one 1920x1080 Xvfb, each action answered with a 1024x768 PNG, contenders
interleaved (their order turns every round), ``--actions`` actions each per case:

- **viewfinder**: ``ComputerTool(display, target="XGA")``, default settle options; an
  untimed screenshot before each action, as an agent looks before it acts;
- **reference**: Anthropic's reference loop (``xdotool``, a fixed 2 s sleep, ``scrot``,
  ``convert -resize 1024x768!``), as in ``benchmarks/desktop_settle.py``;
- **pyautogui** and **mss poll**: ``benchmarks/settle_peers_child.py``, run with
  pyautogui and mss from PyPI in an environment of their own (``uv run --no-project
  --with ...``).

Cases: **no change** (a click on a bare spot of a window), **instant** (Go recolours a
panel at once), **pressed** (Tk's relief at once, the panel 250 ms later), **typing**
(11 characters into a text box), **spinner** (an arc turning every 30 ms for 1 s, then
the panel; one frame 100 ms late), **banner** (instant clicks while a 300x100 banner in
another app changes colour every second). A result is final when it shows the app's
finished effect (the panel's colour; the text box as a later capture of the same
contender shows it). ``--loads 0,2`` (the default) runs it all twice: alone, then beside
two CPU-bound processes (``while 1: pass``), stopped at the end.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.desktop import ComputerTool, SettleOptions
from viewfinder.xvfb import Display

sys.path.insert(0, str(Path(__file__).parent))
import desktop_settle
from desktop_settle import App, StateApp, rgb
from settle_apps import panel_colour

HERE = Path(__file__).parent
PEERS_APPS = HERE / "settle_peers_apps.py"
CHILD = HERE / "settle_peers_child.py"
PEER_PACKAGES = ("pyautogui==0.9.54", "mss==10.2.0", "pillow")
CONTENDERS = ("viewfinder", "reference", "pyautogui", "mss poll")
CASES = ("no change", "instant", "pressed", "typing", "spinner", "banner")
TEXT = "hello world"
SCALE = (1024 / 1920, 768 / 1080)


class Spinner(StateApp):
    def __init__(self, display: Display, work: Path) -> None:
        state = work / "spinner.json"
        command = [sys.executable, str(PEERS_APPS), "spinner", "--state", str(state)]
        super().__init__(display, [*command, "--late-frame", "20"], state)


class Peers:
    """The pyautogui and mss poll loops, in a child process of their own environment."""

    def __init__(self, display: Display, work: Path) -> None:
        env = display.env()
        (work / "empty-xauthority").touch()
        env.update(XAUTHORITY=str(work / "empty-xauthority"), XDG_SESSION_TYPE="x11")
        command = ["uv", "run", "--no-project"]
        for package in PEER_PACKAGES:
            command += ["--with", package]
        self.process = subprocess.Popen(
            [*command, "python", str(CHILD)],
            env=env,
            cwd=work,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.out = str(work / "peer.png")

    def __call__(self, peer: str, **request: Any) -> tuple[float, Image.Image]:
        assert self.process.stdin is not None and self.process.stdout is not None
        request.update(peer=peer, out=self.out)
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        for _ in range(100):  # python-xlib may print a warning line first
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the peers' process ended")
            if line.startswith("{"):
                with Image.open(self.out) as image:
                    return json.loads(line)["ms"], image.convert("RGB")
        raise RuntimeError("the peers' process said no answer")

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(30)


def reference(env: dict[str, str], work: Path, do: str, x: int, y: int) -> tuple[float, Any]:
    path = work / "reference.png"
    start = time.perf_counter()
    if do == "click":
        subprocess.run(f"xdotool mousemove --sync {x} {y} click 1", shell=True, env=env, check=True)
    elif do == "type":
        subprocess.run(["xdotool", "type", "--delay", "12", "--", TEXT], env=env, check=True)
    if do != "grab":
        time.sleep(2.0)
    subprocess.run(["scrot", "-o", "-p", str(path)], env=env, check=True)
    subprocess.run(
        [desktop_settle.CONVERT, str(path), "-resize", "1024x768!", str(path)], check=True
    )
    data = path.read_bytes()
    elapsed = (time.perf_counter() - start) * 1000
    with Image.open(io.BytesIO(data)) as image:
        return elapsed, image.convert("RGB")


def act(who: str, do: str, point: tuple[int, int], ctx: dict[str, Any]) -> tuple[float, Any]:
    """One action (``click`` at ``point``, ``type`` TEXT, or an untimed ``grab``)."""
    x, y = point
    if who == "viewfinder":
        tool: ComputerTool = ctx["tool"]
        if do == "grab":
            return 0.0, tool.screenshot().to_pil().convert("RGB")
        tool({"action": "screenshot"})  # the agent looks first (untimed)
        request = (
            {"action": "left_click", "coordinate": list(tool.scaling.to_model(x, y))}
            if do == "click"
            else {"action": "type", "text": TEXT}
        )
        start = time.perf_counter()
        result = tool(request)
        elapsed = (time.perf_counter() - start) * 1000
        assert result.screenshot is not None and not result.is_error, result.text
        ctx.setdefault("texts", []).append(result.text)
        # The next contender's action is someone else's change: let it come after the
        # 0.5 s within which a change could be taken for this action's late effect.
        time.sleep(0.6)
        return elapsed, result.screenshot.to_pil().convert("RGB")
    if who == "reference":
        return reference(ctx["env"], ctx["work"], do, x, y)
    peer = "pyautogui" if who == "pyautogui" else "poll"
    return ctx["peers"](peer, do=do, x=x, y=y, text=TEXT)


def model_point(point: tuple[int, int]) -> tuple[int, int]:
    return int(point[0] * SCALE[0]), int(point[1] * SCALE[1])


def one(case: str, who: str, app: StateApp, ctx: dict[str, Any]) -> dict[str, Any]:
    env = ctx["env"]
    if case == "typing":
        subprocess.run(["xdotool", "key", "Escape"], env=env, check=True)
        app.wait(lambda s: s["chars"] == 0)
        time.sleep(0.1)
        ms, shown = act(who, "type", (0, 0), ctx)
        app.wait(lambda s: s["chars"] == len(TEXT))
        time.sleep(0.3)
        _, later = act(who, "grab", (0, 0), ctx)
        x, y, w, h = app.layout["text"]
        (x0, y0), (x1, y1) = model_point((x, y)), model_point((x + w, y + h))
        crop = (x0 + 2, y0 + 2, x1 - 2, y1 - 2)
        return {"ms": ms, "final": shown.crop(crop).tobytes() == later.crop(crop).tobytes()}
    subprocess.run(["xdotool", "mousemove", "1000", "900"], env=env, check=True)
    time.sleep(0.2)
    effects = app.state()["effects"]
    x, y, w, h = app.layout["panel"]
    point = (x + w + 150, y + h // 2) if case == "no change" else app.centre("button")
    ms, shown = act(who, "click", point, ctx)
    done = effects if case == "no change" else effects + 1
    app.wait(lambda s: s["effects"] == done)
    colour = shown.getpixel(model_point(app.centre("panel")))
    return {"ms": ms, "final": colour == rgb(panel_colour(done))}


def run_case(case: str, display: Display, ctx: dict[str, Any], actions: int) -> dict[str, Any]:
    work: Path = ctx["work"]
    apps: list[StateApp | subprocess.Popen[str]] = []
    try:
        if case == "banner":
            banner = subprocess.Popen(
                [sys.executable, str(PEERS_APPS), "banner"],
                env=display.env(),
                stdout=subprocess.PIPE,
                text=True,
            )
            apps.append(banner)
            assert banner.stdout is not None and banner.stdout.readline().strip() == "ready"
        mode = {"pressed": "two-step", "typing": "text", "spinner": ""}.get(case, "instant")
        app: StateApp = App(display, work, mode) if mode else Spinner(display, work)
        apps.append(app)
        samples: dict[str, list[dict[str, Any]]] = {who: [] for who in ctx["contenders"]}
        with ComputerTool(display, target="XGA", settle=ctx["settle"]) as tool:
            ctx["tool"], ctx["texts"] = tool, []
            for who in ctx["contenders"]:
                one(case, who, app, ctx)  # warm-up: imports, first grabs
            ctx["texts"] = []
            order = list(ctx["contenders"])
            for round_ in range(actions):
                turn = order[round_ % len(order) :] + order[: round_ % len(order)]
                for who in turn:
                    samples[who].append(one(case, who, app, ctx))
            texts = list(ctx["texts"])
    finally:
        for running in apps:
            if isinstance(running, StateApp):
                running.stop()
            else:
                running.kill()
                running.wait(10)
    print(case, {w: sum(s["final"] for s in v) for w, v in samples.items()}, flush=True)
    return {"samples": samples, "texts": texts}


def run_all(args: Any, load: int) -> dict[str, Any]:
    """Every case, beside ``load`` CPU-bound processes (stopped at the end)."""
    burners = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(load)]
    results: dict[str, Any] = {"load": load, "cases": {}, "at_start": os.getloadavg()[0]}
    try:
        with tempfile.TemporaryDirectory() as tmp, Display(1920, 1080) as display:
            ctx: dict[str, Any] = {
                "env": display.env(),
                "work": Path(tmp),
                "contenders": args.contenders.split(","),
                "settle": None if args.grace is None else SettleOptions(grace=args.grace),
            }
            ctx["peers"] = Peers(display, Path(tmp))
            try:
                for case in args.cases.split(","):
                    results["cases"][case] = run_case(case, display, ctx, args.actions)
            finally:
                ctx["peers"].close()
    finally:
        results["at_end"] = os.getloadavg()[0]
        for process in burners:
            process.kill()
            process.wait(10)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=20)
    parser.add_argument(
        "--loads", default="0,2", help="runs beside this many CPU-bound processes each"
    )
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    parser.add_argument("--grace", type=float, help="viewfinder's SettleOptions.grace")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    runs = [run_all(args, int(load)) for load in args.loads.split(",")]
    text = section(runs, args)
    print(text)
    if args.out:
        args.out.write_text(text)


def table(run: dict[str, Any], contenders: list[str], actions: int) -> list[str]:
    loaded = "no added load"
    if run["load"]:
        loaded = f"beside {run['load']} CPU-bound processes (`while 1: pass`)"
    head = "| case | " + " | ".join(f"{who} ms (final)" for who in contenders)
    head += " | " + " | ".join(f"{who} x" for who in contenders[1:]) + " |"
    rows = [
        f"#### {loaded.capitalize()}: load average {run['at_start']:.1f} at the start, "
        f"{run['at_end']:.1f} at the end",
        "",
        head,
        "|---" * (2 * len(contenders)) + "|",
    ]
    for case, result in run["cases"].items():
        samples = result["samples"]
        medians = {who: statistics.median(s["ms"] for s in samples[who]) for who in contenders}
        cells = [
            f"{medians[who]:.0f} ({sum(s['final'] for s in samples[who])}/{len(samples[who])})"
            for who in contenders
        ]
        ratios = [f"{medians[who] / medians[contenders[0]]:.2f}" for who in contenders[1:]]
        rows.append(f"| {case} | " + " | ".join(cells + ratios) + " |")
    cases = run["cases"]
    if "banner" in cases and "instant" in cases and contenders[0] == "viewfinder":
        banner = statistics.median(s["ms"] for s in cases["banner"]["samples"]["viewfinder"])
        alone = statistics.median(s["ms"] for s in cases["instant"]["samples"]["viewfinder"])
        rows += [
            "",
            f"viewfinder's clicks beside the banner: {banner / alone:.2f}x its clicks "
            "without it (target ≤ 1.2x).",
        ]
    return rows


def section(runs: list[dict[str, Any]], args: Any) -> str:
    contenders = args.contenders.split(",")
    lines = [
        "## Settle side by side: viewfinder, the reference loop, pyautogui, an mss poll loop",
        "",
        f"`uv run python benchmarks/settle_peers.py --actions {args.actions} --loads "
        f"{args.loads}`"
        + (f" (`--grace {args.grace}`)" if args.grace is not None else "")
        + f": one 1920x1080 Xvfb, {os.cpu_count()} cores (the load average at each part's "
        "start and end is given with it), contenders interleaved (their order turns each "
        "round), each action answered "
        "with a 1024x768 PNG. Median ms from before the action to the PNG in hand (final "
        f"frames of {args.actions}); x: the contender's median over viewfinder's. "
        "reference: xdotool, a fixed 2 s sleep, scrot, convert. pyautogui: `click` with its "
        "0.1 s pause, a fixed 0.5 s sleep, `screenshot()`, resized. mss poll: the same click, "
        "then an mss grab every 0.1 s until two in a row are equal. Cases: no change (a click "
        "on a bare spot), instant (the panel at once), pressed (Tk's relief at once, the "
        "panel 250 ms later), typing (11 characters), spinner (an arc turning every 30 ms "
        "for 1 s, its 20th frame 100 ms late, then the panel), banner (instant clicks while "
        "another app's 300x100 banner changes colour every second). After viewfinder's action "
        "the next contender waits 0.6 s (untimed), so its change is not taken for a late "
        "effect of viewfinder's action.",
    ]
    for run in runs:
        lines += ["", *table(run, contenders, args.actions)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
