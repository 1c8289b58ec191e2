"""Option types shared by the viewfinder sub-commands."""

from __future__ import annotations

from typing import Annotated

import typer

JsonOutput = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON instead of a table.")
]
BackendName = Annotated[
    str | None,
    typer.Option(
        "--backend",
        "-b",
        help="Capture backend by name (see `viewfinder backends`); default: "
        "$VIEWFINDER_BACKEND or the best available.",
    ),
]
BackendOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-O",
        help="Backend option KEY=VALUE, repeatable (display=:1, monitor=2, url=http://..., "
        "full_page=true).",
    ),
]


def parse_backend_options(pairs: list[str] | None) -> dict[str, object]:
    """Turn ``KEY=VALUE`` strings into keyword arguments (ints and booleans converted)."""
    options: dict[str, object] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--option")
        options[key.strip().replace("-", "_")] = _convert(raw.strip())
    return options


def _convert(raw: str) -> object:
    lowered = raw.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    try:
        return int(raw)
    except ValueError:
        return raw
