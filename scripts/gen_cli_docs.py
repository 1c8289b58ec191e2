"""Write docs/cli.md, the reference of every ``viewfinder`` command, from the commands.

``make docs`` runs it; a test fails when docs/cli.md is out of date.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from viewfinder.cli.app import build_app

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "cli.md"

HEADER = """# Command reference

Every `viewfinder` command with its options, generated from the commands themselves by
`make docs` (a test keeps this page in sync). Installed plugins add their own commands;
this page lists those of the viewfinder distributions. Errors exit with status 1, misused
options with 2; commands that report a verdict document their other statuses.
"""


def _option_row(param: Any) -> str:
    names = ", ".join(f"`{name}`" for name in [*param.opts, *param.secondary_opts])
    help_text = " ".join((getattr(param, "help", None) or "").split())
    default = param.default
    if param.is_flag or default in (None, (), []) or callable(default):
        shown = ""
    else:
        shown = f" (default: `{default}`)"
    return f"| {names} | {help_text}{shown} |"


def _describe(command: Any, path: list[str], out: list[str]) -> None:
    name = " ".join(path)
    params = [p for p in command.params if p.name not in ("help",)]
    arguments = [p for p in params if p.param_type_name == "argument"]
    options = [p for p in params if p.param_type_name == "option"]
    usage = " ".join([name, *(p.name.upper() for p in arguments)])
    if options:
        usage += " [OPTIONS]"
    if getattr(command, "commands", None):
        usage += " COMMAND"
    out += [f"## {name}", "", f"`{usage}`", ""]
    help_text = (command.help or "").strip()
    if help_text:
        out += [help_text, ""]
    if options:
        out += ["| option | meaning |", "|---|---|"]
        out += [_option_row(p) for p in options]
        out.append("")
    for sub_name in sorted(getattr(command, "commands", {}) or {}):
        sub = command.commands[sub_name]
        if hasattr(sub, "load"):  # registered lazily: the reference needs its options
            sub = sub.load()
        if not getattr(sub, "hidden", False):
            _describe(sub, [*path, sub_name], out)


def render() -> str:
    out = [HEADER]
    _describe(typer.main.get_command(build_app()), ["viewfinder"], out)
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if TARGET.read_text() != text:
            print("docs/cli.md is out of date: run `make docs`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
