"""``viewfinder elements``: what is on a screen, named, as a tree."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from viewfinder.cli.options import JsonOutput
from viewfinder.core import Element, ElementTree, get_element_source, snapshot_text


def _lines(element: Element, depth: int) -> list[str]:
    parts = [element.ref, element.role]
    if element.name:
        parts.append(json.dumps(element.name, ensure_ascii=False))
    if element.value:
        parts.append("=" + json.dumps(element.value, ensure_ascii=False))
    if element.box is not None:
        box = element.box
        parts.append(f"@{box.x},{box.y} {box.width}x{box.height}")
    else:
        parts.append("(off screen)")
    lines = ["  " * depth + " ".join(parts)]
    for child in element.children:
        lines += _lines(child, depth + 1)
    return lines


def tree_text(tree: ElementTree) -> str:
    """Every element of ``tree``, one a line, indented under its parent."""
    units = "page pixels" if tree.coordinates == "page" else "screen pixels"
    lines = [f"{tree.count()} elements from {tree.source} (boxes in {units})"]
    for root in tree.roots:
        lines += _lines(root, 0)
    if tree.reason:
        lines.append(f"note: {tree.reason}")
    return "\n".join(lines)


def elements_command(
    display: Annotated[
        str | None, typer.Option("--display", "-d", help="X display to read, e.g. :1.")
    ] = None,
    url: Annotated[str | None, typer.Option("--url", help="Page to open and read.")] = None,
    cdp_url: Annotated[
        str | None,
        typer.Option("--cdp-url", help="A running browser's DevTools URL (read its page)."),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            "-s",
            help="Element source by name (atspi, cdp); default: "
            "atspi for a display, cdp for a page.",
        ),
    ] = None,
    snapshot: Annotated[
        bool,
        typer.Option(
            "--snapshot",
            help="Print the compact snapshot a model gets (visible, "
            "interactive or named elements only).",
        ),
    ] = False,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=20, help="Token budget of --snapshot.")
    ] = 2000,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds one read may take.")
    ] = 5.0,
    as_json: JsonOutput = False,
) -> None:
    """Print the accessibility tree of an X display's apps or of a page.

    Each line: ref, role, "name", ="value", @X,Y WIDTHxHEIGHT. Apps that expose no tree
    (Tk) are named in a note; the tree is then empty, which is not an error.
    """
    if display is not None and (url is not None or cdp_url is not None):
        raise typer.BadParameter(
            "read either an X display (--display) or a page (--url/--cdp-url), not both",
            param_hint="--display",
        )
    options: dict[str, object] = {"timeout": timeout}
    if display is not None:
        options["display"] = display
    if url is not None:
        options["url"] = url
    if cdp_url is not None:
        options["cdp_url"] = cdp_url
    with get_element_source(source, **options) as reader:
        tree = reader.read()
    if as_json:
        typer.echo(tree.model_dump_json(indent=2))
    elif snapshot:
        typer.echo(snapshot_text(tree, max_tokens=max_tokens))
    else:
        typer.echo(tree_text(tree))
