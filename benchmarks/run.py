"""Run every benchmark side by side and stitch docs/benchmarks.md from their sections.

Each benchmark script writes one markdown section to benchmarks/results/<name>.md.
``make bench`` runs them all (``--only capture,cache`` for a subset) and joins the
sections, with the machine they ran on, into docs/benchmarks.md. A benchmark that was
not run keeps the section docs/benchmarks.md already has (each section is marked with
the name of its script).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
BENCHMARKS = [
    "capture",
    "startup",
    "codeenv",
    "codeenv_load",
    "isolation",
    "recorder",
    "cache",
    "browser",
    "browser_timeouts",
    "tui",
    "desktop",
    "text_input",
    "viewer",
    "viewer_memory",
    "mcp",
    "scale",
    "elements",
    "page_elements",
    "atspi_read",
    "recorder_elements",
    "healing",
    "settle_ping",
    "browser_toolset",
    "settle_peers",
    "tasks",
]
DOC = ROOT / "docs" / "benchmarks.md"
MARKER = "<!-- section: {} -->"

HEADER = """# Benchmarks

Measured, not guessed. Every table compares its contenders side by side in one run on
one machine, so the ratios matter more than the milliseconds (machines here are shared
and noisy). Regenerate with `make bench`; each section comes from the script named in
its heading.
"""


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"Machine: {os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; run {time.strftime('%Y-%m-%d')}."
    )


def published_sections() -> dict[str, str]:
    """The sections docs/benchmarks.md has now, by benchmark name."""
    found: dict[str, str] = {}
    text = DOC.read_text() if DOC.exists() else ""
    for name in BENCHMARKS:
        start = text.find(MARKER.format(name))
        if start < 0:
            continue
        start += len(MARKER.format(name))
        end = text.find("<!-- section: ", start)
        found[name] = text[start : end if end >= 0 else len(text)].strip()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated benchmark names")
    parser.add_argument("--no-run", action="store_true", help="only stitch existing results")
    args = parser.parse_args()
    wanted = args.only.split(",") if args.only else BENCHMARKS
    RESULTS.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in wanted:
        script = ROOT / "benchmarks" / f"{name}.py"
        if not script.exists():
            print(f"-- {name}: no benchmarks/{name}.py yet")
            continue
        if args.no_run:
            continue
        print(f"-- {name}", flush=True)
        out = RESULTS / f"{name}.md"
        code = subprocess.call([sys.executable, str(script), "--out", str(out)], cwd=ROOT)
        if code:
            failed.append(name)
    previous = published_sections()
    sections = [HEADER, machine(), ""]
    for name in BENCHMARKS:
        result = RESULTS / f"{name}.md"
        text = result.read_text().strip() if result.exists() else previous.get(name)
        if text:
            sections += [MARKER.format(name), text + "\n"]
    DOC.write_text("\n".join(sections))
    print(f"wrote docs/benchmarks.md{' (failed: ' + ', '.join(failed) + ')' if failed else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
