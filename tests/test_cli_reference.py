"""docs/cli.md is generated from the commands; it must match them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_cli_reference_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    current = (ROOT / "docs" / "cli.md").read_text()
    assert current == module.render(), "docs/cli.md is out of date: run `make docs`"
    for command in (
        "capture",
        "backends",
        "plugins",
        "display",
        "record",
        "cache",
        "browser",
        "tui",
    ):
        assert f"## viewfinder {command}" in current
