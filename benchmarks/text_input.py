"""Typing text into a real Tk Text: how long it takes and whether every character
arrives, viewfinder's XTest typing against ``xdotool type`` side by side.

    uv run python benchmarks/text_input.py [--out FILE.md]

Texts: Latin text with a few characters off the keymap (é, ½, €, 東京), at 1000,
10000 and 100000 characters; an address in Japanese (31 distinct characters, more
than Xvfb's ~18 spare keycodes); 1500 random CJK characters. Each is typed into
``tk_text_probe.py`` (a Tk Text that reports its content on F12) on an Xvfb of its
own; "typed" is when the call returned, "in the app" when the app reported the
text, "exact" whether the Text holds what was typed. xdotool runs with
``--delay 0`` (its default 12 ms per key would dominate) and only up to 10000
characters.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from viewfinder.xvfb import Display

HERE = Path(__file__).parent
PROBE = HERE.parent / "plugins" / "xvfb" / "tests" / "tk_text_probe.py"
LINE = "The quick brown fox jumps over the lazy dog; Grüße, ½ € 東京\n"
ADDRESS = "東京都渋谷区神南一丁目十九番十一号の会議室で打ち合わせをします"


@dataclass
class Row:
    text: str
    chars: int
    tool: str
    typed_s: float
    in_app_s: float
    exact: bool


def texts() -> list[tuple[str, str]]:
    chooser = random.Random(27)
    kanji = "".join(chr(chooser.randint(0x4E00, 0x4FFF)) for _ in range(1500))
    cjk = "\n".join(kanji[start : start + 40] for start in range(0, len(kanji), 40))
    latin = [(f"Latin, {n} chars", (LINE * (n // len(LINE) + 1))[:n]) for n in (1000, 10_000)]
    return [
        *latin,
        ("Latin, 100000 chars", (LINE * (100_000 // len(LINE) + 1))[:100_000]),
        ("Japanese address", ADDRESS),
        ("1500 random CJK", cjk),
    ]


def measure(name: str, text: str, tool: str) -> Row:
    with Display(640, 480) as display:
        probe = subprocess.Popen(
            [sys.executable, str(PROBE)], env=display.env(), stdout=subprocess.PIPE, text=True
        )
        assert probe.stdout is not None
        try:
            assert json.loads(probe.stdout.readline())["type"] == "ready"
            started = time.perf_counter()
            if tool == "viewfinder":
                display.input.type(text)
            else:
                with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt") as file:
                    file.write(text)
                    file.flush()
                    subprocess.run(
                        ["xdotool", "type", "--delay", "0", "--file", file.name],
                        env=display.env(),
                        check=True,
                        timeout=600,
                    )
            typed = time.perf_counter() - started
            display.input.key("F12")
            report = json.loads(probe.stdout.readline())
            in_app = time.perf_counter() - started
        finally:
            probe.kill()
            probe.wait()
    return Row(name, len(text), tool, typed, in_app, report.get("text") == text)


def report(rows: list[Row]) -> str:
    load = os.getloadavg()[0]
    lines = [
        "## Typing",
        "",
        "Text typed into a Tk Text on Xvfb, viewfinder's `XInput.type` and `xdotool type "
        f"--delay 0` side by side; Python {platform.python_version()}, {os.cpu_count()} "
        f"CPUs, load average {load:.2f} at the end; `uv run python benchmarks/text_input.py`. "
        "Exact: the Text holds what was typed.",
        "",
        "| text | chars | tool | typed | in the app | chars/s (in the app) | exact |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.text} | {row.chars} | {row.tool} | {row.typed_s:.2f} s | "
            f"{row.in_app_s:.2f} s | {row.chars / row.in_app_s:.0f} | "
            f"{'yes' if row.exact else 'no'} |"
        )
    lines += [
        "",
        "Characters off the keymap are mapped to Xvfb's ~18 spare keycodes as the text "
        "goes on. Before each change viewfinder waits until the app answered a "
        "`_NET_WM_PING` sent after the keys before it, and pings again after the change: "
        "exact, at the price of two round trips to the app per 9 new characters, which "
        "is what the random CJK text pays. xdotool remaps without waiting.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "text_input.md")
    args = parser.parse_args()
    rows = []
    for name, text in texts():
        rows.append(measure(name, text, "viewfinder"))
        if len(text) <= 10_000:
            rows.append(measure(name, text, "xdotool"))
    text = report(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
