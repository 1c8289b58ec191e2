"""Start-up benchmark: the `viewfinder` command against typer alone, as whole processes.

    uv run python benchmarks/startup.py [--repeat N] [--out benchmarks/results/startup.md]

Each command runs as a fresh process, round-robin with the others (so load bursts hit
all of them alike), ``--repeat`` times after one warm-up round; wall time from spawn to
exit. Compared:

- ``viewfinder --version`` against ``python -c "import typer"`` (target: at most 2x);
- ``viewfinder --help`` against ``--help`` of a two-command typer app (target: at most
  1.5x);
- ``viewfinder capture --backend xvfb`` on a display, for scale, and the modules it
  imports from the packages it does not use (target: none).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from viewfinder.xvfb import Display

HERE = Path(__file__).parent
VIEWFINDER = str(Path(sys.executable).with_name("viewfinder"))
TWO_COMMANDS = textwrap.dedent(
    '''
    import typer

    app = typer.Typer()


    @app.command()
    def one(count: int = 1) -> None:
        """The first command."""


    @app.command()
    def two(name: str = "") -> None:
        """The second command."""


    app()
    '''
)
UNUSED_PACKAGES = ("cache", "codeenv", "recorder", "browser", "tui", "server")
MODULES_OF_A_CAPTURE = textwrap.dedent(
    """
    import atexit, json, sys
    atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
    sys.argv = ["viewfinder", *sys.argv[1:]]
    from viewfinder.cli.app import main
    main()
    """
)


def time_round_robin(commands: dict[str, list[str]], repeat: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for round_number in range(repeat + 1):
        for name, argv in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            if round_number:  # the first round warms the file cache
                samples[name].append((time.perf_counter() - start) * 1000)
    return samples


def unused_modules(display: str, out: Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", MODULES_OF_A_CAPTURE, "capture", "--backend", "xvfb",
         "--display", display, "-o", str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    modules = json.loads(result.stderr.strip().splitlines()[-1])
    return [
        name
        for name in modules
        if name.count(".") >= 2
        and name.split(".")[1] in UNUSED_PACKAGES
        and not name.endswith(".plugin")
    ]


def render(samples: dict[str, list[float]], repeat: int, unused: list[str]) -> str:
    median = {name: statistics.median(values) for name, values in samples.items()}
    version = median["viewfinder --version"] / median['python -c "import typer"']
    helps = median["viewfinder --help"] / median["two-command typer app --help"]
    lines = [
        "## Start-up: the viewfinder command",
        "",
        f"`uv run python benchmarks/startup.py --repeat {repeat}`: each command as a fresh "
        f"process, {repeat} rounds round-robin after a warm-up round; wall ms from spawn "
        f"to exit. {os.cpu_count()} cores. Sub-commands are registered by import path and "
        "imported only when they run.",
        "",
        "| command | median ms | min-max ms |",
        "|---|---:|---:|",
    ]
    for name, values in samples.items():
        lines.append(f"| `{name}` | {median[name]:.0f} | {min(values):.0f}-{max(values):.0f} |")
    lines += [
        "",
        f'- `viewfinder --version`: {version:.2f}x `python -c "import typer"` (target ≤ 2x: '
        f"{'met' if version <= 2 else 'missed'}).",
        f"- `viewfinder --help`: {helps:.2f}x a two-command typer app's `--help` (target ≤ "
        f"1.5x: {'met' if helps <= 1.5 else 'missed'}).",
        f"- `viewfinder capture --backend xvfb` imported {len(unused)} modules of the "
        f"packages it does not use ({', '.join(UNUSED_PACKAGES)})"
        + (f": {', '.join(unused)}" if unused else "")
        + ".",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "startup.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder, Display(640, 480) as display:
        app = Path(folder) / "two_commands.py"
        app.write_text(TWO_COMMANDS)
        shot = str(Path(folder) / "shot.png")
        commands = {
            "viewfinder --version": [VIEWFINDER, "--version"],
            'python -c "import typer"': [sys.executable, "-c", "import typer"],
            "viewfinder --help": [VIEWFINDER, "--help"],
            "two-command typer app --help": [sys.executable, str(app), "--help"],
            "viewfinder capture --backend xvfb": [
                VIEWFINDER, "capture", "--backend", "xvfb", "--display", display.name,
                "-o", shot,
            ],
        }  # fmt: skip
        samples = time_round_robin(commands, args.repeat)
        unused = unused_modules(display.name, Path(shot))
    section = render(samples, args.repeat, unused)
    print(section)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
