"""`viewfinder elements`, in-process with CliRunner, on a real page and a real display."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from viewfinder.cdp.testing import serve_pages
from viewfinder.cli.app import build_app
from viewfinder.core import ElementTree
from viewfinder.xvfb import Display

runner = CliRunner()
PAGE = """<!doctype html><title>Form</title><body style="margin:0">
<button style="position:absolute;left:10px;top:20px;width:100px;height:30px">Save</button>
<input aria-label="Name" value="Ada" style="position:absolute;left:10px;top:80px"></body>"""


def test_elements_of_a_page_as_a_tree_a_snapshot_and_json() -> None:
    with serve_pages({"/form": PAGE}) as base:
        url = f"{base}/form"
        tree_text = runner.invoke(build_app(), ["elements", "--url", url])
        snapshot = runner.invoke(build_app(), ["elements", "--url", url, "--snapshot"])
        as_json = runner.invoke(build_app(), ["elements", "--url", url, "--json"])
    assert tree_text.exit_code == 0, tree_text.output
    assert "(boxes in page pixels)" in tree_text.output.splitlines()[0]
    assert any(
        line.strip().endswith('button "Save" @10,20 100x30')
        for line in tree_text.output.splitlines()
    )
    assert snapshot.exit_code == 0 and snapshot.output.startswith("elements (cdp, page pixels;")
    assert 'textbox "Name" ="Ada"' in snapshot.output
    tree = ElementTree.model_validate_json(as_json.output)
    assert [e.name for e in tree.walk() if e.role == "button"] == ["Save"]
    assert json.loads(as_json.output)["coordinates"] == "page"


def test_elements_of_a_display_without_buses_prints_the_reason_and_succeeds() -> None:
    with Display(320, 200) as display:
        result = runner.invoke(build_app(), ["elements", "--display", display.name])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "0 elements from atspi (boxes in screen pixels)"
    assert "has no accessibility bus" in result.output


def test_a_display_and_a_page_at_once_is_a_usage_error() -> None:
    result = runner.invoke(build_app(), ["elements", "--display", ":1", "--url", "http://x"])
    assert result.exit_code == 2
    assert "not both" in result.output


def test_an_unknown_source_is_one_line_naming_the_registered() -> None:
    result = runner.invoke(build_app(), ["elements", "--source", "nope", "--display", ":1"])
    assert result.exit_code == 1
    assert "unknown element source 'nope'" in result.output and "atspi" in result.output
